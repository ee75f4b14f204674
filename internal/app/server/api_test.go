package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/server"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// TestEveryOperationAnswersWithItsScopes walks the OpenAPI document: every
// operation it lists must exist, answer with a documented status and
// schema, refuse the tokens whose scope it does not list (403) and accept
// those it does.
func TestEveryOperationAnswersWithItsScopes(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		b.enqueue(t, map[string]any{"kind": "k", "args": map[string]any{}})
		// Batch 1, for the batch paths walked with id 1.
		b.must(t, http.StatusCreated, server.ScopeEnqueue, "POST", "/v1/batches", map[string]any{"jobs": []any{map[string]any{"kind": "k", "args": map[string]any{"n": 1}}}})
		bodies := map[string]any{
			"enqueue":     map[string]any{"jobs": []any{map[string]any{"kind": "k", "args": map[string]any{"n": 1}}}},
			"insertBatch": map[string]any{"jobs": []any{map[string]any{"kind": "k", "args": map[string]any{"n": 1}}}},
			"insertWorkflow": map[string]any{"steps": []any{map[string]any{"ref": "a", "kind": "k", "args": map[string]any{}},
				map[string]any{"kind": "k", "args": map[string]any{}, "after": []string{"a"}}}},
			"claim":              map[string]any{"queue": "default", "worker": "w"},
			"finish":             map[string]any{"results": []any{map[string]any{"id": 1, "attempt": 1, "lease_token": b.lease(1), "outcome": "completed"}}},
			"heartbeat":          map[string]any{"attempts": []any{map[string]any{"id": 1, "attempt": 1, "lease_token": b.lease(1)}}},
			"release":            map[string]any{"attempts": []any{map[string]any{"id": 1, "attempt": 1, "lease_token": b.lease(1)}}},
			"createPeriodic":     map[string]any{"name": "p", "schedule": "@hourly", "kind": "k"},
			"updatePeriodic":     map[string]any{"schedule": "@daily", "kind": "k"},
			"startBulk":          map[string]any{"action": "cancel", "queue": "nothing-here"},
			"startBulkSelection": map[string]any{"action": "cancel", "ids": []int64{999999}},
			"setStrictOrder":     map[string]any{"max_running": 0},
			// Topic t1 and its subscription s1, made below; receipts that
			// no receive handed out are refused with 400.
			"createTopic":        map[string]any{"name": "t1"},
			"publish":            map[string]any{"messages": []any{map[string]any{"payload": 1}}},
			"publishMany":        map[string]any{"messages": []any{map[string]any{"topic": "t1", "payload": 1}}},
			"createSubscription": map[string]any{"name": "s1"},
			"receive":            map[string]any{"worker": "w"},
			"ack":                map[string]any{"acks": []any{map[string]any{"receipt": "x"}}},
			"nack":               map[string]any{"receipts": []string{"x"}},
			"extendBatches":      map[string]any{"receipts": []string{"x"}},
			"releaseBatches":     map[string]any{"receipts": []string{"x"}},
			"rewindSubscription": map[string]any{"earliest": true},
		}
		// Bulk task 1, for GET /v1/bulk/{id} walked with id 1.
		b.must(t, http.StatusAccepted, server.ScopeAdmin, "POST", "/v1/bulk", bodies["startBulk"])
		b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/topics", bodies["createTopic"])
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/topics/t1/subscriptions", bodies["createSubscription"])
		n := 0
		for path, item := range b.doc.Paths.Map() {
			for method, op := range item.Operations() {
				n++
				var scopes []server.Scope
				if raw, ok := op.Extensions["x-drover-scopes"]; ok {
					for _, s := range raw.([]any) {
						scopes = append(scopes, server.Scope(s.(string)))
					}
				} else if !publicPaths[path] {
					t.Errorf("%s %s lists no x-drover-scopes", method, path)
				}
				// {name} is a queue's, the periodic job createPeriodic makes,
				// or topic t1's subscription s1.
				name := "default"
				switch {
				case strings.HasPrefix(path, "/v1/periodic"):
					name = "p"
				case strings.HasPrefix(path, "/v1/topics"):
					name = "s1"
				}
				p := strings.NewReplacer("{id}", "1", "{topic}", "t1", "{name}", name, "{lane}", "0").Replace(path)
				for _, sc := range []server.Scope{server.ScopeEnqueue, server.ScopeWork, server.ScopeAdmin} {
					if strings.Contains(path, "{name}") {
						// Periodic job p and subscription s1 exist for every call
						// (a delete may have removed them); 409 (p) or 200 (s1)
						// when they do already.
						b.call(t, server.ScopeAdmin, "POST", "/v1/periodic", bodies["createPeriodic"], true)
						b.call(t, server.ScopeAdmin, "POST", "/v1/topics/t1/subscriptions", bodies["createSubscription"], true)
					}
					if strings.Contains(path, "{topic}") {
						// So do topic t1 and its subscription s1.
						b.call(t, server.ScopeAdmin, "POST", "/v1/topics", bodies["createTopic"], true)
						b.call(t, server.ScopeAdmin, "POST", "/v1/topics/t1/subscriptions", bodies["createSubscription"], true)
					}
					r := b.call(t, sc, method, p, bodies[op.OperationID], true)
					allowed := publicPaths[path] || sc == server.ScopeAdmin || slices.Contains(scopes, sc)
					switch {
					case allowed && (r.status == http.StatusForbidden || r.status >= 404 && r.status <= 405):
						t.Errorf("%s %s with a %s token = %d: %s", method, path, sc, r.status, r.body)
					case !allowed && r.status != http.StatusForbidden:
						t.Errorf("%s %s with a %s token = %d, want 403", method, path, sc, r.status)
					case !allowed && !strings.Contains(r.errorMessage(t), "lacks the scope"):
						t.Errorf("403 message %q does not say what is missing", r.errorMessage(t))
					}
				}
			}
		}
		if n < 16 {
			t.Fatalf("openapi.json lists %d operations, want every endpoint", n)
		}
	})
}

