package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/server"
)

type batchBody struct {
	ID            int64            `json:"id"`
	Total         int64            `json:"total"`
	Counts        map[string]int64 `json:"counts"`
	CallbackJobID int64            `json:"callback_job_id"`
	FinishedAt    *string          `json:"finished_at"`
}

type resultBody struct {
	ID     int64  `json:"id"`
	State  string `json:"state"`
	Kind   string `json:"kind"`
	Result any    `json:"result"`
}

// TestBatchOverHTTP walks a batch from insert to its callback: its
// progress follows the store's counters, remote results are stored and
// paged back, and an oversized result is refused without touching the job.
func TestBatchOverHTTP(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		var ins struct {
			ID            int64   `json:"id"`
			IDs           []int64 `json:"ids"`
			CallbackJobID int64   `json:"callback_job_id"`
		}
		b.must(t, http.StatusCreated, server.ScopeEnqueue, "POST", "/v1/batches", map[string]any{
			"jobs":     []any{map[string]any{"kind": "m", "args": map[string]any{"n": 1}}, map[string]any{"kind": "m", "args": map[string]any{"n": 2}}, map[string]any{"kind": "m", "args": map[string]any{"n": 3}, "max_attempts": 1}},
			"callback": map[string]any{"kind": "cb", "args": map[string]any{}, "queue": "callbacks"},
		}).decode(t, &ins)
		if len(ins.IDs) != 3 || ins.ID < 1 || ins.CallbackJobID < 1 {
			t.Fatalf("insert batch = %+v", ins)
		}
		if row := b.stored(t, ins.CallbackJobID); row.State != drovertype.JobStatePending || row.BatchID != ins.ID {
			t.Fatalf("callback before the batch ended: %s of batch %d, want pending of %d", row.State, row.BatchID, ins.ID)
		}
		var raw map[string]any
		b.must(t, http.StatusOK, server.ScopeAdmin, "GET", fmt.Sprintf("/v1/jobs/%d", ins.IDs[0]), nil).decode(t, &raw)
		if raw["batch_id"] != float64(ins.ID) {
			t.Fatalf("job JSON batch_id = %v, want %d", raw["batch_id"], ins.ID)
		}

		progress := func() batchBody {
			t.Helper()
			var got batchBody
			b.must(t, http.StatusOK, server.ScopeEnqueue, "GET", fmt.Sprintf("/v1/batches/%d", ins.ID), nil).decode(t, &got)
			want, err := b.client.BatchGet(ctx, ins.ID)
			if err != nil {
				t.Fatal(err)
			}
			wantCounts := map[string]int64{"pending": want.Pending(), "running": want.Running, "failed": want.Failed,
				"completed": want.Completed, "cancelled": want.Cancelled, "discarded": want.Discarded}
			if got.Total != want.Total || fmt.Sprint(got.Counts) != fmt.Sprint(wantCounts) || got.CallbackJobID != want.CallbackJobID ||
				(got.FinishedAt != nil) != want.Finished() {
				t.Fatalf("GET batch = %+v, store has %+v", got, want)
			}
			return got
		}
		if p := progress(); p.Counts["pending"] != 3 || p.FinishedAt != nil {
			t.Fatalf("new batch = %+v, want 3 pending", p)
		}

		jobs := b.claim(t, map[string]any{"queue": "default", "worker": "w", "max": 10})
		if len(jobs) != 3 {
			t.Fatalf("claimed %d members, want 3", len(jobs))
		}
		if p := progress(); p.Counts["running"] != 3 {
			t.Fatalf("claimed batch = %+v, want 3 running", p)
		}
		big := strings.Repeat("x", drover.MaxResultBytes)
		r := b.call(t, server.ScopeWork, "POST", "/v1/finish", map[string]any{"results": []any{
			map[string]any{"id": ins.IDs[0], "attempt": 1, "lease_token": b.lease(ins.IDs[0]), "outcome": "completed", "result": big}}}, true)
		if r.status != http.StatusBadRequest || !strings.Contains(r.errorMessage(t), "over the limit of 65536") {
			t.Fatalf("oversized result = %d %s", r.status, r.body)
		}
		if row := b.stored(t, ins.IDs[0]); row.State != drovertype.JobStateRunning {
			t.Fatalf("a refused result finished the job: %s", row.State)
		}
		var fin struct{ Accepted []int64 }
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/finish", map[string]any{"results": []any{
			map[string]any{"id": ins.IDs[0], "attempt": 1, "lease_token": b.lease(ins.IDs[0]), "outcome": "completed", "result": map[string]any{"sum": 6}},
			map[string]any{"id": ins.IDs[1], "attempt": 1, "lease_token": b.lease(ins.IDs[1]), "outcome": "completed"},
			map[string]any{"id": ins.IDs[2], "attempt": 1, "lease_token": b.lease(ins.IDs[2]), "outcome": "failed", "error": "boom"},
		}}).decode(t, &fin)
		if len(fin.Accepted) != 3 {
			t.Fatalf("finish accepted %v", fin.Accepted)
		}
		if p := progress(); p.Counts["completed"] != 2 || p.Counts["discarded"] != 1 || p.FinishedAt == nil {
			t.Fatalf("ended batch = %+v", p)
		}
		if row := b.stored(t, ins.CallbackJobID); row.State != drovertype.JobStateAvailable {
			t.Fatalf("callback after the batch ended: %s, want available", row.State)
		}

		var res resultBody
		b.must(t, http.StatusOK, server.ScopeEnqueue, "GET", fmt.Sprintf("/v1/jobs/%d/result", ins.IDs[0]), nil).decode(t, &res)
		if res.State != "completed" || fmt.Sprint(res.Result) != "map[sum:6]" {
			t.Fatalf("job result = %+v", res)
		}

		// Two pages of at most two.
		var seen []resultBody
		after := "0"
		for page := 0; ; page++ {
			var out struct {
				Results   []resultBody `json:"results"`
				NextAfter *int64       `json:"next_after"`
			}
			b.must(t, http.StatusOK, server.ScopeAdmin, "GET", fmt.Sprintf("/v1/batches/%d/results?limit=2&after=%s", ins.ID, after), nil).decode(t, &out)
			seen = append(seen, out.Results...)
			if out.NextAfter == nil {
				break
			}
			if page > 2 {
				t.Fatal("results never end")
			}
			after = fmt.Sprint(*out.NextAfter)
		}
		want := fmt.Sprintf("[{%d completed m map[sum:6]} {%d completed m <nil>} {%d discarded m <nil>}]", ins.IDs[0], ins.IDs[1], ins.IDs[2])
		if fmt.Sprint(seen) != want {
			t.Fatalf("batch results = %v, want %s", seen, want)
		}

		for path, status := range map[string]int{
			"/v1/batches/999999":              http.StatusNotFound,
			"/v1/batches/999999/results":      http.StatusNotFound,
			"/v1/batches/x":                   http.StatusBadRequest,
			"/v1/batches/1/results?limit=501": http.StatusBadRequest,
			"/v1/batches/1/results?page=2":    http.StatusBadRequest,
			"/v1/jobs/999999/result":          http.StatusNotFound,
		} {
			if r := b.call(t, server.ScopeAdmin, "GET", path, nil, false); r.status != status || r.errorMessage(t) == "" {
				t.Errorf("GET %s = %d %s, want %d with a message", path, r.status, r.body, status)
			}
		}
		before := b.counts(t)
		r = b.call(t, server.ScopeEnqueue, "POST", "/v1/batches", map[string]any{
			"jobs": []any{map[string]any{"kind": "m", "args": map[string]any{"n": 1}}}, "callback": map[string]any{"kind": "cb", "args": map[string]any{"n": 1}, "depends_on": []int64{ins.IDs[0]}}}, false)
		if r.status != http.StatusBadRequest || !strings.Contains(r.errorMessage(t), "callback") {
			t.Fatalf("callback with parents = %d %s", r.status, r.body)
		}
		if after := b.counts(t); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("a refused batch changed the store: %v -> %v", before, after)
		}
	}, func(c *server.Config) { c.MaxBodyBytes = 1 << 20 }) // room for a result over its own limit
}

