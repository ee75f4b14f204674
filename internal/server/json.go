package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// errorBody is every error's JSON form.
type errorBody struct {
	Error  string `json:"error"`
	Status int    `json:"status"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorBody{Error: msg, Status: status})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v) // the status is sent; a failed write only means the client left
}

// decode reads a JSON request body into v, strictly: the body must be JSON,
// one object, and name no field the endpoint does not know, so that a
// misspelt option is an error rather than silently ignored.
func decode(r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); !isJSON(ct) {
		return &apiError{status: http.StatusUnsupportedMediaType,
			msg: fmt.Sprintf("content type %q: send application/json", ct)}
	}
	dec := json.NewDecoder(r.Body)
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
		return badRequest("%s: want %s, got JSON %s", field, typ.Type, typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return badRequest("request body: unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return badRequest("request body: %v", err)
}
