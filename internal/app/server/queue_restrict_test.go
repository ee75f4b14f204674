package server_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/droverhq/drover/internal/app/server"
)

// Pseudo-scopes naming the restricted tokens in bundle.tokens, which
// call looks secrets up in.
const (
	// rEnqueue is an enqueue token restricted to queues a and b.
	rEnqueue server.Scope = "r-enqueue"
	// rWork is a work token restricted to queue a.
	rWork server.Scope = "r-work"
)

// restrictedTokens makes the restricted tokens once and returns a Config
// mutation adding them, and a function that teaches a bundle their
// secrets.
func restrictedTokens(t *testing.T) (func(*server.Config), func(*bundle)) {
	t.Helper()
	secrets := map[server.Scope]string{}
	var toks []server.Token
	for _, c := range []struct {
		key    server.Scope
		scope  server.Scope
		queues []string
	}{
		{rEnqueue, server.ScopeEnqueue, []string{"a", "b"}},
		{rWork, server.ScopeWork, []string{"a"}},
	} {
		secret, tok, err := server.NewToken(string(c.key), []server.Scope{c.scope})
		if err != nil {
			t.Fatal(err)
		}
		if err := tok.Restrict(c.queues); err != nil {
			t.Fatal(err)
		}
		secrets[c.key] = secret
		toks = append(toks, tok)
	}
	return func(cfg *server.Config) { cfg.Tokens = append(cfg.Tokens, toks...) },
		func(b *bundle) {
			for k, v := range secrets {
				b.tokens[k] = v
			}
		}
}

func newJob(queue string) map[string]any {
	j := map[string]any{"kind": "k", "args": map[string]any{}}
	if queue != "" {
		j["queue"] = queue
	}
	return j
}

