package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// errorBody is every error's JSON form.
type errorBody struct {
	Error  string `json:"error"`
	Status int    `json:"status"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorBody{Error: msg, Status: status})
}

// writeJSON encodes v before it sends the status, so that a value that
// cannot be encoded (a stored time past year 9999 has no JSON form) is
// answered with a 500 naming the error instead of a 200 with an empty
// body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body, _ = json.Marshal(errorBody{Error: "internal error: cannot encode the answer as JSON: " + err.Error(), Status: status})
	}
	writeBody(w, status, append(body, '\n'))
}

// writeBody sends body, a JSON answer with its final newline, with
// status.
func writeBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body) // the status is sent; a failed write only means the client left
}

// decode reads a JSON request body into v, strictly: the body must be JSON,
// one object, and name no field the endpoint does not know, so that a
// misspelt option is an error rather than silently ignored.
func decode(r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); !isJSON(ct) {
		return &apiError{status: http.StatusUnsupportedMediaType,
			msg: fmt.Sprintf("content type %q: send application/json", ct)}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err // over the size limit: a MaxBytesError
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return badRequest("request body: unexpected data after the JSON object")
	}
	return checkBody(body)
}

// anyJSON are the fields whose values are the caller's own JSON (a topic
// message's payload among them), in which null is a value like any other
// and whose keys are the caller's business.
var anyJSON = map[string]bool{"args": true, "result": true, "metadata": true, "payload": true}

// checkBody refuses, in a request body the decoder took, what Go's
// decoding hides:
//
//   - a null anywhere but inside the caller's own JSON (anyJSON). Go
//     decodes null into a field as if the field were absent, so without
//     this check "lease_ms": null would quietly mean the default, while the
//     document, which marks no request field nullable, says it is invalid;
//     the two must agree.
//   - a key given twice in one object, outside the caller's own JSON. Go
//     keeps the last one, while a proxy, a log or another parser in front
//     may read the first: the request must mean one thing to all of them.
//
// It walks the bytes once, without decoding values. Input that is not
// JSON is left to the decoder, whose errors say more.
func checkBody(body []byte) error {
	c := bodyChecker{b: body}
	err := c.value("")
	if err == errNotJSON {
		return nil
	}
	return err
}

// errNotJSON stops a bodyChecker on input that is not JSON.
var errNotJSON = errors.New("not JSON")

// bodyChecker is checkBody's walk: b[i:] is what is left to read.
type bodyChecker struct {
	b []byte
	i int
}

func (c *bodyChecker) ws() {
	for c.i < len(c.b) && (c.b[c.i] == ' ' || c.b[c.i] == '\t' || c.b[c.i] == '\n' || c.b[c.i] == '\r') {
		c.i++
	}
}

// peek returns the next byte after white space, 0 at the end.
func (c *bodyChecker) peek() byte {
	c.ws()
	if c.i >= len(c.b) {
		return 0
	}
	return c.b[c.i]
}

// value reads one value; field names it in errors, "" for the body.
func (c *bodyChecker) value(field string) error {
	switch c.peek() {
	case '{':
		return c.object(field)
	case '[':
		c.i++
		if c.peek() == ']' {
			c.i++
			return nil
		}
		for {
			if err := c.value(field); err != nil {
				return err
			}
			switch c.peek() {
			case ',':
				c.i++
			case ']':
				c.i++
				return nil
			default:
				return errNotJSON
			}
		}
	case '"':
		_, err := c.str()
		return err
	case 'n':
		if !bytes.HasPrefix(c.b[c.i:], []byte("null")) {
			return errNotJSON
		}
		if field == "" {
			field = "request body"
		}
		return badRequest("%s: null is not allowed; leave the field out for its default", field)
	case 0:
		return errNotJSON
	}
	c.scalar() // a number, true or false
	return nil
}

// object reads an object whose opening brace is next.
func (c *bodyChecker) object(field string) error {
	c.i++
	// Most objects have a few keys: a slice is searched until a map
	// pays (a map of labels, say, or of a nack's failures).
	var few []string
	var many map[string]bool
	if c.peek() == '}' {
		c.i++
		return nil
	}
	for {
		if c.peek() != '"' {
			return errNotJSON
		}
		key, err := c.str()
		if err != nil {
			return err
		}
		name := key
		if field != "" {
			name = field + "." + key
		}
		if slices.Contains(few, key) || many[key] {
			return badRequest("%s: given twice; send each key once", name)
		}
		if many != nil {
			many[key] = true
		} else if few = append(few, key); len(few) > 16 {
			many = map[string]bool{}
			for _, k := range few {
				many[k] = true
			}
		}
		if c.peek() != ':' {
			return errNotJSON
		}
		c.i++
		if anyJSON[key] {
			err = c.skip()
		} else {
			err = c.value(name)
		}
		if err != nil {
			return err
		}
		switch c.peek() {
		case ',':
			c.i++
		case '}':
			c.i++
			return nil
		default:
			return errNotJSON
		}
	}
}

// str reads a string whose opening quote is next and returns its value.
func (c *bodyChecker) str() (string, error) {
	start := c.i
	escaped := false
	for c.i++; c.i < len(c.b); c.i++ {
		switch c.b[c.i] {
		case '\\':
			escaped = true
			c.i++
		case '"':
			c.i++
			raw := c.b[start:c.i]
			if !escaped {
				return string(raw[1 : len(raw)-1]), nil
			}
			var s string
			if json.Unmarshal(raw, &s) != nil {
				return "", errNotJSON
			}
			return s, nil
		}
	}
	return "", errNotJSON
}

// skip reads past one value without looking into it.
func (c *bodyChecker) skip() error {
	switch c.peek() {
	case '"':
		_, err := c.str()
		return err
	case '{', '[':
		for depth := 0; c.i < len(c.b); {
			switch c.b[c.i] {
			case '"':
				if _, err := c.str(); err != nil {
					return err
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					c.i++
					return nil
				}
			}
			c.i++
		}
		return errNotJSON
	case 0:
		return errNotJSON
	}
	c.scalar()
	return nil
}

// scalar reads past a number, true, false or null.
func (c *bodyChecker) scalar() {
	for c.i < len(c.b) && !strings.ContainsRune(",]} \t\n\r", rune(c.b[c.i])) {
		c.i++
	}
}

// isJSON reports whether a Content-Type header names JSON. A missing
// header does not: a browser's no-cors fetch of a Blob sends none.
func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// jsonError words a decoding error so that it names the field or the
// offset at fault.
func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return err
	case errors.Is(err, io.EOF):
		return badRequest("request body: empty, want a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("request body: JSON ends early")
	case errors.As(err, &syn):
		return badRequest("request body: invalid JSON at offset %d: %v", syn.Offset, syn)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "request body"
		}
		if typ.Type == timeType {
			return badRequest("%s: want an RFC 3339 time such as \"2026-05-01T09:30:00Z\" or \"2026-05-01T11:30:00.5+02:00\", got %s",
				field, typ.Value)
		}
		return badRequest("%s: want %s, got JSON %s", field, typ.Type, typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return badRequest("request body: unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return badRequest("request body: %v", err)
}

// jsonTime is a time field of a request. It decodes like time.Time, but a
// value that is not an RFC 3339 time fails as a type error, which the
// decoder fills in with the field's name, so that jsonError can name the
// field and the format; time.Time's own error names neither, only Go's
// layout string.
type jsonTime struct{ time.Time }

var timeType = reflect.TypeFor[time.Time]()

func (t *jsonTime) UnmarshalJSON(b []byte) error {
	if err := t.Time.UnmarshalJSON(b); err != nil {
		return &json.UnmarshalTypeError{Value: string(b), Type: timeType}
	}
	return nil
}

// jsonKind names the kind of a JSON value by its first byte, for errors
// about values of the wrong kind.
func jsonKind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// appendJSONString appends s as encoding/json writes a string. Printable
// ASCII other than the quote, the backslash and the characters it escapes
// for HTML (<, >, &) is copied as it is; a string holding anything else
// (a key in another script, a control character) goes through
// encoding/json. The claim and receive answers are written by hand with
// it, since their strings are nearly always plain.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