// TestEnqueueFlowOptions: depends_on, key and unique_key reach the store.
func TestEnqueueFlowOptions(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		parent := b.enqueue(t, map[string]any{"kind": "p", "args": map[string]any{"n": 1}})[0]
		ids := b.enqueue(t,
			map[string]any{"kind": "c", "args": map[string]any{"n": 1}, "depends_on": []int64{parent}},
			map[string]any{"kind": "k", "args": map[string]any{"n": 1}, "key": "tenant-1"},
			map[string]any{"kind": "k", "args": map[string]any{"n": 2}, "key": "tenant-1"},
			map[string]any{"kind": "k", "args": map[string]any{"n": 3}, "key": "tenant-2", "key_limit": 2},
		)
		// A unique job cannot share a call with a workflow step.
		ids = append(ids, b.enqueue(t,
			map[string]any{"kind": "u", "args": map[string]any{"n": 1}, "unique_key": "once"},
			map[string]any{"kind": "u", "args": map[string]any{"n": 2}, "unique_key": "once"},
		)...)
		wantStates := []drovertype.JobState{drovertype.JobStatePending, drovertype.JobStateAvailable, drovertype.JobStateBlocked, drovertype.JobStateAvailable, drovertype.JobStateAvailable}
		for i, want := range wantStates {
			if got := b.stored(t, ids[i]).State; got != want {
				t.Errorf("job %d (%d) is %s, want %s", i, ids[i], got, want)
			}
		}
		if ids[5] != 0 {
			t.Errorf("duplicate unique job got id %d, want 0 (skipped)", ids[5])
		}
		var raw map[string]any
		b.must(t, http.StatusOK, server.ScopeEnqueue, "GET", fmt.Sprintf("/v1/jobs/%d", ids[2]), nil).decode(t, &raw)
		if raw["key"] != "tenant-1" || raw["state"] != "blocked" {
			t.Errorf("job JSON = key %v state %v, want tenant-1 blocked", raw["key"], raw["state"])
		}
		before := b.counts(t)
		r := b.call(t, server.ScopeEnqueue, "POST", "/v1/jobs", map[string]any{"jobs": []any{
			map[string]any{"kind": "c", "args": map[string]any{"n": 1}, "depends_on": []int64{999999}}}}, true)
		if r.status != http.StatusBadRequest && r.status != http.StatusNotFound {
			t.Fatalf("unknown parent = %d %s, want 4xx", r.status, r.body)
		}
		if after := b.counts(t); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("a refused enqueue changed the store: %v -> %v", before, after)
		}

		// key_rate: one start a minute, so the key's second job waits
		// for its token as a scheduled job.
		rated := b.enqueue(t,
			map[string]any{"kind": "r", "args": map[string]any{"n": 1}, "key": "rated", "key_limit": 2, "key_rate": 1, "key_rate_period_ms": 60000},
			map[string]any{"kind": "r", "args": map[string]any{"n": 2}, "key": "rated", "key_limit": 2, "key_rate": 1, "key_rate_period_ms": 60000},
		)
		for i, want := range []drovertype.JobState{drovertype.JobStateAvailable, drovertype.JobStateScheduled} {
			if got := b.stored(t, rated[i]).State; got != want {
				t.Errorf("rated job %d is %s, want %s", i, got, want)
			}
		}
		r = b.call(t, server.ScopeEnqueue, "POST", "/v1/jobs", map[string]any{"jobs": []any{
			map[string]any{"kind": "r", "args": map[string]any{"n": 1}, "key": "rated", "key_rate": 1}}}, false)
		if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "key rate period") {
			t.Fatalf("key_rate without a period = %d %s, want 400 naming the period", r.status, r.body)
		}
	})
}

