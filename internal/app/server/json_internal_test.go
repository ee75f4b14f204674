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

// TestCheckBody: null is refused wherever the document marks no field
// nullable, and a key given twice in one object anywhere, each named by
// its field; both are kept inside the caller's own JSON (args, metadata,
// result, payload).
func TestCheckBody(t *testing.T) {
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
		{`{"queue": "a", "worker": "w", "queue": "b"}`, "queue: given twice"},
		{`{"queue": "a", "qu\u0065ue": "b"}`, "queue: given twice"},
		{`{"jobs": [{"kind": "k", "args": {}}, {"kind": "k", "args": {}, "kind": "j"}]}`, "jobs.kind: given twice"},
		{`{"claim": {"worker_labels": {"zone": "a", "rack": "1", "zone": "b"}}}`, "claim.worker_labels.zone: given twice"},
		{`{"jobs": [{"kind": "k", "args": {"a": 1, "a": 2}, "metadata": {"m": [1, {"x": 1, "x": 2}]}}]}`, ""},
		{`{"a": {"x": 1}, "b": {"x": 1}, "c": [{"x": 1}, {"x": 2}]}`, ""},
		{`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k3":0}`, "k3: given twice"},
		{`{"payload": "x\"}{", "key": "k", "payload_base64": "eA=="}`, ""},
	} {
		err := checkBody([]byte(c.body))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.body, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.body, err, c.want)
		}
	}
}