// publicPaths are the operations that need no token: load balancers probe
// the health checks and code generators fetch the API's description.
var publicPaths = map[string]bool{"/healthz": true, "/readyz": true, "/openapi.json": true}

// TestPublicPathsNeedNoToken: the health checks and the API's description
// answer 200 without a token, and with a malformed or unknown one (they do
// not look at it), and the operations openapi.json marks as needing no
// token are exactly these.
func TestPublicPathsNeedNoToken(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		for _, h := range []string{"", "Basic dXNlcjpwdw==", "Bearer drv_not-a-real-token"} {
			for p := range publicPaths {
				req, _ := http.NewRequest("GET", b.url+p, nil)
				if h != "" {
					req.Header.Set("Authorization", h)
				}
				resp, err := noRedirect.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || !json.Valid(body) {
					t.Errorf("GET %s with Authorization %q = %d: %s", p, h, resp.StatusCode, body)
				}
			}
		}
		r := b.must(t, http.StatusOK, "", "GET", "/openapi.json", nil)
		if !bytes.Equal(r.body, server.OpenAPI) {
			t.Error("GET /openapi.json without a token does not serve the document")
		}
		for path, item := range b.doc.Paths.Map() {
			for method, op := range item.Operations() {
				open := op.Security != nil && len(*op.Security) == 0
				if open != publicPaths[path] {
					t.Errorf("%s %s: openapi.json says needs no token = %v, want %v", method, path, open, publicPaths[path])
				}
			}
		}
	})
}

// TestWithoutTokenOnlyPublicPathsAnswer: no token, a malformed header or
// an unknown token gets 401 everywhere but on the public paths (see
// TestPublicPathsNeedNoToken), even on paths that do not exist, so that
// nothing about the API leaks; /metrics in particular stays bearer-only.
func TestWithoutTokenOnlyPublicPathsAnswer(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		b.must(t, http.StatusOK, "", "GET", "/healthz", nil)
		paths := []string{"/metrics", "/v1/jobs", "/v1/jobs/1", "/v1/stats", "/no/such/path",
			"/", "/ui/jobs", "/ui/jobs/1", "/ui/history.json"}
		headers := map[string]string{"none": "", "basic": "Basic dXNlcjpwdw==", "empty bearer": "Bearer ",
			"unknown": "Bearer drv_not-a-real-token"}
		for name, h := range headers {
			for _, p := range paths {
				req, _ := http.NewRequest("GET", b.url+p, nil)
				if h != "" {
					req.Header.Set("Authorization", h)
				}
				resp, err := noRedirect.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if strings.HasPrefix(p, "/ui/") && p != "/ui/history.json" && h == "" || p == "/" && h == "" {
					// A browser opening the dashboard is sent to the
					// login form, which shows nothing of the store.
					if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
						t.Errorf("GET / without credentials = %d to %q, want 303 to /login", resp.StatusCode, resp.Header.Get("Location"))
					}
					continue
				}
				if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
					t.Errorf("GET %s with %s credentials = %d, want 401 with WWW-Authenticate", p, name, resp.StatusCode)
				}
			}
		}
		before := b.counts(t)
		r := b.call(t, "", "POST", "/v1/jobs", map[string]any{"jobs": []any{map[string]any{"kind": "k", "args": map[string]any{"n": 1}}}}, true)
		if r.status != http.StatusUnauthorized || !strings.Contains(r.errorMessage(t), "bearer token") {
			t.Fatalf("enqueue without a token = %d %s", r.status, r.body)
		}
		if after := b.counts(t); !maps.Equal(after, before) {
			t.Fatalf("an unauthenticated enqueue changed the store: %v -> %v", before, after)
		}
	})
}