// page fetches a dashboard page with an admin token.
func (b *bundle) page(t *testing.T, path string) string {
	t.Helper()
	status, body := b.pageStatus(t, path)
	if status != http.StatusOK {
		t.Fatalf("GET %s = %d: %s", path, status, body)
	}
	return body
}

func (b *bundle) pageStatus(t *testing.T, path string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", b.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+b.tokens[server.ScopeAdmin])
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

var countCell = regexp.MustCompile(`data-count="(\w+)">(\d+)<`)

// TestDashboardBatchAndJobResults: the batch page shows the store's
// counters for a batch with members in every kind of state, and a job page
// shows its result and the jobs it depends on with theirs.
func TestDashboardBatchAndJobResults(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		var ins struct {
			ID  int64   `json:"id"`
			IDs []int64 `json:"ids"`
		}
		jobs := make([]any, 5)
		for i := range jobs {
			jobs[i] = map[string]any{"kind": "m", "args": map[string]any{"n": i}, "max_attempts": 3}
		}
		b.must(t, http.StatusCreated, server.ScopeEnqueue, "POST", "/v1/batches", map[string]any{"jobs": jobs}).decode(t, &ins)
		claimed := b.claim(t, map[string]any{"queue": "default", "worker": "w", "max": 4})
		if len(claimed) != 4 {
			t.Fatalf("claimed %d", len(claimed))
		}
		for _, j := range claimed {
			if j.BatchID != ins.ID {
				t.Fatalf("claimed job %d has batch_id %d, want %d", j.ID, j.BatchID, ins.ID)
			}
		}
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/finish", map[string]any{"results": []any{
			map[string]any{"id": claimed[0].ID, "attempt": 1, "lease_token": b.lease(claimed[0].ID), "outcome": "completed", "result": "resized"},
			map[string]any{"id": claimed[1].ID, "attempt": 1, "lease_token": b.lease(claimed[1].ID), "outcome": "failed", "max_attempts": 3, "error": "retry me"},
			map[string]any{"id": claimed[2].ID, "attempt": 1, "lease_token": b.lease(claimed[2].ID), "outcome": "cancelled"},
		}})
		// Pending, running, failed, completed and cancelled: one each.
		page := b.page(t, fmt.Sprintf("/ui/batches/%d", ins.ID))
		want, err := b.client.BatchGet(ctx, ins.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantCounts := map[string]string{"total": fmt.Sprint(want.Total), "pending": fmt.Sprint(want.Pending()), "running": fmt.Sprint(want.Running),
			"failed": fmt.Sprint(want.Failed), "completed": fmt.Sprint(want.Completed), "cancelled": fmt.Sprint(want.Cancelled), "discarded": fmt.Sprint(want.Discarded)}
		got := map[string]string{}
		for _, m := range countCell.FindAllStringSubmatch(page, -1) {
			got[m[1]] = m[2]
		}
		if fmt.Sprint(got) != fmt.Sprint(wantCounts) || want.Completed != 1 || want.Failed != 1 || want.Pending() != 1 {
			t.Fatalf("batch page counts %v, store has %+v", got, want)
		}
		if !strings.Contains(page, "2 of 5 ended") || !strings.Contains(page, `&#34;resized&#34;`) {
			t.Fatalf("batch page lacks the ended count or the result:\n%s", page)
		}

		child := b.enqueue(t, map[string]any{"kind": "after", "args": map[string]any{"n": 1}, "depends_on": []int64{claimed[0].ID}})[0]
		page = b.page(t, fmt.Sprintf("/ui/jobs/%d", child))
		if !strings.Contains(page, fmt.Sprintf(`href="/ui/jobs/%d"`, claimed[0].ID)) || !strings.Contains(page, `&#34;resized&#34;`) {
			t.Fatalf("child's page lacks its parent and the parent's result:\n%s", page)
		}
		page = b.page(t, fmt.Sprintf("/ui/jobs/%d", claimed[0].ID))
		if !strings.Contains(page, `id="job-result">&#34;resized&#34;`) || !strings.Contains(page, fmt.Sprintf(`href="/ui/batches/%d"`, ins.ID)) {
			t.Fatalf("job page lacks its result or its batch:\n%s", page)
		}
		if status, body := b.pageStatus(t, "/ui/batches/999999"); status != http.StatusNotFound || !strings.Contains(body, "999999") {
			t.Fatalf("unknown batch page = %d: %s", status, body)
		}
	})
}