// TestQueueRestrictedInserts: a restricted token inserts jobs and batches
// only into its queues, counting an absent queue as "default" and a
// batch's callback too, and its jobs depend only on jobs it may see (a
// parent of another queue reads as a missing one) and hold unique keys
// per queue only; a refusal names the queue and stores nothing.
func TestQueueRestrictedInserts(t *testing.T) {
	mutate, learn := restrictedTokens(t)
	forEachStore(t, func(t *testing.T, b *bundle) {
		learn(b)
		parents := b.enqueue(t, newJob("a"), newJob("c"))
		child := func(queue string, parent int64) map[string]any {
			j := newJob(queue)
			j["depends_on"] = []int64{parent}
			return j
		}
		unique := func(queue string, byQueue bool) map[string]any {
			j := newJob(queue)
			j["unique_key"], j["unique_by_queue"] = "u", byQueue
			return j
		}
		const missing = 999999
		for _, c := range []struct {
			name   string
			scope  server.Scope
			path   string
			body   map[string]any
			status int
			queue  string // named by a 403
			parent int64  // named by a 400
		}{
			{"child of its queue's job", rEnqueue, "/v1/jobs", map[string]any{"jobs": []any{child("a", parents[0])}}, http.StatusCreated, "", 0},
			{"child of another queue's job", rEnqueue, "/v1/jobs", map[string]any{"jobs": []any{newJob("a"), child("b", parents[1])}}, http.StatusBadRequest, "", parents[1]},
			{"child of a missing job", rEnqueue, "/v1/jobs", map[string]any{"jobs": []any{child("a", missing)}}, http.StatusBadRequest, "", missing},
			{"unrestricted child of queue c's job", server.ScopeEnqueue, "/v1/jobs", map[string]any{"jobs": []any{child("a", parents[1])}}, http.StatusCreated, "", 0},
			{"unique job held per queue", rEnqueue, "/v1/jobs", map[string]any{"jobs": []any{unique("a", true)}}, http.StatusCreated, "", 0},
			{"unique job held across queues", rEnqueue, "/v1/jobs", map[string]any{"jobs": []any{newJob("a"), unique("a", false)}}, http.StatusForbidden, "", 0},
			{"unrestricted unique job held across queues", server.ScopeEnqueue, "/v1/jobs", map[string]any{"jobs": []any{unique("c", false)}}, http.StatusCreated, "", 0},
			{"job in its queue", rEnqueue, "/v1/jobs", map[string]any{"jobs": []any{newJob("a"), newJob("b")}}, http.StatusCreated, "", 0},
			{"job in another queue", rEnqueue, "/v1/jobs", map[string]any{"jobs": []any{newJob("a"), newJob("c")}}, http.StatusForbidden, "c", 0},
			{"job in the default queue", rEnqueue, "/v1/jobs", map[string]any{"jobs": []any{newJob("")}}, http.StatusForbidden, "default", 0},
			{"unrestricted token", server.ScopeEnqueue, "/v1/jobs", map[string]any{"jobs": []any{newJob("c"), newJob("")}}, http.StatusCreated, "", 0},
			{"batch in its queues", rEnqueue, "/v1/batches",
				map[string]any{"jobs": []any{newJob("a")}, "callback": newJob("b")}, http.StatusCreated, "", 0},
			{"batch member in another queue", rEnqueue, "/v1/batches",
				map[string]any{"jobs": []any{newJob("a"), newJob("c")}}, http.StatusForbidden, "c", 0},
			{"batch callback in another queue", rEnqueue, "/v1/batches",
				map[string]any{"jobs": []any{newJob("a")}, "callback": newJob("c")}, http.StatusForbidden, "c", 0},
			{"batch callback in the default queue", rEnqueue, "/v1/batches",
				map[string]any{"jobs": []any{newJob("a")}, "callback": newJob("")}, http.StatusForbidden, "default", 0},
		} {
			before := b.counts(t)
			r := b.must(t, c.status, c.scope, "POST", c.path, c.body)
			var want string
			switch c.status {
			case http.StatusForbidden:
				want = `token "` + string(c.scope) + `" may not use queue "` + c.queue + `"`
				if c.queue == "" {
					want = `token "r-enqueue" is restricted to queues: a unique_key needs unique_by_queue, so that it is held in the job's queue only`
				}
			case http.StatusBadRequest:
				want = "depends_on: job " + itoa(c.parent) + " not found"
			default:
				continue
			}
			if msg := r.errorMessage(t); msg != want {
				t.Errorf("%s: error %q, want %q", c.name, msg, want)
			}
			if after := b.counts(t); !jsonEqual(t, after, mustJSON(t, before)) {
				t.Errorf("%s: refused, but the store changed: %v, then %v", c.name, before, after)
			}
		}
	}, mutate)
}

// TestQueueRestrictedClaim: a restricted work token claims only from its
// queues, and finishes and extends what it claimed (the lease token is
// the fence there, not the queue).
func TestQueueRestrictedClaim(t *testing.T) {
	mutate, learn := restrictedTokens(t)
	forEachStore(t, func(t *testing.T, b *bundle) {
		learn(b)
		b.enqueue(t, newJob("a"), newJob("b"))
		r := b.must(t, http.StatusForbidden, rWork, "POST", "/v1/claim", map[string]any{"queue": "b", "worker": "w1"})
		if msg := r.errorMessage(t); msg != `token "r-work" may not use queue "b"` {
			t.Errorf("claim of queue b: error %q", msg)
		}
		var out struct{ Jobs []job }
		b.must(t, http.StatusOK, rWork, "POST", "/v1/claim", map[string]any{"queue": "a", "worker": "w1"}).decode(t, &out)
		if len(out.Jobs) != 1 || out.Jobs[0].Queue != "a" {
			t.Fatalf("claim of queue a = %+v, want the job of queue a", out.Jobs)
		}
		j := out.Jobs[0]
		ref := map[string]any{"id": j.ID, "attempt": j.Attempt, "lease_token": j.LeaseToken}
		var hb struct{ Lost []int64 }
		b.must(t, http.StatusOK, rWork, "POST", "/v1/heartbeat", map[string]any{"attempts": []any{ref}}).decode(t, &hb)
		if len(hb.Lost) != 0 {
			t.Fatalf("heartbeat lost %v", hb.Lost)
		}
		ref["outcome"] = "completed"
		var fin struct{ Accepted []int64 }
		b.must(t, http.StatusOK, rWork, "POST", "/v1/finish", map[string]any{"results": []any{ref}}).decode(t, &fin)
		if len(fin.Accepted) != 1 {
			t.Fatalf("finish accepted %v, want job %d", fin.Accepted, j.ID)
		}
		if got := b.stored(t, j.ID).State; got != "completed" {
			t.Fatalf("job %d is %s, want completed", j.ID, got)
		}
	}, mutate)
}