// noRedirect shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func TestEnqueueInspectCancelRetry(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		runAt := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
		ids := b.enqueue(t,
			map[string]any{"kind": "email", "args": map[string]any{"to": "ada"}, "tags": []string{"a", "b"},
				"metadata": map[string]any{"team": "x"}, "priority": 3, "max_attempts": 4},
			map[string]any{"kind": "report", "args": map[string]any{"pages": []int{1, 2}}, "queue": "reports", "run_at": runAt},
		)
		row := b.stored(t, ids[0])
		if row.Kind != "email" || string(row.EncodedArgs) != `{"to": "ada"}` && string(row.EncodedArgs) != `{"to":"ada"}` ||
			row.Priority != 3 || row.MaxAttempts != 4 || strings.Join(row.Tags, ",") != "a,b" || row.State != drovertype.JobStateAvailable {
			t.Fatalf("stored job = %+v", row)
		}
		if row := b.stored(t, ids[1]); row.Queue != "reports" || row.State != drovertype.JobStateScheduled || !row.RunAt.Equal(runAt) {
			t.Fatalf("scheduled job = %+v", row)
		}

		var got job
		b.must(t, http.StatusOK, server.ScopeEnqueue, "GET", fmt.Sprintf("/v1/jobs/%d", ids[0]), nil).decode(t, &got)
		if got.ID != ids[0] || got.State != "available" || got.Kind != "email" || !jsonEqual(t, got.Args, `{"to":"ada"}`) {
			t.Fatalf("GET job = %+v", got)
		}

		var page struct {
			Jobs      []job  `json:"jobs"`
			NextAfter *int64 `json:"next_after"`
		}
		b.must(t, http.StatusOK, server.ScopeAdmin, "GET", "/v1/jobs?state=scheduled", nil).decode(t, &page)
		if len(page.Jobs) != 1 || page.Jobs[0].ID != ids[1] || page.NextAfter != nil {
			t.Fatalf("list scheduled = %+v", page)
		}
		b.must(t, http.StatusOK, server.ScopeAdmin, "GET", "/v1/jobs?limit=1", nil).decode(t, &page)
		if len(page.Jobs) != 1 || page.NextAfter == nil || *page.NextAfter != ids[0] {
			t.Fatalf("first page = %+v", page)
		}
		b.must(t, http.StatusOK, server.ScopeAdmin, "GET", fmt.Sprintf("/v1/jobs?limit=1&after=%d", *page.NextAfter), nil).decode(t, &page)
		if len(page.Jobs) != 1 || page.Jobs[0].ID != ids[1] {
			t.Fatalf("second page = %+v", page)
		}

		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", fmt.Sprintf("/v1/jobs/%d/cancel", ids[0]), nil).decode(t, &got)
		if got.State != "cancelled" || b.stored(t, ids[0]).State != drovertype.JobStateCancelled {
			t.Fatalf("cancel answered %s, store has %s", got.State, b.stored(t, ids[0]).State)
		}
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", fmt.Sprintf("/v1/jobs/%d/retry", ids[0]), nil).decode(t, &got)
		if got.State != "available" || b.stored(t, ids[0]).State != drovertype.JobStateAvailable {
			t.Fatalf("retry answered %s, store has %s", got.State, b.stored(t, ids[0]).State)
		}

		var stats struct {
			Counts map[string]int64 `json:"counts"`
		}
		b.must(t, http.StatusOK, server.ScopeAdmin, "GET", "/v1/stats", nil).decode(t, &stats)
		if stats.Counts["available"] != 1 || stats.Counts["scheduled"] != 1 || stats.Counts["completed"] != 0 {
			t.Fatalf("stats = %v", stats.Counts)
		}
		b.must(t, http.StatusOK, server.ScopeAdmin, "GET", "/v1/stats?queue=reports", nil).decode(t, &stats)
		if stats.Counts["available"] != 0 || stats.Counts["scheduled"] != 1 {
			t.Fatalf("stats of queue reports = %v", stats.Counts)
		}
		r := b.call(t, server.ScopeAdmin, "GET", "/v1/jobs/999999", nil, true)
		if r.status != http.StatusNotFound || !strings.Contains(r.errorMessage(t), "999999") {
			t.Fatalf("missing job = %d %s", r.status, r.body)
		}
	})
}