// TestEnqueueUniqueStates: unique_states reaches the store (a completed
// job finished by an HTTP worker keeps its key), states that leave out an
// unfinished one are refused naming them, and a retry that would take a key
// another job holds answers 409 and changes nothing.
func TestEnqueueUniqueStates(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		kept := append(drovertype.UnfinishedStates(), drovertype.JobStateCompleted)
		first := b.enqueue(t, map[string]any{"kind": "u", "args": map[string]any{"n": 1}, "unique_key": "day", "unique_states": kept})[0]
		jobs := b.claim(t, map[string]any{"queue": "default", "worker": "w", "max": 10, "lease_ms": 60000})
		if len(jobs) != 1 || jobs[0].ID != first {
			t.Fatalf("claimed %+v, want job %d", jobs, first)
		}
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/finish", map[string]any{"results": []any{
			map[string]any{"id": first, "attempt": 1, "lease_token": b.lease(first), "outcome": "completed"}}})
		if got := b.stored(t, first).State; got != drovertype.JobStateCompleted {
			t.Fatalf("job %d is %s, want completed", first, got)
		}
		if ids := b.enqueue(t, map[string]any{"kind": "u", "args": map[string]any{"n": 2}, "unique_key": "day", "unique_states": kept}); ids[0] != 0 {
			t.Fatalf("insert while a completed job keeps the key stored job %d", ids[0])
		}

		before := b.counts(t)
		r := b.call(t, server.ScopeEnqueue, "POST", "/v1/jobs", map[string]any{"jobs": []any{
			map[string]any{"kind": "u", "args": map[string]any{"n": 3}, "unique_key": "x", "unique_states": []string{"running", "completed"}}}}, true)
		if r.status != http.StatusBadRequest || !strings.Contains(r.errorMessage(t), "missing [pending blocked scheduled available retryable]") {
			t.Fatalf("states without the unfinished ones = %d %s, want 400 naming them", r.status, r.body)
		}
		if after := b.counts(t); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("a refused enqueue changed the store: %v -> %v", before, after)
		}

		// A job that gave its key up cannot retry while another holds it.
		gone := b.enqueue(t, map[string]any{"kind": "g", "args": map[string]any{"n": 1}, "unique_key": "k", "run_at": time.Now().Add(time.Hour)})[0]
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", fmt.Sprintf("/v1/jobs/%d/cancel", gone), nil)
		holder := b.enqueue(t, map[string]any{"kind": "g", "args": map[string]any{"n": 2}, "unique_key": "k", "run_at": time.Now().Add(time.Hour)})[0]
		if holder == 0 {
			t.Fatal("key not free after its job was cancelled")
		}
		before = b.counts(t)
		r = b.call(t, server.ScopeAdmin, "POST", fmt.Sprintf("/v1/jobs/%d/retry", gone), nil, true)
		if r.status != http.StatusConflict || !strings.Contains(r.errorMessage(t), fmt.Sprint(holder)) {
			t.Fatalf("retry while job %d holds the key = %d %s, want 409 naming it", holder, r.status, r.body)
		}
		if after := b.counts(t); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("a refused retry changed the store: %v -> %v", before, after)
		}
	})
}
