package server_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/droverhq/drover/internal/app/server"
)

// claimedWithParents is a claimed job with what the claim says of its
// parents.
type claimedWithParents struct {
	ID            int64   `json:"id"`
	Kind          string  `json:"kind"`
	Attempt       int     `json:"attempt"`
	LeaseToken    string  `json:"lease_token"`
	DependsOn     []int64 `json:"depends_on"`
	ParentResults []struct {
		ID     int64  `json:"id"`
		State  string `json:"state"`
		Result any    `json:"result"`
	} `json:"parent_results"`
}

func (b *bundle) claimWithParents(t *testing.T, queue string, max int) []claimedWithParents {
	t.Helper()
	var out struct{ Jobs []claimedWithParents }
	b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/claim",
		map[string]any{"queue": queue, "worker": "w", "max": max, "lease_ms": 60000}).decode(t, &out)
	for _, j := range out.Jobs {
		b.leases[j.ID] = j.LeaseToken
	}
	return out.Jobs
}

// TestClaimCarriesParentResults: a claimed job that waited for others
// carries their IDs and results, as a Go handler reads them with
// Job.ParentResults; a plain job claimed with it carries neither.
func TestClaimCarriesParentResults(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		parents := b.enqueue(t, map[string]any{"kind": "fetch", "args": map[string]any{"n": 1}, "queue": "p"},
			map[string]any{"kind": "fetch", "args": map[string]any{"n": 2}, "queue": "p"})
		child := b.enqueue(t, map[string]any{"kind": "join", "args": map[string]any{}, "queue": "c", "depends_on": parents})[0]
		plain := b.enqueue(t, map[string]any{"kind": "plain", "args": map[string]any{}, "queue": "c"})[0]

		claimed := b.claimWithParents(t, "p", 10)
		if len(claimed) != 2 {
			t.Fatalf("claimed parents %+v", claimed)
		}
		results := []any{}
		for _, p := range claimed {
			results = append(results, map[string]any{"id": p.ID, "attempt": p.Attempt, "lease_token": p.LeaseToken,
				"outcome": "completed", "result": map[string]any{"rows": slices.Index(parents, p.ID) + 1}})
		}
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/finish", map[string]any{"results": results})

		got := b.claimWithParents(t, "c", 10)
		if len(got) != 2 {
			t.Fatalf("claimed %+v, want the child and the plain job", got)
		}
		byID := map[int64]claimedWithParents{got[0].ID: got[0], got[1].ID: got[1]}
		c, p := byID[child], byID[plain]
		if !slices.Equal(c.DependsOn, parents) || len(c.ParentResults) != 2 {
			t.Fatalf("child claimed with depends_on %v and %d parent results, want %v and 2", c.DependsOn, len(c.ParentResults), parents)
		}
		for i, r := range c.ParentResults {
			if r.ID != parents[i] || r.State != "completed" || !jsonEqual(t, r.Result, `{"rows":`+string(rune('1'+i))+`}`) {
				t.Fatalf("parent result %d = %+v", i, r)
			}
		}
		if p.DependsOn != nil || p.ParentResults != nil {
			t.Fatalf("a plain job was claimed with parents: %+v", p)
		}
	})
}