// TestRemoteWorkerLifecycle works jobs the way a worker in another language
// would: claim a batch, heartbeat, report a mix of outcomes; the store
// must hold exactly what was reported.
func TestRemoteWorkerLifecycle(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		ids := b.enqueue(t,
			map[string]any{"kind": "k", "args": map[string]any{"n": 1}},
			map[string]any{"kind": "k", "args": map[string]any{"n": 2}, "max_attempts": 3},
			map[string]any{"kind": "k", "args": map[string]any{"n": 3}, "max_attempts": 1},
			map[string]any{"kind": "k", "args": map[string]any{"n": 4}},
			map[string]any{"kind": "k", "args": map[string]any{"n": 5}, "queue": "other"},
		)
		jobs := b.claim(t, map[string]any{"queue": "default", "worker": "py-7", "max": 10, "lease_ms": 60000})
		if len(jobs) != 4 {
			t.Fatalf("claimed %d jobs, want the 4 of queue default", len(jobs))
		}
		for i, j := range jobs {
			if j.ID != ids[i] || j.Attempt != 1 || j.State != "running" || j.LeaseOwner != "py-7" || j.LeaseExpiresAt == nil {
				t.Fatalf("claimed job %d = %+v", i, j)
			}
		}
		if again := b.claim(t, map[string]any{"queue": "default", "worker": "py-8"}); len(again) != 0 {
			t.Fatalf("a second worker claimed %d held jobs", len(again))
		}

		// Cancel one while it runs: the next heartbeat says so.
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", fmt.Sprintf("/v1/jobs/%d/cancel", ids[3]), nil)
		var hb struct {
			Lost            []int64 `json:"lost"`
			CancelRequested []int64 `json:"cancel_requested"`
		}
		attempts := []any{}
		for _, j := range jobs {
			attempts = append(attempts, map[string]any{"id": j.ID, "attempt": j.Attempt, "lease_token": j.LeaseToken})
		}
		before := b.stored(t, ids[0]).LeaseExpiresAt
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/heartbeat", map[string]any{"lease_ms": 120000, "attempts": attempts}).decode(t, &hb)
		if len(hb.Lost) != 0 || len(hb.CancelRequested) != 1 || hb.CancelRequested[0] != ids[3] {
			t.Fatalf("heartbeat = %+v, want job %d asked to cancel", hb, ids[3])
		}
		if after := b.stored(t, ids[0]).LeaseExpiresAt; !after.After(*before) {
			t.Fatalf("heartbeat did not extend the lease: %v -> %v", before, after)
		}

		var fin struct{ Accepted, Rejected []int64 }
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/finish", map[string]any{"results": []any{
			map[string]any{"id": ids[0], "attempt": 1, "lease_token": b.lease(ids[0]), "outcome": "completed"},
			map[string]any{"id": ids[1], "attempt": 1, "lease_token": b.lease(ids[1]), "outcome": "failed", "max_attempts": 3, "error": "timeout talking to S3", "trace": "File x.py, line 3"},
			map[string]any{"id": ids[2], "attempt": 1, "lease_token": b.lease(ids[2]), "outcome": "failed", "max_attempts": 1, "error": "bad row"},
			map[string]any{"id": ids[3], "attempt": 1, "lease_token": b.lease(ids[3]), "outcome": "cancelled", "error": "asked to stop"},
			map[string]any{"id": ids[4], "attempt": 1, "lease_token": b.lease(ids[4]), "outcome": "completed"},
		}}).decode(t, &fin)
		if len(fin.Accepted) != 4 || len(fin.Rejected) != 1 || fin.Rejected[0] != ids[4] {
			t.Fatalf("finish = %+v, want job %d (never claimed) rejected", fin, ids[4])
		}
		want := map[int64]drovertype.JobState{ids[0]: drovertype.JobStateCompleted, ids[1]: drovertype.JobStateRetryable,
			ids[2]: drovertype.JobStateDiscarded, ids[3]: drovertype.JobStateCancelled, ids[4]: drovertype.JobStateAvailable}
		for id, st := range want {
			if got := b.stored(t, id).State; got != st {
				t.Errorf("job %d is %s, want %s", id, got, st)
			}
		}
		if row := b.stored(t, ids[1]); len(row.Errors) != 1 || row.Errors[0].Error != "timeout talking to S3" || row.Errors[0].Trace != "File x.py, line 3" {
			t.Fatalf("failed job errors = %+v", row.Errors)
		}
	})
}

