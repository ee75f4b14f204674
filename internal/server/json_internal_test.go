package server

import (
	"strings"
	"testing"
)

// TestRefuseNulls: null is refused wherever the document marks no field
// nullable, named by its field, and kept inside the caller's own JSON.
func TestRefuseNulls(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"lease_ms": null, "attempts": []}`, "lease_ms: null"},
		{`{"jobs": [{"kind": "k", "args": 1, "unique_states": null}]}`, "jobs.unique_states: null"},
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