// TestQueueRestrictedReads: a restricted token reads jobs of its queues;
// one of another queue is a 404 worded exactly as a missing job's, the
// list must name one of its queues, and batches, which may span queues,
// are not found.
func TestQueueRestrictedReads(t *testing.T) {
	mutate, learn := restrictedTokens(t)
	forEachStore(t, func(t *testing.T, b *bundle) {
		learn(b)
		ids := b.enqueue(t, newJob("a"), newJob("c"))
		mine, other := ids[0], ids[1]
		const missing = 999999
		var batch struct{ ID int64 }
		b.must(t, http.StatusCreated, server.ScopeEnqueue, "POST", "/v1/batches", map[string]any{"jobs": []any{newJob("a")}}).decode(t, &batch)
		for _, c := range []struct {
			name   string
			scope  server.Scope
			path   string
			status int
			// hidden is the ID a 404 must hide: its message must equal a
			// missing ID's.
			hidden int64
		}{
			{"job of its queue", rEnqueue, "/v1/jobs/" + itoa(mine), http.StatusOK, 0},
			{"job of another queue", rEnqueue, "/v1/jobs/" + itoa(other), http.StatusNotFound, other},
			{"result of its queue", rEnqueue, "/v1/jobs/" + itoa(mine) + "/result", http.StatusOK, 0},
			{"result of another queue", rEnqueue, "/v1/jobs/" + itoa(other) + "/result", http.StatusNotFound, other},
			{"unrestricted job of queue c", server.ScopeEnqueue, "/v1/jobs/" + itoa(other), http.StatusOK, 0},
			{"list of its queue", rEnqueue, "/v1/jobs?queue=a", http.StatusOK, 0},
			{"list of another queue", rEnqueue, "/v1/jobs?queue=c", http.StatusForbidden, 0},
			{"list of every queue", rEnqueue, "/v1/jobs", http.StatusForbidden, 0},
			{"unrestricted list", server.ScopeEnqueue, "/v1/jobs", http.StatusOK, 0},
			{"batch", rEnqueue, "/v1/batches/" + itoa(batch.ID), http.StatusNotFound, 0},
			{"batch results", rEnqueue, "/v1/batches/" + itoa(batch.ID) + "/results", http.StatusNotFound, 0},
			{"unrestricted batch", server.ScopeEnqueue, "/v1/batches/" + itoa(batch.ID), http.StatusOK, 0},
		} {
			r := b.must(t, c.status, c.scope, "GET", c.path, nil)
			switch {
			case c.hidden != 0:
				msg := r.errorMessage(t)
				missingPath := strings.Replace(c.path, itoa(c.hidden), itoa(missing), 1)
				want := b.must(t, http.StatusNotFound, c.scope, "GET", missingPath, nil).errorMessage(t)
				if strings.ReplaceAll(msg, itoa(c.hidden), "N") != strings.ReplaceAll(want, itoa(missing), "N") {
					t.Errorf("%s: 404 %q differs from a missing job's %q", c.name, msg, want)
				}
			case c.status == http.StatusForbidden:
				if msg := r.errorMessage(t); !strings.Contains(msg, `token "r-enqueue"`) {
					t.Errorf("%s: error %q does not name the token", c.name, msg)
				}
			case strings.HasPrefix(c.path, "/v1/jobs?queue="):
				var page struct{ Jobs []job }
				r.decode(t, &page)
				if len(page.Jobs) != 2 {
					t.Errorf("%s: %d jobs, want the 2 of queue a", c.name, len(page.Jobs))
				}
				for _, j := range page.Jobs {
					if j.Queue != "a" {
						t.Errorf("%s: job %d of queue %s listed", c.name, j.ID, j.Queue)
					}
				}
			}
		}
		r := b.must(t, http.StatusForbidden, rEnqueue, "GET", "/v1/jobs?queue=c", nil)
		if msg := r.errorMessage(t); msg != `token "r-enqueue" may not use queue "c"` {
			t.Errorf("list of queue c: error %q", msg)
		}
	}, mutate)
}