// TestWorkerDeathLosesNoJob: a worker claims and dies without a word. When
// its lease expires the job is rescued and claimed again under attempt 2;
// the dead worker's late result is rejected and changes nothing.
func TestWorkerDeathLosesNoJob(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		id := b.enqueue(t, map[string]any{"kind": "k", "args": map[string]any{"n": 1}})[0]
		if jobs := b.claim(t, map[string]any{"queue": "default", "worker": "dies", "lease_ms": 1000}); len(jobs) != 1 {
			t.Fatalf("claimed %d", len(jobs))
		}
		dead := b.lease(id)
		// The server's client runs the rescuer once started.
		if err := b.client.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = b.client.Stop(ctx)
		})
		var jobs []job
		waitfor.Cond(t, "the rescued job to be claimable", func() bool {
			jobs = b.claim(t, map[string]any{"queue": "default", "worker": "lives", "wait_ms": 500})
			return len(jobs) == 1
		})
		if jobs[0].ID != id || jobs[0].Attempt != 2 || len(jobs[0].Errors) != 1 || !strings.Contains(jobs[0].Errors[0].Error, "lease expired") {
			t.Fatalf("reclaimed job = %+v", jobs[0])
		}
		var fin struct{ Accepted, Rejected []int64 }
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/finish", map[string]any{"results": []any{
			map[string]any{"id": id, "attempt": 1, "lease_token": dead, "outcome": "completed"}}}).decode(t, &fin)
		if len(fin.Rejected) != 1 || len(fin.Accepted) != 0 {
			t.Fatalf("late result = %+v, want rejected", fin)
		}
		if row := b.stored(t, id); row.State != drovertype.JobStateRunning || row.LeaseOwner != "lives" || row.Attempt != 2 {
			t.Fatalf("late result changed the job: %+v", row)
		}
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/finish", map[string]any{"results": []any{
			map[string]any{"id": id, "attempt": 2, "lease_token": b.lease(id), "outcome": "completed"}}}).decode(t, &fin)
		if len(fin.Accepted) != 1 || b.stored(t, id).State != drovertype.JobStateCompleted {
			t.Fatalf("live result = %+v, job %s", fin, b.stored(t, id).State)
		}
	})
}

// TestLongPollReturnsJobsThatArrive: a claim waiting on an empty queue
// returns the job enqueued while it waits.
func TestLongPollReturnsJobsThatArrive(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		var wg sync.WaitGroup
		var jobs []job
		wg.Add(1)
		go func() {
			defer wg.Done()
			jobs = b.claim(t, map[string]any{"queue": "slow", "worker": "w", "wait_ms": 5000})
		}()
		time.Sleep(100 * time.Millisecond) // let the claim start waiting; the test holds either way
		id := b.enqueue(t, map[string]any{"kind": "k", "args": map[string]any{"n": 1}, "queue": "slow"})[0]
		wg.Wait()
		if len(jobs) != 1 || jobs[0].ID != id {
			t.Fatalf("long poll returned %+v, want job %d", jobs, id)
		}
		// An empty queue answers an empty list once the wait is over.
		if jobs := b.claim(t, map[string]any{"queue": "slow", "worker": "w", "wait_ms": 50}); len(jobs) != 0 {
			t.Fatalf("empty queue returned %+v", jobs)
		}
	})
}

