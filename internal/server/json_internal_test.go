package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestWriteJSONNeverAnswersAnEmptyOK: a value that cannot be encoded (a
// time past year 9999, as a store could hold from before times were
// checked) is answered with a 500 whose JSON body says why, never with a
// 200 and an empty body.
func TestWriteJSONNeverAnswersAnEmptyOK(t *testing.T) {
	rec := httptest.NewRecorder()
	writeJSON(rec, http.StatusOK, map[string]any{"run_at": time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)})
	var body errorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("body %q is not a JSON error: %v", rec.Body, err)
	}
	if rec.Code != http.StatusInternalServerError || body.Status != rec.Code || !strings.Contains(body.Error, "year outside of range") {
		t.Fatalf("answer %d %+v, want a 500 naming the encoding error", rec.Code, body)
	}
}

// TestRefuseNulls: null is refused wherever the document marks no field
// nullable, named by its field, and kept inside the caller's own JSON.
func TestRefuseNulls(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"lease_ms": null, "attempts": []}`, "lease_ms: null"},
		{`{"jobs": [{"kind": "k", "args": {"n": 1}, "unique_states": null}]}`, "jobs.unique_states: null"},
		{`{"jobs": [{"kind": "k", "args": {"a": {"b": null}}, "metadata": {"x": null}}, null]}`, "jobs: null"},
		{`{"results": [{"id": 1, "result": null}, {"id": 2, "retry_at": null}]}`, "results.retry_at: null"},
		{`{"a": {"b": {}}, "c": null}`, "c: null"},
		{`null`, "request body: null"},
		{`{"jobs": [{"kind": "null", "args": null, "metadata": null}], "x": [[], {}]}`, ""},
		{`{"a": "null"}`, ""},
		{`{"a": nul`, ""}, // invalid JSON is the decoder's to report
	} {
		err := refuseNulls([]byte(c.body))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.body, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.body, err, c.want)
		}
	}
}
