package server_test

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/server"
)

// TestPoisonInputAnswers400 sends values the store cannot hold (invalid
// UTF-8, NUL, \u0000, times out of range, numbers past 32 bits): each
// gets a 400 naming the field, quoting no more than a short prefix of the
// value, and the store is unchanged. Before, these reached the store and
// answered 500, or were stored raw and broke the workers that claimed
// them.
func TestPoisonInputAnswers400(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		id := b.enqueue(t, map[string]any{"kind": "k", "args": map[string]any{"n": 1}})[0]
		held := b.claim(t, map[string]any{"queue": "default", "worker": "w"})[0]
		finish := func(fields string) string {
			return fmt.Sprintf(`{"results":[{"id":%d,"attempt":%d,"lease_token":%q,%s}]}`, id, held.Attempt, held.LeaseToken, fields)
		}
		longWorker := strings.Repeat("w", 60<<10)
		cases := []struct {
			name, path, body, want string
		}{
			{"args with invalid UTF-8", "/v1/jobs", "{\"jobs\":[{\"kind\":\"k\",\"args\":{}},{\"kind\":\"k\",\"args\":{\"s\":\"\xff bad\"}}]}", "job 2 of 2: args: invalid UTF-8 at byte 6"},
			{"args with NUL", "/v1/jobs", `{"jobs":[{"kind":"k","args":{"a":"\u0000"}}]}`, `job 1 of 1: args: contains \u0000`},
			{"metadata with NUL", "/v1/jobs", `{"jobs":[{"kind":"k","args":{"n":1},"metadata":{"a":"x\u0000"}}]}`, `job 1 of 1: metadata: contains \u0000`},
			{"tag with NUL", "/v1/jobs", `{"jobs":[{"kind":"k","args":{"n":1},"tags":["a\u0000"]}]}`, `job 1 of 1: tags[0]: contains a NUL`},
			{"unique key with NUL", "/v1/jobs", `{"jobs":[{"kind":"k","args":{"n":1},"unique_key":"u\u0000"}]}`, "job 1 of 1: unique key: contains a NUL"},
			{"run_at past 9999", "/v1/jobs", `{"jobs":[{"kind":"k","args":{"n":1},"run_at":"9999-12-31T23:00:00-05:00"}]}`, "job 1 of 1: run at 10000-"},
			{"batch args with NUL", "/v1/batches", `{"jobs":[{"kind":"k","args":{"s":"\u0000"}}]}`, `job 1 of 1: args: contains \u0000`},
			{"worker with NUL", "/v1/claim", `{"queue":"default","worker":"w\u0000"}`, "worker: owner: contains a NUL"},
			{"worker too long", "/v1/claim", `{"queue":"default","worker":"` + longWorker + `"}`, "worker: owner \"wwww"},
			{"result with NUL", "/v1/finish", finish(`"outcome":"completed","result":{"a":"\u0000"}`), `result: contains \u0000`},
			{"retry_at past 9999", "/v1/finish", finish(`"outcome":"failed","max_attempts":5,"retry_at":"9999-12-31T23:00:00-05:00"`), "retry at 10000-"},
			{"retry_at before 1970", "/v1/finish", finish(`"outcome":"failed","max_attempts":5,"retry_at":"1969-12-31T00:00:00Z"`), "retry at 1969-"},
			{"attempt past 32 bits", "/v1/finish", fmt.Sprintf(`{"results":[{"id":%d,"attempt":2147483648,"lease_token":%q,"outcome":"completed"}]}`, id, held.LeaseToken), "attempt 2147483648"},
			{"heartbeat attempt past 32 bits", "/v1/heartbeat", fmt.Sprintf(`{"attempts":[{"id":%d,"attempt":2147483648,"lease_token":%q}]}`, id, held.LeaseToken), "attempt 2147483648"},
		}
		before := b.counts(t)
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				scope := server.ScopeWork
				if c.path == "/v1/jobs" || c.path == "/v1/batches" {
					scope = server.ScopeEnqueue
				}
				r := b.call(t, scope, "POST", c.path, c.body, false)
				if r.status != http.StatusBadRequest {
					t.Fatalf("status %d, want 400: %.300s", r.status, r.body)
				}
				if msg := r.errorMessage(t); !strings.Contains(msg, c.want) || len(msg) > 300 {
					t.Fatalf("message %.400q does not name the problem (want %q) in a few words", msg, c.want)
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

// TestFinishErrorWithNULIsStoredSafe: a remote worker's error and trace
// holding a NUL are stored with U+FFFD in its place, instead of failing
// the whole finish with a 500, and the other results of the request land.
func TestFinishErrorWithNULIsStoredSafe(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		ids := b.enqueue(t, map[string]any{"kind": "k", "args": map[string]any{"n": 1}, "max_attempts": 1}, map[string]any{"kind": "k", "args": map[string]any{"n": 2}})
		jobs := b.claim(t, map[string]any{"queue": "default", "worker": "w", "max": 2})
		if len(jobs) != 2 {
			t.Fatalf("claimed %d jobs, want 2", len(jobs))
		}
		token := map[int64]string{jobs[0].ID: jobs[0].LeaseToken, jobs[1].ID: jobs[1].LeaseToken}
		var out struct{ Accepted, Rejected []int64 }
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/finish", fmt.Sprintf(`{"results":[
			{"id":%d,"attempt":1,"lease_token":%q,"outcome":"failed","max_attempts":1,"error":"x\u0000y","trace":"at\u0000line"},
			{"id":%d,"attempt":1,"lease_token":%q,"outcome":"completed"}]}`, ids[0], token[ids[0]], ids[1], token[ids[1]])).decode(t, &out)
		if len(out.Accepted) != 2 {
			t.Fatalf("finish accepted %v, rejected %v; want both accepted", out.Accepted, out.Rejected)
		}
		var got job
		b.must(t, http.StatusOK, server.ScopeAdmin, "GET", fmt.Sprintf("/v1/jobs/%d", ids[0]), nil).decode(t, &got)
		if got.State != "discarded" || len(got.Errors) != 1 || got.Errors[0].Error != "x\uFFFDy" || got.Errors[0].Trace != "at\uFFFDline" {
			t.Fatalf("job %+v, want discarded with its error and trace made safe", got)
		}
		if row := b.stored(t, ids[1]); row.State != drovertype.JobStateCompleted {
			t.Fatalf("job %d is %s, want completed", ids[1], row.State)
		}
	})
}

// TestHugeMillisecondsAreRefused: lease_ms and wait_ms past what a
// duration holds are refused by their range checks instead of wrapping
// into a small, valid-looking lease (18446744073770 ms wrapped to about
// 60 s), and nothing is claimed.
func TestHugeMillisecondsAreRefused(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		id := b.enqueue(t, map[string]any{"kind": "k", "args": map[string]any{"n": 1}})[0]
		for _, body := range []map[string]any{
			{"queue": "default", "worker": "w", "lease_ms": int64(18446744073770)},
			{"queue": "default", "worker": "w", "wait_ms": int64(18446744073710)},
		} {
			if r := b.call(t, server.ScopeWork, "POST", "/v1/claim", body, false); r.status != http.StatusBadRequest {
				t.Errorf("claim %v = %d %s, want 400", body, r.status, r.body)
			}
		}
		if row := b.stored(t, id); row.State != drovertype.JobStateAvailable {
			t.Fatalf("job %d is %s after refused claims, want available", id, row.State)
		}
	})
}

// TestRemoteFinishIsolatesRefusedResult: one result the store cannot hold
// among good ones, sent over POST /v1/finish, fails only its own job, as a
// Go worker's would (internal/completer/refuse.go): the good results are
// written, the refused one becomes a failed attempt naming the store's
// refusal (a completed one is discarded, its handler having run to the
// end), and the answer says so per job. Before, the whole request failed
// with a 500 and every job waited out its lease. The result is valid JSON
// that each store refuses: PostgreSQL's jsonb holds no number of 200,000
// digits, SQLite's JSON functions no nesting 1,500 deep.
func TestRemoteFinishIsolatesRefusedResult(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		jobs := make([]map[string]any, 5)
		for i := range jobs {
			jobs[i] = map[string]any{"kind": "k", "args": map[string]any{"n": i}, "max_attempts": 3}
		}
		ids := b.enqueue(t, jobs...)
		held := b.claim(t, map[string]any{"queue": "default", "worker": "w", "max": 5})
		if len(held) != 5 {
			t.Fatalf("claimed %d jobs, want 5", len(held))
		}
		const bad = 2
		refused := `{"n":1e200000,"deep":` + strings.Repeat("[", 1500) + strings.Repeat("]", 1500) + `}`
		results := make([]string, len(held))
		for i, j := range held {
			result := fmt.Sprintf(`{"i":%d}`, i)
			if i == bad {
				result = refused
			}
			results[i] = fmt.Sprintf(`{"id":%d,"attempt":%d,"lease_token":%q,"outcome":"completed","result":%s}`, j.ID, j.Attempt, j.LeaseToken, result)
		}
		var out struct {
			Accepted []int64 `json:"accepted"`
			Rejected []int64 `json:"rejected"`
			Refused  []struct {
				ID       int64  `json:"id"`
				Error    string `json:"error"`
				Recorded bool   `json:"recorded"`
			} `json:"refused"`
		}
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/finish", `{"results":[`+strings.Join(results, ",")+`]}`).decode(t, &out)
		badID := held[bad].ID
		if len(out.Accepted) != 4 || slices.Contains(out.Accepted, badID) || len(out.Rejected) != 0 {
			t.Fatalf("accepted %v, rejected %v; want every job but %d accepted", out.Accepted, out.Rejected, badID)
		}
		if len(out.Refused) != 1 || out.Refused[0].ID != badID || !out.Refused[0].Recorded ||
			!strings.Contains(out.Refused[0].Error, "the store refused this attempt's result") {
			t.Fatalf("refused %+v, want job %d, recorded as failed with the store's reason", out.Refused, badID)
		}
		for _, id := range ids {
			row := b.stored(t, id)
			if id != badID {
				if row.State != drovertype.JobStateCompleted {
					t.Fatalf("job %d is %s, want completed", id, row.State)
				}
				continue
			}
			if row.State != drovertype.JobStateDiscarded || len(row.Errors) != 1 || !strings.Contains(row.Errors[0].Error, "the store refused") {
				t.Fatalf("job %d is %s with errors %+v, want discarded with one error naming the refusal", id, row.State, row.Errors)
			}
		}
	})
}

// TestDuplicateKeysAreRefused: a request naming a key twice in one object
// is refused with a 400 naming the key, and stores nothing, on every
// endpoint (the server's shared decode), while the caller's own JSON (args)
// keeps whatever keys it has. Before, Go kept the last value silently,
// where a proxy or log in front may have read the first.
func TestDuplicateKeysAreRefused(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		before := b.counts(t)
		for _, c := range []struct {
			scope      server.Scope
			path, body string
			want       string
		}{
			{server.ScopeEnqueue, "/v1/jobs", `{"jobs":[{"kind":"k","args":{},"queue":"a","queue":"b"}]}`, "jobs.queue: given twice"},
			{server.ScopeEnqueue, "/v1/jobs", `{"jobs":[{"kind":"k","args":{}}],"jobs":[]}`, "jobs: given twice"},
			{server.ScopeWork, "/v1/claim", `{"queue":"default","worker":"w","worker_labels":{"z":"1","z":"2"}}`, "worker_labels.z: given twice"},
			{server.ScopeAdmin, "/v1/topics", `{"name":"t","lanes":4,"lanes":8}`, "lanes: given twice"},
		} {
			r := b.call(t, c.scope, "POST", c.path, c.body, false)
			if r.status != http.StatusBadRequest || !strings.Contains(r.errorMessage(t), c.want) {
				t.Errorf("POST %s %s = %d %s, want 400 naming %q", c.path, c.body, r.status, r.body, c.want)
			}
		}
		if after := b.counts(t); !maps.Equal(before, after) {
			t.Fatalf("refused requests changed the store: %v, then %v", before, after)
		}
		r := b.call(t, server.ScopeEnqueue, "POST", "/v1/jobs", `{"jobs":[{"kind":"k","args":{"a":1,"a":2}}]}`, false)
		if r.status != http.StatusCreated {
			t.Fatalf("args with a key twice = %d %s, want 201: args are the caller's own JSON", r.status, r.body)
		}
	})
}