// TestBadInput sends requests that are wrong in one way each: every one
// gets a 4xx JSON error naming the problem, and the store is unchanged.
func TestBadInput(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		id := b.enqueue(t, map[string]any{"kind": "k", "args": map[string]any{"n": 1}})[0]
		b.claim(t, map[string]any{"queue": "default", "worker": "w"})
		big := strings.Repeat("x", 70<<10)
		many := make([]any, 101)
		for i := range many {
			many[i] = map[string]any{"kind": "k", "args": map[string]any{"n": i}}
		}
		cases := []struct {
			name         string
			scope        server.Scope
			method, path string
			body         any
			status       int
			want         string
		}{
			{"not json", server.ScopeEnqueue, "POST", "/v1/jobs", `{"jobs": [`, 400, "JSON ends early"},
			{"syntax", server.ScopeEnqueue, "POST", "/v1/jobs", `{"jobs": [}`, 400, "invalid JSON at offset"},
			{"empty body", server.ScopeEnqueue, "POST", "/v1/jobs", ``, 400, "empty"},
			{"trailing data", server.ScopeEnqueue, "POST", "/v1/jobs", `{"jobs":[{"kind":"k","args":{"n":1}}]} {}`, 400, "after the JSON object"},
			{"unknown field", server.ScopeEnqueue, "POST", "/v1/jobs", `{"jobs":[{"kind":"k","args":{"n":1},"queu":"x"}]}`, 400, `unknown field "queu"`},
			{"wrong type", server.ScopeEnqueue, "POST", "/v1/jobs", `{"jobs":[{"kind":"k","args":{"n":1},"priority":"high"}]}`, 400, "priority"},
			{"no jobs", server.ScopeEnqueue, "POST", "/v1/jobs", `{"jobs":[]}`, 400, "jobs: empty"},
			{"no args", server.ScopeEnqueue, "POST", "/v1/jobs", `{"jobs":[{"kind":"k"}]}`, 400, "jobs[0].args: required"},
			{"bad kind", server.ScopeEnqueue, "POST", "/v1/jobs", `{"jobs":[{"kind":"k","args":{"n":1}},{"kind":"no spaces","args":{"n":1}}]}`, 400, `job 2 of 2: kind "no spaces"`},
			{"bad queue", server.ScopeEnqueue, "POST", "/v1/jobs", `{"jobs":[{"kind":"k","args":{"n":1},"queue":"a b"}]}`, 400, `queue "a b"`},
			{"bad priority", server.ScopeEnqueue, "POST", "/v1/jobs", `{"jobs":[{"kind":"k","args":{"n":1},"priority":40000}]}`, 400, "priority 40000"},
			{"metadata not object", server.ScopeEnqueue, "POST", "/v1/jobs", `{"jobs":[{"kind":"k","args":{"n":1},"metadata":[1]}]}`, 400, "jobs[0].metadata: must be a JSON object, got an array"},
			{"args a number", server.ScopeEnqueue, "POST", "/v1/jobs", `{"jobs":[{"kind":"k","args":{}},{"kind":"k","args":1}]}`, 400, "jobs[1].args: must be a JSON object, got a number"},
			{"args a string", server.ScopeEnqueue, "POST", "/v1/jobs", `{"jobs":[{"kind":"k","args":"x"}]}`, 400, "jobs[0].args: must be a JSON object, got a string"},
			{"args an array", server.ScopeEnqueue, "POST", "/v1/batches", `{"jobs":[{"kind":"k","args":[1]}]}`, 400, "jobs[0].args: must be a JSON object, got an array"},
			{"args null", server.ScopeEnqueue, "POST", "/v1/jobs", `{"jobs":[{"kind":"k","args":null}]}`, 400, "jobs[0].args: must be a JSON object, got null"},
			{"callback args not object", server.ScopeEnqueue, "POST", "/v1/batches", `{"jobs":[{"kind":"k","args":{}}],"callback":{"kind":"cb","args":true}}`, 400, "callback.args: must be a JSON object, got a boolean"},
			{"run_at not RFC 3339", server.ScopeEnqueue, "POST", "/v1/jobs", `{"jobs":[{"kind":"k","args":{},"run_at":"tomorrow"}]}`, 400, `jobs.run_at: want an RFC 3339 time such as "2026-05-01T09:30:00Z"`},
			{"run_at without zone", server.ScopeEnqueue, "POST", "/v1/jobs", `{"jobs":[{"kind":"k","args":{},"run_at":"2026-05-01 09:30:00"}]}`, 400, `got "2026-05-01 09:30:00"`},
			{"run_at a number", server.ScopeEnqueue, "POST", "/v1/jobs", `{"jobs":[{"kind":"k","args":{},"run_at":1767225600}]}`, 400, "jobs.run_at: want an RFC 3339 time"},
			{"callback run_at", server.ScopeEnqueue, "POST", "/v1/batches", `{"jobs":[{"kind":"k","args":{}}],"callback":{"kind":"cb","args":{},"run_at":"soon"}}`, 400, "callback.run_at: want an RFC 3339 time"},
			{"finish bad retry_at", server.ScopeWork, "POST", "/v1/finish", fmt.Sprintf(`{"results":[{"id":%d,"attempt":1,"outcome":"failed","retry_at":"in 5 minutes"}]}`, id), 400, "results.retry_at: want an RFC 3339 time"},
			{"negative timeout", server.ScopeEnqueue, "POST", "/v1/jobs", `{"jobs":[{"kind":"k","args":{"n":1},"timeout_ms":-1}]}`, 400, "timeout_ms -1"},
			{"body too large", server.ScopeEnqueue, "POST", "/v1/jobs", `{"jobs":[{"kind":"k","args":"` + big + `"}]}`, 413, "over the limit of 65536 bytes"},
			{"batch too large", server.ScopeEnqueue, "POST", "/v1/jobs", map[string]any{"jobs": many}, 413, "101 is over the limit of 100"},
			{"form body", server.ScopeEnqueue, "POST", "/v1/jobs", nil, 415, "send application/json"},
			{"claim without worker", server.ScopeWork, "POST", "/v1/claim", `{"queue":"default"}`, 400, "worker: required"},
			{"claim bad max", server.ScopeWork, "POST", "/v1/claim", `{"queue":"default","worker":"w","max":5000}`, 400, "max 5000"},
			{"claim short lease", server.ScopeWork, "POST", "/v1/claim", `{"queue":"default","worker":"w","lease_ms":10}`, 400, "lease 10ms"},
			{"claim long wait", server.ScopeWork, "POST", "/v1/claim", `{"queue":"default","worker":"w","wait_ms":600000}`, 400, "wait_ms 600000"},
			{"claim bad queue", server.ScopeWork, "POST", "/v1/claim", `{"queue":"","worker":"w"}`, 400, `queue ""`},
			{"finish empty", server.ScopeWork, "POST", "/v1/finish", `{"results":[]}`, 400, "results: empty"},
			{"finish bad outcome", server.ScopeWork, "POST", "/v1/finish", fmt.Sprintf(`{"results":[{"id":%d,"attempt":1,"outcome":"ok"}]}`, id), 400, `outcome "ok"`},
			{"finish bad lease token", server.ScopeWork, "POST", "/v1/finish", fmt.Sprintf(`{"results":[{"id":%d,"attempt":1,"lease_token":"nothex","outcome":"failed"}]}`, id), 400, "lease token"},
			{"finish attempt 0", server.ScopeWork, "POST", "/v1/finish", fmt.Sprintf(`{"results":[{"id":%d,"attempt":0,"outcome":"completed"}]}`, id), 400, "attempt 0"},
			{"heartbeat bad lease", server.ScopeWork, "POST", "/v1/heartbeat", fmt.Sprintf(`{"lease_ms":1,"attempts":[{"id":%d,"attempt":1}]}`, id), 400, "lease 1ms"},
			{"heartbeat empty", server.ScopeWork, "POST", "/v1/heartbeat", `{"attempts":[]}`, 400, "attempts: empty"},
			{"bad id", server.ScopeAdmin, "GET", "/v1/jobs/abc", nil, 400, `job id "abc"`},
			{"negative id", server.ScopeAdmin, "POST", "/v1/jobs/-3/retry", nil, 400, `job id "-3"`},
			{"unknown cancel", server.ScopeAdmin, "POST", "/v1/jobs/123456/cancel", nil, 404, "123456"},
			{"bad state", server.ScopeAdmin, "GET", "/v1/jobs?state=done", nil, 400, `state "done"`},
			{"bad limit", server.ScopeAdmin, "GET", "/v1/jobs?limit=0", nil, 400, `limit "0"`},
			{"huge limit", server.ScopeAdmin, "GET", "/v1/jobs?limit=20000", nil, 400, "limit 20000"},
			{"unknown parameter", server.ScopeAdmin, "GET", "/v1/jobs?sort=id", nil, 400, `query parameter "sort"`},
			{"stats bad queue", server.ScopeAdmin, "GET", "/v1/stats?queue=a%20b", nil, 400, `queue "a b"`},
			{"unknown path", server.ScopeAdmin, "GET", "/v2/jobs", nil, 404, "no such endpoint: GET /v2/jobs"},
			{"wrong method", server.ScopeAdmin, "DELETE", "/v1/jobs/1", nil, 405, "method DELETE not allowed"},
		}
		before := b.counts(t)
		held := b.stored(t, id)
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				var r response
				if c.name == "form body" {
					req, _ := http.NewRequest(c.method, b.url+c.path, strings.NewReader("a=b"))
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
					req.Header.Set("Authorization", "Bearer "+b.tokens[c.scope])
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					defer resp.Body.Close()
					r = response{status: resp.StatusCode}
					r.body, _ = io.ReadAll(resp.Body)
				} else {
					r = b.call(t, c.scope, c.method, c.path, c.body, false)
				}
				if r.status != c.status {
					t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
				}
				if msg := r.errorMessage(t); !strings.Contains(msg, c.want) {
					t.Fatalf("message %q does not name the problem (want %q)", msg, c.want)
				}
			})
		}
		if after := b.counts(t); !maps.Equal(after, before) {
			t.Fatalf("bad requests changed the store: %v -> %v", before, after)
		}
		if row := b.stored(t, id); row.State != drovertype.JobStateRunning || row.Attempt != held.Attempt || len(row.Errors) != 0 {
			t.Fatalf("bad requests changed the held job: %+v", row)
		}
	})
}

