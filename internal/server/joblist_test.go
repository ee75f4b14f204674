package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/server"
)

// TestJobPagesAreBoundedByBytes: jobs with large args, listed with the
// largest limit, come back in pages that each stay under the byte budget,
// and following next_after visits every job exactly once.
func TestJobPagesAreBoundedByBytes(t *testing.T) {
	const budget = 256 << 10
	forEachStore(t, func(t *testing.T, b *bundle) {
		big := fmt.Sprintf(`{"blob":%q}`, strings.Repeat("x", 40<<10))
		params := make([]drover.InsertManyParams, 45)
		for i := range params {
			params[i] = drover.InsertManyParams{Args: drover.RawArgs{KindName: "big", JSON: []byte(big)}}
		}
		ids, err := b.client.InsertMany(context.Background(), params)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int64]int{}
		pages := 0
		path := "/v1/jobs?limit=1000"
		for {
			r := b.must(t, http.StatusOK, server.ScopeEnqueue, "GET", path, nil)
			if len(r.body) > budget {
				t.Fatalf("page %d is %d bytes, over the budget of %d", pages, len(r.body), budget)
			}
			var page struct {
				Jobs      []job  `json:"jobs"`
				NextAfter *int64 `json:"next_after"`
			}
			r.decode(t, &page)
			pages++
			for _, j := range page.Jobs {
				seen[j.ID]++
			}
			if page.NextAfter == nil {
				break
			}
			if len(page.Jobs) == 0 {
				t.Fatal("an empty page with a cursor: paging would never end")
			}
			path = fmt.Sprintf("/v1/jobs?limit=1000&after=%d", *page.NextAfter)
		}
		if pages < 2 {
			t.Fatalf("%d jobs of 40 KiB came in %d page(s) under a budget of %d bytes", len(ids), pages, budget)
		}
		for _, id := range ids {
			if seen[id] != 1 {
				t.Fatalf("job %d seen %d times over %d pages", id, seen[id], pages)
			}
		}
		if len(seen) != len(ids) {
			t.Fatalf("paging saw %d jobs, want %d", len(seen), len(ids))
		}
	}, func(cfg *server.Config) { cfg.MaxPageBytes = budget })
}

// TestJobPagesAreBoundedByRows: a limit over the maximum page is refused,
// the maximum itself is served, and a page that fills its limit gives the
// cursor to the rest.
func TestJobPagesAreBoundedByRows(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		r := b.call(t, server.ScopeEnqueue, "GET", "/v1/jobs?limit=10000", nil, false)
		if r.status != http.StatusBadRequest || !strings.Contains(r.errorMessage(t), "limit 10000") {
			t.Fatalf("limit=10000 = %d: %s", r.status, r.body)
		}
		ids := b.enqueue(t, map[string]any{"kind": "k", "args": map[string]any{"n": 1}}, map[string]any{"kind": "k", "args": map[string]any{"n": 2}},
			map[string]any{"kind": "k", "args": map[string]any{"n": 3}})
		var page struct {
			Jobs      []job  `json:"jobs"`
			NextAfter *int64 `json:"next_after"`
		}
		b.must(t, http.StatusOK, server.ScopeEnqueue, "GET", "/v1/jobs?limit=2", nil).decode(t, &page)
		if len(page.Jobs) != 2 || page.NextAfter == nil || *page.NextAfter != ids[1] {
			t.Fatalf("first page of 2 = %+v", page)
		}
		b.must(t, http.StatusOK, server.ScopeEnqueue, "GET", "/v1/jobs?limit=1000", nil).decode(t, &page)
		if len(page.Jobs) != 3 || page.NextAfter != nil {
			t.Fatalf("page of 1000 = %d jobs, next %v", len(page.Jobs), page.NextAfter)
		}
	})
}

// TestEmptyQueryValues: an empty filter (state=, queue=, kind=) filters
// nothing, as the document's patterns allow, while an empty cursor or
// limit, which the document types as integers, is refused.
func TestEmptyQueryValues(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		ids := b.enqueue(t, map[string]any{"kind": "k", "args": map[string]any{"n": 1}}, map[string]any{"kind": "k", "args": map[string]any{"n": 2}})
		var page struct {
			Jobs []job `json:"jobs"`
		}
		b.must(t, http.StatusOK, server.ScopeEnqueue, "GET", "/v1/jobs?state=&queue=&kind=", nil).decode(t, &page)
		if len(page.Jobs) != len(ids) {
			t.Fatalf("empty filters listed %d jobs, want %d", len(page.Jobs), len(ids))
		}
		for _, path := range []string{"/v1/jobs?after=", "/v1/jobs?limit=", "/v1/jobs?state=available,,running",
			"/v1/batches/1/results?after=", "/v1/batches/1/results?limit="} {
			r := b.call(t, server.ScopeAdmin, "GET", path, nil, false)
			if r.status != http.StatusBadRequest {
				t.Errorf("GET %s = %d %s, want 400", path, r.status, r.body)
			}
		}
	})
}
