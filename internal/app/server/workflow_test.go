package server_test

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/server"
)

// TestWorkflowInOneRequest: POST /v1/workflows stores steps that wait for
// steps of the same request (after, by ref, given in any order) and for a
// stored job (depends_on); each runs only once those completed, and
// carries their results when claimed.
func TestWorkflowInOneRequest(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		stored := b.enqueue(t, map[string]any{"kind": "setup", "args": map[string]any{}, "queue": "wf"})[0]
		step := func(ref, kind string, after ...string) map[string]any {
			s := map[string]any{"ref": ref, "kind": kind, "args": map[string]any{"step": ref}, "queue": "wf"}
			if len(after) > 0 {
				s["after"] = after
			}
			return s
		}
		notify := step("notify", "notify", "thumb", "fetch")
		fetch := step("fetch", "fetch")
		fetch["depends_on"] = []int64{stored}
		var out struct {
			IDs  []int64          `json:"ids"`
			Refs map[string]int64 `json:"refs"`
		}
		// notify comes first in the request, before the steps it waits for.
		b.must(t, http.StatusCreated, server.ScopeEnqueue, "POST", "/v1/workflows", map[string]any{"steps": []any{
			notify, fetch, step("thumb", "thumb", "fetch"),
		}}).decode(t, &out)
		if len(out.IDs) != 3 || out.Refs["notify"] != out.IDs[0] || out.Refs["fetch"] != out.IDs[1] || out.Refs["thumb"] != out.IDs[2] {
			t.Fatalf("workflow answer %+v", out)
		}
		for _, id := range out.IDs {
			if st := b.stored(t, id).State; st != drovertype.JobStatePending {
				t.Fatalf("step %d is %s before its parents completed", id, st)
			}
		}

		// Run the workflow in claim order, one job at a time: each claim
		// must hand out exactly the job whose parents have all completed.
		want := []struct {
			kind    string
			parents []int64
		}{{"setup", nil}, {"fetch", []int64{stored}}, {"thumb", []int64{out.Refs["fetch"]}},
			{"notify", sorted(out.Refs["fetch"], out.Refs["thumb"])}}
		for _, w := range want {
			got := b.claimWithParents(t, "wf", 10)
			if len(got) != 1 || got[0].Kind != w.kind || !slices.Equal(got[0].DependsOn, w.parents) {
				t.Fatalf("claim = %+v, want only %s after %v", got, w.kind, w.parents)
			}
			for _, r := range got[0].ParentResults {
				if r.State != "completed" || !jsonEqual(t, r.Result, `{"by":`+itoa(r.ID)+`}`) {
					t.Fatalf("%s claimed with parent result %+v", w.kind, r)
				}
			}
			j := got[0]
			b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/finish", map[string]any{"results": []any{map[string]any{
				"id": j.ID, "attempt": j.Attempt, "lease_token": j.LeaseToken, "outcome": "completed", "result": map[string]any{"by": j.ID}}}})
		}
		for _, id := range out.IDs {
			if st := b.stored(t, id).State; st != drovertype.JobStateCompleted {
				t.Fatalf("step %d ended %s", id, st)
			}
		}
	})
}

func sorted(ids ...int64) []int64 { slices.Sort(ids); return ids }

// TestWorkflowBadInput: a workflow request that is wrong anywhere stores
// none of its steps, and the 400 names the step and what is wrong.
func TestWorkflowBadInput(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		ok := func(ref string, after ...string) map[string]any {
			return map[string]any{"ref": ref, "kind": "k", "args": map[string]any{}, "after": append([]string{}, after...)}
		}
		cases := []struct {
			name  string
			steps []any
			want  string
		}{
			{"duplicate ref", []any{ok("a"), ok("a")}, `steps[1].ref "a": already names steps[0]`},
			{"unknown ref", []any{ok("a"), ok("b", "zz")}, `steps[1].after: "zz" names no step of this request`},
			{"itself", []any{ok("a", "a")}, `steps[0].after: "a" is the step itself`},
			{"cycle", []any{ok("root"), ok("a", "b"), ok("b", "a")}, `steps: steps[1] ("a"), steps[2] ("b") wait for each other in a cycle`},
			{"bad kind later", []any{ok("a"), map[string]any{"kind": "no spaces", "args": map[string]any{}, "after": []string{"a"}}}, `kind "no spaces"`},
			{"args not object", []any{ok("a"), map[string]any{"kind": "k", "args": 3}}, "steps[1].args: must be a JSON object"},
			{"unique step", []any{ok("a"), map[string]any{"kind": "k", "args": map[string]any{}, "unique_key": "u"}}, "cannot be part of a workflow"},
			{"unknown stored parent", []any{ok("a"), map[string]any{"kind": "k", "args": map[string]any{}, "depends_on": []int64{987654}}}, "987654"},
			{"empty", []any{}, "steps: empty"},
		}
		before := b.counts(t)
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := b.call(t, server.ScopeEnqueue, "POST", "/v1/workflows", map[string]any{"steps": c.steps}, false)
				if r.status != http.StatusBadRequest {
					t.Fatalf("status %d, want 400: %s", r.status, r.body)
				}
				if msg := r.errorMessage(t); !strings.Contains(msg, c.want) {
					t.Fatalf("message %q does not say %q", msg, c.want)
				}
			})
		}
		if after := b.counts(t); !maps.Equal(after, before) {
			t.Fatalf("bad workflows stored jobs: %v -> %v", before, after)
		}
	})
}
