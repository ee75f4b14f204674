package server_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/droverhq/drover/internal/app/server"
)

// TestOpenAPINoDuplicateKeys checks that no object in openapi.json names a
// key twice: encoding/json and most generators silently keep the last one,
// so a duplicate drops part of the description without any error.
func TestOpenAPINoDuplicateKeys(t *testing.T) {
	if err := checkDuplicateKeys(server.OpenAPI); err != nil {
		t.Fatal(err)
	}
}

// TestCheckDuplicateKeys checks that the walk finds a duplicate at any depth
// and accepts equal keys in different objects.
func TestCheckDuplicateKeys(t *testing.T) {
	for doc, dup := range map[string]bool{
		`{"a":1,"b":{"a":2}}`:                      false,
		`{"a":[{"x":1},{"x":2}],"b":"a"}`:          false,
		`{"a":1,"a":2}`:                            true,
		`{"p":{"r":{"409":{},"404":{},"409":{}}}}`: true,
		`[{"k":[{"z":1,"z":1}]}]`:                  true,
	} {
		err := checkDuplicateKeys([]byte(doc))
		if (err != nil) != dup {
			t.Errorf("%s: got %v, want duplicate %v", doc, err, dup)
		}
	}
}

// checkDuplicateKeys walks the JSON document's tokens and reports the first
// key that occurs twice in one object, with its path.
func checkDuplicateKeys(doc []byte) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := walkValue(dec, "$"); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("trailing data after the document: %v", err)
	}
	return nil
}

// walkValue reads one value from dec, checking every object in it.
func walkValue(dec *json.Decoder, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			key := k.(string)
			if seen[key] {
				return fmt.Errorf("%s: key %q occurs twice", path, key)
			}
			seen[key] = true
			if err := walkValue(dec, path+"."+key); err != nil {
				return err
			}
		}
		_, err = dec.Token() // the closing brace
		return err
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := walkValue(dec, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	return nil
}

// TestEveryOperationDeclaresSecurity walks openapi.json: every operation
// that needs a token says so (security: bearer), so that generated clients
// send it, and the public ones say they need none (security: []). Before,
// the bulk operations declared nothing, and clients generated from the
// document called them without a token.
func TestEveryOperationDeclaresSecurity(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(server.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for path, item := range doc.Paths {
		for method, raw := range item {
			if method == "parameters" {
				continue
			}
			var op struct {
				Security *[]map[string][]string `json:"security"`
				Scopes   []string               `json:"x-drover-scopes"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			n++
			switch {
			case op.Security == nil:
				t.Errorf("%s %s declares no security", method, path)
			case publicPaths[path] && len(*op.Security) != 0:
				t.Errorf("%s %s is public but declares security %v", method, path, *op.Security)
			case !publicPaths[path] && (len(*op.Security) != 1 || (*op.Security)[0]["bearer"] == nil):
				t.Errorf("%s %s needs a token but declares security %v, want [{\"bearer\": []}]", method, path, *op.Security)
			case !publicPaths[path] && len(op.Scopes) == 0:
				t.Errorf("%s %s needs a token but lists no x-drover-scopes", method, path)
			}
		}
	}
	if n < 40 {
		t.Fatalf("walked %d operations, want every one of the document", n)
	}
}
