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
	"strings"
	"time"
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
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n')) // the status is sent; a failed write only means the client left
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
	if err := refuseNulls(body); err != nil {
		return err
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
	return nil
}

// anyJSON are the fields whose values are the caller's own JSON (a topic
// message's payload among them), in which null is a value like any other.
var anyJSON = map[string]bool{"args": true, "result": true, "metadata": true, "payload": true}

// refuseNulls rejects a null anywhere in a request body but inside the
// caller's own JSON (anyJSON). Go decodes null into a field as if the
// field were absent, so without this check "lease_ms": null would quietly
// mean the default, while the document, which marks no request field
// nullable, says it is invalid; the two must agree. A body that is not
// JSON is left to the decoder, whose errors say more.
func refuseNulls(body []byte) error {
	if !bytes.Contains(body, []byte("null")) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	type frame struct {
		object bool
		key    string // the member whose value is read next, in an object
		want   bool   // an object expects a key next
	}
	var stack []frame
	field := func() string {
		var parts []string
		for _, f := range stack {
			if f.object {
				parts = append(parts, f.key)
			}
		}
		return strings.Join(parts, ".")
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // the end, or invalid JSON for the decoder to word
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].want {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:n-1]
				if n > 1 && stack[n-2].object {
					stack[n-2].want = true
				}
				continue
			}
			key, _ := tok.(string)
			stack[n-1].key, stack[n-1].want = key, false
			if anyJSON[key] {
				var skip json.RawMessage
				if err := dec.Decode(&skip); err != nil {
					return nil
				}
				stack[n-1].want = true
			}
			continue
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{':
				stack = append(stack, frame{object: true, want: true})
				continue
			case '[':
				stack = append(stack, frame{})
				continue
			default: // ']'; '}' is handled with the keys
				stack = stack[:len(stack)-1]
			}
		case nil:
			name := field()
			if name == "" {
				name = "request body"
			}
			return badRequest("%s: null is not allowed; leave the field out for its default", name)
		}
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].want = true
		}
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