// TestQueueRestrictionReload: replacing the tokens (as SIGHUP does)
// replaces a token's restriction on the next request.
func TestQueueRestrictionReload(t *testing.T) {
	mutate, learn := restrictedTokens(t)
	forEachStore(t, func(t *testing.T, b *bundle) {
		learn(b)
		ids := b.enqueue(t, newJob("a"), newJob("c"))
		b.must(t, http.StatusOK, rEnqueue, "GET", "/v1/jobs/"+itoa(ids[0]), nil)
		b.must(t, http.StatusNotFound, rEnqueue, "GET", "/v1/jobs/"+itoa(ids[1]), nil)

		cfg := server.Config{}
		mutate(&cfg)
		toks := cfg.Tokens
		for i := range toks {
			if toks[i].Name == string(rEnqueue) {
				if err := toks[i].Restrict([]string{"c"}); err != nil {
					t.Fatal(err)
				}
			}
		}
		b.srv.SetTokens(toks)
		b.must(t, http.StatusNotFound, rEnqueue, "GET", "/v1/jobs/"+itoa(ids[0]), nil)
		b.must(t, http.StatusOK, rEnqueue, "GET", "/v1/jobs/"+itoa(ids[1]), nil)

		if err := toks[0].Restrict(nil); err != nil {
			t.Fatal(err)
		}
		b.srv.SetTokens(toks)
		b.must(t, http.StatusOK, rEnqueue, "GET", "/v1/jobs/"+itoa(ids[0]), nil)
		b.must(t, http.StatusOK, rEnqueue, "GET", "/v1/jobs", nil)
	}, mutate)
}

// TestParseTokensQueues: the queues= field round-trips through Line, "*"
// means every queue, and bad fields are refused naming the line.
func TestParseTokensQueues(t *testing.T) {
	const hash = "sha256:" + "ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12"
	for _, c := range []struct {
		line   string
		queues []string // nil: every queue
		err    string   // non-empty: the error must contain it
	}{
		{"w work " + hash, nil, ""},
		{"w work " + hash + " queues=*", nil, ""},
		{"w work " + hash + " queues=a", []string{"a"}, ""},
		{"w enqueue,work " + hash + " queues=a,b.c:d", []string{"a", "b.c:d"}, ""},
		{"w work " + hash + " queues=", nil, "line 1: the fourth field must be queues="},
		{"w work " + hash + " queue=a", nil, "line 1: the fourth field must be queues="},
		{"w work " + hash + " a,b", nil, "line 1: the fourth field must be queues="},
		{"w work " + hash + " queues=a,,b", nil, "line 1: "},
		{"w work " + hash + " queues=-a", nil, "queue"},
		{"w work " + hash + " queues=a,a", nil, `queue "a" is listed twice`},
		{"w work " + hash + " queues=a,*", nil, `"*"`},
		{"w work " + hash + " queues=" + strings.Repeat("q", 129), nil, "line 1: "},
		{"w admin " + hash + " queues=a", nil, "admin token cannot be restricted"},
		{"w work,admin " + hash + " queues=a", nil, "admin token cannot be restricted"},
		{"w work " + hash + " queues=a extra", nil, "got 5 fields"},
	} {
		toks, err := server.ParseTokens(strings.NewReader(c.line + "\n"))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want one containing %q", c.line, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.line, err)
			continue
		}
		if !jsonEqual(t, toks[0].Queues, mustJSON(t, c.queues)) {
			t.Errorf("%q: queues %v, want %v", c.line, toks[0].Queues, c.queues)
		}
		again, err := server.ParseTokens(strings.NewReader(toks[0].Line()))
		if err != nil || !jsonEqual(t, again[0].Queues, mustJSON(t, c.queues)) {
			t.Errorf("%q: Line %q does not round-trip: %v, %v", c.line, toks[0].Line(), again, err)
		}
	}
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }

