package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/server"
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

// TestClaimsAreBoundedByBytes: a worker asking for many jobs whose args are
// large gets a response within the byte budget, and what did not fit is
// never left leased to it: every job is either in a response, held by the
// claim that returned it, or still available with its attempt unspent.
// Claiming on until the queue is empty hands out every job exactly once,
// each on its first attempt. Before, a claim answered every job it took
// (100 jobs of 1 MiB args: a response of 100 MiB and a server 315 MB
// larger).
func TestClaimsAreBoundedByBytes(t *testing.T) {
	const budget, total = 512 << 10, 24
	forEachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		big := fmt.Sprintf(`{"blob":%q}`, strings.Repeat("x", 100<<10))
		params := make([]drover.InsertManyParams, total)
		for i := range params {
			params[i] = drover.InsertManyParams{Args: drover.RawArgs{KindName: "big", JSON: []byte(big)}}
		}
		ids, err := b.client.InsertMany(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int64]int{}
		for claims := 1; len(seen) < total; claims++ {
			if claims > total {
				t.Fatalf("%d claims handed out %d of %d jobs", claims, len(seen), total)
			}
			r := b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/claim", map[string]any{"queue": "default", "worker": "w", "max": total})
			if len(r.body) > budget {
				t.Fatalf("claim %d answered %d bytes, over the budget of %d", claims, len(r.body), budget)
			}
			var out struct{ Jobs []job }
			r.decode(t, &out)
			if len(out.Jobs) == 0 {
				t.Fatalf("claim %d got nothing with %d jobs left", claims, total-len(seen))
			}
			for _, j := range out.Jobs {
				seen[j.ID]++
				if j.Attempt != 1 {
					t.Fatalf("job %d handed out on attempt %d: a claim that did not answer it spent an attempt", j.ID, j.Attempt)
				}
			}
			// Every job is handed out, or waits untouched for the next claim.
			for _, id := range ids {
				row := b.stored(t, id)
				switch {
				case seen[id] > 0 && row.State != drovertype.JobStateRunning:
					t.Fatalf("job %d was handed out but is %s", id, row.State)
				case seen[id] == 0 && (row.State != drovertype.JobStateAvailable || row.Attempt != 0):
					t.Fatalf("job %d was not handed out but is %s on attempt %d: leased to a worker that never got it", id, row.State, row.Attempt)
				}
			}
			if claims == 1 && len(out.Jobs) == total {
				t.Fatalf("one claim answered all %d jobs of 100 KiB under a budget of %d bytes", total, budget)
			}
		}
		for id, n := range seen {
			if n != 1 {
				t.Fatalf("job %d handed out %d times", id, n)
			}
		}
	}, func(cfg *server.Config) { cfg.MaxPageBytes = budget })
}

