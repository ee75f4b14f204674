package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/server"
)

// TestCompactClaimAndFinish: a claim that asks for the compact form gets
// what its jobs share once (queue, state, owner, attempt, lease token) and
// each job's own fields in its entry; a compact finish applies shared's
// attempt, lease token and outcome to the results that lack them, a
// result's own values winning; both forms match openapi.json (b.call
// checks every exchange).
func TestCompactClaimAndFinish(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		var empty map[string]json.RawMessage
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/claim", map[string]any{"queue": "default", "worker": "w", "compact": true}).decode(t, &empty)
		if string(empty["shared"]) != "{}" || string(empty["jobs"]) != "[]" {
			t.Fatalf("empty compact claim = %v, want shared {} and jobs []", empty)
		}
		ids := b.enqueue(t,
			map[string]any{"kind": "k", "args": map[string]any{"n": 1}},
			map[string]any{"kind": "k", "args": map[string]any{"n": 2}},
			map[string]any{"kind": "k", "args": map[string]any{"n": 3}},
			map[string]any{"kind": "k2", "args": map[string]any{"n": 4}, "max_attempts": 3},
		)
		var out struct {
			Shared map[string]any   `json:"shared"`
			Jobs   []map[string]any `json:"jobs"`
		}
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/claim",
			map[string]any{"queue": "default", "worker": "py-1", "max": 10, "compact": true}).decode(t, &out)
		if len(out.Jobs) != 4 {
			t.Fatalf("claimed %d jobs, want 4", len(out.Jobs))
		}
		for k, want := range map[string]any{"state": "running", "queue": "default", "lease_owner": "py-1", "attempt": 1.0} {
			if out.Shared[k] != want {
				t.Errorf("shared %s = %v, want %v", k, out.Shared[k], want)
			}
		}
		token, _ := out.Shared["lease_token"].(string)
		if len(token) != 32 {
			t.Fatalf("shared lease_token = %v, want the claim's token", out.Shared["lease_token"])
		}
		if _, ok := out.Shared["kind"]; ok {
			t.Fatalf("shared holds kind, which the jobs do not share: %v", out.Shared)
		}
		for i, e := range out.Jobs {
			if int64(e["id"].(float64)) != ids[i] {
				t.Fatalf("job %d is %v, want %d", i, e["id"], ids[i])
			}
			for k := range out.Shared {
				if _, ok := e[k]; ok {
					t.Errorf("job %v repeats shared's %s", e["id"], k)
				}
			}
			if e["kind"] == nil || e["args"] == nil {
				t.Errorf("job %v lacks its own kind or args: %v", e["id"], e)
			}
		}

		// The results of the claim, what they share sent once; the third
		// names its own outcome, the fourth a token no claim issued.
		var fin struct{ Accepted, Rejected []int64 }
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/finish", map[string]any{
			"shared": map[string]any{"attempt": 1, "lease_token": token, "outcome": "completed"},
			"results": []any{
				map[string]any{"id": ids[0]},
				map[string]any{"id": ids[1], "result": map[string]any{"ok": true}},
				map[string]any{"id": ids[2], "outcome": "failed", "error": "boom"},
				map[string]any{"id": ids[3], "lease_token": strings.Repeat("0f", 16)},
			}}).decode(t, &fin)
		if len(fin.Accepted) != 3 || len(fin.Rejected) != 1 || fin.Rejected[0] != ids[3] {
			t.Fatalf("finish = %+v, want job %d (another token) rejected", fin, ids[3])
		}
		want := map[int64]drovertype.JobState{ids[0]: drovertype.JobStateCompleted, ids[1]: drovertype.JobStateCompleted,
			ids[2]: drovertype.JobStateRetryable, ids[3]: drovertype.JobStateRunning}
		for id, st := range want {
			if got := b.stored(t, id).State; got != st {
				t.Errorf("job %d is %s, want %s", id, got, st)
			}
		}
		if row := b.stored(t, ids[2]); len(row.Errors) != 1 || row.Errors[0].Error != "boom" {
			t.Fatalf("failed job's errors = %+v", row.Errors)
		}

		// Shared's fields are checked as a result's own: a malformed token
		// is refused, naming the field, and nothing is written.
		before := b.counts(t)
		r := b.call(t, server.ScopeWork, "POST", "/v1/finish", map[string]any{
			"shared":  map[string]any{"attempt": 1, "lease_token": "xyz", "outcome": "completed"},
			"results": []any{map[string]any{"id": ids[3]}}}, false)
		if r.status != http.StatusBadRequest || !strings.Contains(r.errorMessage(t), "lease token: want 32 hex digits") {
			t.Fatalf("finish with a malformed shared lease_token = %d %s, want 400 naming the lease token", r.status, r.body)
		}
		if after := b.counts(t); !jsonEqual(t, after, mustJSON(t, before)) {
			t.Fatalf("a refused finish changed the counts: %v -> %v", before, after)
		}
	})
}