// mustJSON encodes v, for jsonEqual's want.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestQueueRestrictedRouting: GET /v1/workers and GET /v1/unroutable show a
// restricted token only its queues: the workers that work one of them
// (with their other queues left out) and the unroutable jobs waiting in
// them. Before, both answered every queue's workers, names, labels, counts
// and job IDs to any token that could read.
func TestQueueRestrictedRouting(t *testing.T) {
	mutate, learn := restrictedTokens(t)
	forEachStore(t, func(t *testing.T, b *bundle) {
		learn(b)
		// Routed jobs no worker can take, in queue a (the token's) and c.
		b.enqueue(t, map[string]any{"kind": "k", "args": map[string]any{}, "queue": "a", "worker_type": "gpu-a"},
			map[string]any{"kind": "k", "args": map[string]any{}, "queue": "c", "worker_type": "gpu-c"})
		// Worker wa claims from a, wc from c (with an unrestricted token).
		b.claim(t, map[string]any{"queue": "a", "worker": "wa", "worker_name": "wa", "worker_labels": map[string]string{"zone": "a1"}})
		b.claim(t, map[string]any{"queue": "c", "worker": "wc", "worker_name": "wc", "worker_labels": map[string]string{"zone": "secret"}})
		b.claim(t, map[string]any{"queue": "a", "worker": "wac", "worker_name": "wac"})
		b.claim(t, map[string]any{"queue": "c", "worker": "wac", "worker_name": "wac"})

		var ws struct {
			Workers []struct {
				Name   string   `json:"name"`
				Queues []string `json:"queues"`
			} `json:"workers"`
		}
		b.must(t, http.StatusOK, server.ScopeAdmin, "GET", "/v1/workers", nil).decode(t, &ws)
		if len(ws.Workers) != 3 {
			t.Fatalf("an admin token sees workers %+v, want wa, wac and wc", ws.Workers)
		}
		b.must(t, http.StatusOK, rEnqueue, "GET", "/v1/workers", nil).decode(t, &ws)
		got := map[string][]string{}
		for _, w := range ws.Workers {
			got[w.Name] = w.Queues
		}
		if len(got) != 2 || strings.Join(got["wa"], ",") != "a" || strings.Join(got["wac"], ",") != "a" {
			t.Fatalf("a token of queues a and b sees workers %+v, want wa and wac, each with queue a alone", ws.Workers)
		}

		var un struct {
			Unroutable []struct {
				Queue string `json:"queue"`
			} `json:"unroutable"`
		}
		b.must(t, http.StatusOK, server.ScopeAdmin, "GET", "/v1/unroutable", nil).decode(t, &un)
		if len(un.Unroutable) != 2 {
			t.Fatalf("an admin token sees unroutable %+v, want the groups of a and c", un.Unroutable)
		}
		b.must(t, http.StatusOK, rEnqueue, "GET", "/v1/unroutable", nil).decode(t, &un)
		if len(un.Unroutable) != 1 || un.Unroutable[0].Queue != "a" {
			t.Fatalf("a token of queues a and b sees unroutable %+v, want queue a's group alone", un.Unroutable)
		}
	}, mutate)
}