// completeAll claims every available job of the default queue through the
// client's Remote and completes each with a result of about size bytes.
func completeAll(t *testing.T, b *bundle, size int) {
	t.Helper()
	ctx := context.Background()
	result := fmt.Sprintf(`{"blob":%q}`, strings.Repeat("r", size))
	for {
		jobs, err := b.client.Remote().Claim(ctx, drover.ClaimParams{Queue: "default", Max: 100, Owner: "w", Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) == 0 {
			return
		}
		results := make([]drover.AttemptResult, len(jobs))
		for i, j := range jobs {
			results[i] = drover.AttemptResult{ID: j.ID, Attempt: j.Attempt, LeaseToken: j.LeaseToken, Outcome: drover.AttemptCompleted,
				Result: json.RawMessage(result)}
		}
		if rep, err := b.client.Remote().Finish(ctx, results); err != nil || len(rep.Accepted) != len(jobs) {
			t.Fatalf("finish: %+v, %v", rep, err)
		}
	}
}

// TestBatchResultsAreBoundedByBytes: a batch whose members completed with
// large results pages within the byte budget at the largest limit, and
// next_after visits every member once. Before, a page held up to 500
// results of 64 KiB (32 MiB) whatever the budget.
func TestBatchResultsAreBoundedByBytes(t *testing.T) {
	const budget, total = 256 << 10, 30
	forEachStore(t, func(t *testing.T, b *bundle) {
		params := make([]drover.InsertManyParams, total)
		for i := range params {
			params[i] = drover.InsertManyParams{Args: drover.RawArgs{KindName: "k", JSON: []byte(`{}`)}}
		}
		batch, err := b.client.InsertBatch(context.Background(), params, nil)
		if err != nil {
			t.Fatal(err)
		}
		completeAll(t, b, 40<<10)
		seen := map[int64]int{}
		path := fmt.Sprintf("/v1/batches/%d/results?limit=500", batch.ID)
		for pages := 1; ; pages++ {
			r := b.must(t, http.StatusOK, server.ScopeAdmin, "GET", path, nil)
			if len(r.body) > budget {
				t.Fatalf("page %d is %d bytes, over the budget of %d", pages, len(r.body), budget)
			}
			var page struct {
				Results []struct {
					ID     int64           `json:"id"`
					Result json.RawMessage `json:"result"`
				} `json:"results"`
				NextAfter *int64 `json:"next_after"`
			}
			r.decode(t, &page)
			for _, res := range page.Results {
				if len(res.Result) < 40<<10 {
					t.Fatalf("job %d's result is %d bytes, want its 40 KiB", res.ID, len(res.Result))
				}
				seen[res.ID]++
			}
			if page.NextAfter == nil {
				if pages < 2 {
					t.Fatalf("%d results of 40 KiB came in one page under a budget of %d bytes", total, budget)
				}
				break
			}
			if len(page.Results) == 0 || pages > total {
				t.Fatalf("page %d: %d results with a cursor; paging does not end", pages, len(page.Results))
			}
			path = fmt.Sprintf("/v1/batches/%d/results?limit=500&after=%d", batch.ID, *page.NextAfter)
		}
		for _, id := range batch.JobIDs {
			if seen[id] != 1 {
				t.Fatalf("member %d seen %d times", id, seen[id])
			}
		}
	}, func(cfg *server.Config) { cfg.MaxPageBytes = budget })
}

// TestWorkflowGraphIsBoundedByBytes: the graph of a workflow whose jobs
// completed with large results lists every job and edge within the byte
// budget, with the results that do not fit marked result_omitted (and
// readable one by one). Before, every result went in: up to 500 of 64 KiB.
func TestWorkflowGraphIsBoundedByBytes(t *testing.T) {
	const budget, total = 256 << 10, 20
	forEachStore(t, func(t *testing.T, b *bundle) {
		wf := drover.NewWorkflow()
		first := wf.Add(drover.RawArgs{KindName: "k", JSON: []byte(`{}`)}, nil)
		for range total - 1 {
			wf.Add(drover.RawArgs{KindName: "k", JSON: []byte(`{}`)}, nil, first)
		}
		ids, err := b.client.InsertWorkflow(context.Background(), wf)
		if err != nil {
			t.Fatal(err)
		}
		completeAll(t, b, 40<<10)
		r := b.must(t, http.StatusOK, server.ScopeAdmin, "GET", fmt.Sprintf("/v1/jobs/%d/workflow", ids[0]), nil)
		if len(r.body) > budget {
			t.Fatalf("the graph is %d bytes, over the budget of %d", len(r.body), budget)
		}
		var g struct {
			Jobs []struct {
				ID            int64           `json:"id"`
				Result        json.RawMessage `json:"result"`
				ResultOmitted bool            `json:"result_omitted"`
			} `json:"jobs"`
			Edges []any `json:"edges"`
		}
		r.decode(t, &g)
		if len(g.Jobs) != total || len(g.Edges) != total-1 {
			t.Fatalf("graph of %d jobs and %d edges, want %d and %d", len(g.Jobs), len(g.Edges), total, total-1)
		}
		omitted := 0
		for _, j := range g.Jobs {
			switch {
			case j.ResultOmitted && string(j.Result) != "null":
				t.Fatalf("job %d: result_omitted with a result", j.ID)
			case j.ResultOmitted:
				omitted++
				var res struct{ Result json.RawMessage }
				b.must(t, http.StatusOK, server.ScopeAdmin, "GET", fmt.Sprintf("/v1/jobs/%d/result", j.ID), nil).decode(t, &res)
				if len(res.Result) < 40<<10 {
					t.Fatalf("job %d: its result reads as %d bytes", j.ID, len(res.Result))
				}
			case len(j.Result) < 40<<10:
				t.Fatalf("job %d: result of %d bytes, want its 40 KiB or result_omitted", j.ID, len(j.Result))
			}
		}
		if omitted == 0 || omitted == total {
			t.Fatalf("%d of %d results omitted, want some in and some out", omitted, total)
		}
	}, func(cfg *server.Config) { cfg.MaxPageBytes = budget })
}
