// Package jsonmatch is jsonb's @> (containment) for stores without it:
// droversqlite registers it as an SQL function, so that the args filter of
// a job search matches on SQLite what it matches on PostgreSQL.
package jsonmatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
)

// JSONContains reports whether the JSON document doc contains pattern, as
// PostgreSQL's jsonb @> operator defines it, for stores that have no such
// operator (droversqlite registers it as an SQL function): an object
// contains another when it has each of the other's keys with a value that
// contains the other's; an array contains another when each element of the
// other is contained in some element of it, in any order, repeats allowed;
// scalars contain only an equal scalar (numbers by value: 1 and 1.0 are
// equal). As in PostgreSQL, an array at the top of doc also contains a
// scalar pattern that equals one of its elements; deeper down it does not.
func JSONContains(doc, pattern []byte) (bool, error) {
	d, err := decodeJSON(doc)
	if err != nil {
		return false, fmt.Errorf("document: %w", err)
	}
	p, err := decodeJSON(pattern)
	if err != nil {
		return false, fmt.Errorf("pattern: %w", err)
	}
	return ContainsJSONValue(d, p), nil
}

// ContainsJSONValue is JSONContains over values decoded with numbers as
// json.Number (DecodeJSONValue), so that a caller testing many documents
// against one pattern decodes the pattern once.
func ContainsJSONValue(doc, pattern any) bool {
	if arr, ok := doc.([]any); ok {
		switch pattern.(type) {
		case []any, map[string]any:
		default:
			for _, e := range arr {
				if scalarEqual(e, pattern) {
					return true
				}
			}
			return false
		}
	}
	return contains(doc, pattern)
}

func contains(doc, pattern any) bool {
	switch p := pattern.(type) {
	case map[string]any:
		d, ok := doc.(map[string]any)
		if !ok {
			return false
		}
		for k, pv := range p {
			dv, ok := d[k]
			if !ok || !contains(dv, pv) {
				return false
			}
		}
		return true
	case []any:
		d, ok := doc.([]any)
		if !ok {
			return false
		}
	next:
		for _, pv := range p {
			for _, dv := range d {
				if contains(dv, pv) {
					continue next
				}
			}
			return false
		}
		return true
	default:
		return scalarEqual(doc, pattern)
	}
}

// scalarEqual compares two decoded scalars as jsonb does.
func scalarEqual(a, b any) bool {
	switch b := b.(type) {
	case json.Number:
		a, ok := a.(json.Number)
		if !ok {
			return false
		}
		if a == b {
			return true
		}
		x, okx := new(big.Rat).SetString(string(a))
		y, oky := new(big.Rat).SetString(string(b))
		return okx && oky && x.Cmp(y) == 0
	case string:
		a, ok := a.(string)
		return ok && a == b
	case bool:
		a, ok := a.(bool)
		return ok && a == b
	case nil:
		return a == nil
	}
	return false
}

// DecodeJSONValue decodes one JSON value with numbers kept as
// json.Number, for ContainsJSONValue.
func DecodeJSONValue(b []byte) (any, error) { return decodeJSON(b) }

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}