func TestReadiness(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		var ready struct {
			Ready  bool              `json:"ready"`
			Checks map[string]string `json:"checks"`
		}
		b.must(t, http.StatusOK, server.ScopeWork, "GET", "/readyz", nil).decode(t, &ready)
		if !ready.Ready || ready.Checks["database"] != "ok" || ready.Checks["schema"] != "ok" || ready.Checks["loops"] != "ok" {
			t.Fatalf("readyz = %+v", ready)
		}
	})
	t.Run("schema behind", func(t *testing.T) {
		d, err := droversqlite.Open(context.Background(), filepath.Join(t.TempDir(), "unmigrated.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if ready := readinessOf(t, d); ready.Ready || !strings.Contains(ready.Checks["schema"], "drover migrate") {
			t.Fatalf("readyz on an unmigrated store = %+v", ready)
		}
	})
}

func TestParseTokens(t *testing.T) {
	_, tok, err := server.NewToken("ci", []server.Scope{server.ScopeEnqueue, server.ScopeWork})
	if err != nil {
		t.Fatal(err)
	}
	good := "# tokens\n\n" + tok.Line() + "\n"
	toks, err := server.ParseTokens(strings.NewReader(good))
	if err != nil || len(toks) != 1 || toks[0].Name != "ci" || !toks[0].Allows(server.ScopeWork) || toks[0].Allows(server.ScopeAdmin) {
		t.Fatalf("ParseTokens(%q) = %+v, %v", good, toks, err)
	}
	hash := strings.Fields(tok.Line())[2]
	for _, c := range []struct{ in, want string }{
		{"ci enqueue", "line 1: want NAME SCOPES sha256:HEX"},
		{"ci root " + hash, `line 1: unknown scope "root"`},
		{"ci work drv_secret", "never the token itself"},
		{"ci work sha256:abcd", "64 hex digits"},
		{"c!i work " + hash, `token name "c!i"`},
		{"a work " + hash + "\nb admin " + hash, "line 2: the same token hash appears twice"},
		{"a work " + hash + "\na admin sha256:" + strings.Repeat("0", 64), `line 2: token name "a" is used twice`},
	} {
		if _, err := server.ParseTokens(strings.NewReader(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseTokens(%q) = %v, want an error containing %q", c.in, err, c.want)
		}
	}
	if _, _, err := server.NewToken("x", []server.Scope{"everything"}); err == nil || !strings.Contains(err.Error(), `unknown scope "everything"`) {
		t.Errorf("NewToken with a bad scope = %v", err)
	}
}
