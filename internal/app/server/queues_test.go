package server_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/app/server"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

type queue struct {
	Name             string     `json:"name"`
	Paused           bool       `json:"paused"`
	GlobalMaxWorkers int        `json:"global_max_workers"`
	UpdatedAt        *time.Time `json:"updated_at"`
}

// TestQueuePauseResume: an admin pauses a queue over HTTP; HTTP workers
// then claim nothing from it (even with a long poll), enqueues still
// succeed, the store holds the pause, and resume lets claims take the
// jobs again.
func TestQueuePauseResume(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		ids := b.enqueue(t, map[string]any{"kind": "email", "args": map[string]any{}, "queue": "mail"})

		var q queue
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/queues/mail/pause", nil).decode(t, &q)
		if q.Name != "mail" || !q.Paused || q.UpdatedAt == nil {
			t.Fatalf("pause answered %+v", q)
		}
		if got, err := b.client.QueueGet(context.Background(), "mail"); err != nil || !got.Paused {
			t.Fatalf("store after pause: %+v, %v", got, err)
		}
		ids = append(ids, b.enqueue(t, map[string]any{"kind": "email", "args": map[string]any{}, "queue": "mail"})...)
		// The server's client changed the setting itself, so its claims
		// see it at once.
		if jobs := b.claim(t, map[string]any{"queue": "mail", "worker": "w1", "max": 5, "wait_ms": 50}); len(jobs) != 0 {
			t.Fatalf("claim of a paused queue took %d jobs", len(jobs))
		}

		var list struct{ Queues []queue }
		b.must(t, http.StatusOK, server.ScopeAdmin, "GET", "/v1/queues", nil).decode(t, &list)
		if len(list.Queues) != 1 || list.Queues[0].Name != "mail" || !list.Queues[0].Paused {
			t.Fatalf("list answered %+v", list)
		}
		ids = append(ids, b.enqueue(t, map[string]any{"kind": "email", "args": map[string]any{}, "queue": "other"})...)
		b.must(t, http.StatusOK, server.ScopeAdmin, "GET", "/v1/queues/other", nil).decode(t, &q)
		if q.Name != "other" || q.Paused || q.UpdatedAt != nil {
			t.Fatalf("a queue without settings answered %+v", q)
		}
		claimed := len(b.claim(t, map[string]any{"queue": "other", "worker": "w1", "max": 5}))

		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/queues/mail/resume", nil).decode(t, &q)
		if q.Paused {
			t.Fatalf("resume answered %+v", q)
		}
		waitfor.Cond(t, "claims of the resumed queue to take its jobs", func() bool {
			claimed += len(b.claim(t, map[string]any{"queue": "mail", "worker": "w1", "max": 5}))
			return claimed == len(ids)
		})
	})
}

// TestQueueEndpointsNeedAdmin: pausing stops every worker of a queue, so
// neither an enqueue nor a work token may, and a bad name is refused.
func TestQueueEndpointsNeedAdmin(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		for _, sc := range []server.Scope{server.ScopeEnqueue, server.ScopeWork} {
			b.must(t, http.StatusForbidden, sc, "POST", "/v1/queues/mail/pause", nil)
			b.must(t, http.StatusForbidden, sc, "GET", "/v1/queues", nil)
		}
		if got, err := b.client.QueueGet(context.Background(), "mail"); err != nil || got.Paused {
			t.Fatalf("store after refused pauses: %+v, %v", got, err)
		}
		r := b.call(t, server.ScopeAdmin, "POST", "/v1/queues/-bad/pause", nil, false)
		if r.status != http.StatusBadRequest {
			t.Fatalf("pause of a bad name = %d: %s", r.status, r.body)
		}
	})
}

// TestDashboardPausesQueue: the overview shows a paused badge for a
// paused queue, even one with no job, and its buttons pause and resume
// the queue in the store.
func TestDashboardPausesQueue(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		admin := map[string]string{"Authorization": "Bearer " + b.tokens[server.ScopeAdmin]}
		if err := b.client.QueuePause(ctx, "idle"); err != nil {
			t.Fatal(err)
		}
		page := b.page(t, "/")
		if !strings.Contains(page, `idle</a> <span class="badge paused">paused</span>`) ||
			!strings.Contains(page, `action="/ui/queues/idle/resume"`) {
			t.Fatalf("overview does not show queue idle as paused with a resume button:\n%s", page)
		}
		status, body, h := b.post(t, "/ui/queues/idle/resume", nil, admin)
		if status != http.StatusSeeOther || h.Get("Location") != "/?done=resume&queue=idle" {
			t.Fatalf("resume = %d to %q: %s", status, h.Get("Location"), body)
		}
		if page := b.page(t, h.Get("Location")); !strings.Contains(page, "Queue idle resumed.") {
			t.Fatalf("overview after resume shows no banner saying so:\n%s", page)
		}
		for _, path := range []string{"/?done=resume&queue=Your+account+is+locked", "/?flash=Your+account+is+locked", "/?done=locked&queue=idle"} {
			if page := b.page(t, path); strings.Contains(page, "account") || strings.Contains(page, "locked") {
				t.Fatalf("overview %s shows text from the URL:\n%s", path, page)
			}
		}
		if got, err := b.client.QueueGet(ctx, "idle"); err != nil || got.Paused {
			t.Fatalf("store after the resume button: %+v, %v", got, err)
		}
		if page := b.page(t, "/"); strings.Contains(page, "badge paused") || !strings.Contains(page, `action="/ui/queues/idle/pause"`) {
			t.Fatalf("overview after resume:\n%s", page)
		}
		if status, _, _ := b.post(t, "/ui/queues/idle/pause", nil, admin); status != http.StatusSeeOther {
			t.Fatalf("pause = %d", status)
		}
		if got, err := b.client.QueueGet(ctx, "idle"); err != nil || !got.Paused {
			t.Fatalf("store after the pause button: %+v, %v", got, err)
		}
	})
}

// TestQueuePauseKind: an admin pauses one kind of a queue over HTTP; HTTP
// workers then claim the queue's other kinds only, enqueues of the kind
// still succeed, the store and GET /v1/queues report it, and resume lets
// claims take the kind again. A bad kind or an unknown parameter is a 400
// that changes nothing.
func TestQueuePauseKind(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		emails := b.enqueue(t, map[string]any{"kind": "email", "args": map[string]any{}, "queue": "mail"},
			map[string]any{"kind": "email", "args": map[string]any{}, "queue": "mail"})
		var q struct {
			Name        string   `json:"name"`
			Paused      bool     `json:"paused"`
			PausedKinds []string `json:"paused_kinds"`
		}
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/queues/mail/pause?kind=email", nil).decode(t, &q)
		if q.Name != "mail" || q.Paused || !slices.Equal(q.PausedKinds, []string{"email"}) {
			t.Fatalf("pause of kind email answered %+v", q)
		}
		if got, err := b.client.QueueGet(ctx, "mail"); err != nil || got.Paused || !slices.Equal(got.PausedKinds, []string{"email"}) {
			t.Fatalf("store after the pause: %+v, %v", got, err)
		}
		emails = append(emails, b.enqueue(t, map[string]any{"kind": "email", "args": map[string]any{}, "queue": "mail"})...)
		sms := b.enqueue(t, map[string]any{"kind": "sms", "args": map[string]any{}, "queue": "mail"})
		jobs := b.claim(t, map[string]any{"queue": "mail", "worker": "w1", "max": 10, "wait_ms": 50})
		if len(jobs) != 1 || jobs[0].ID != sms[0] {
			t.Fatalf("claim with email paused took %+v, want only sms job %d", jobs, sms[0])
		}
		for _, bad := range []struct{ path, want string }{
			{"/v1/queues/mail/pause?kind=no+spaces", "kind"},
			{"/v1/queues/mail/pause?kind=", "kind"},
			{"/v1/queues/mail/resume?kinds=email", "query parameter"},
			{"/v1/queues/mail?kind=email", "query parameter"},
		} {
			method := "POST"
			if !strings.Contains(bad.path, "pause") && !strings.Contains(bad.path, "resume") {
				method = "GET"
			}
			r := b.call(t, server.ScopeAdmin, method, bad.path, nil, false)
			if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), bad.want) {
				t.Errorf("%s %s = %d %s; want 400 naming the %s", method, bad.path, r.status, r.body, bad.want)
			}
		}
		var list struct {
			Queues []struct {
				Name        string   `json:"name"`
				PausedKinds []string `json:"paused_kinds"`
			}
		}
		b.must(t, http.StatusOK, server.ScopeAdmin, "GET", "/v1/queues", nil).decode(t, &list)
		if len(list.Queues) != 1 || list.Queues[0].Name != "mail" || !slices.Equal(list.Queues[0].PausedKinds, []string{"email"}) {
			t.Fatalf("list answered %+v", list)
		}
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/queues/mail/resume?kind=email", nil).decode(t, &q)
		if len(q.PausedKinds) != 0 || q.PausedKinds == nil {
			t.Fatalf("resume answered %+v; want paused_kinds []", q)
		}
		var claimed []int64
		waitfor.Cond(t, "claims to take the resumed kind", func() bool {
			for _, j := range b.claim(t, map[string]any{"queue": "mail", "worker": "w1", "max": 10}) {
				claimed = append(claimed, j.ID)
			}
			return len(claimed) >= len(emails)
		})
		slices.Sort(claimed)
		if !slices.Equal(claimed, emails) {
			t.Fatalf("claimed %v after resume, want the email jobs %v", claimed, emails)
		}
	})
}

// TestDashboardPausesKind: the overview's form pauses a kind of a queue
// in the store, the page shows it with a button that resumes it, and the
// banner names the kind; a kind in the URL that is not a kind name is not
// shown.
func TestDashboardPausesKind(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		admin := map[string]string{"Authorization": "Bearer " + b.tokens[server.ScopeAdmin]}
		if err := b.client.QueuePause(ctx, "idle"); err != nil {
			t.Fatal(err)
		}
		if err := b.client.QueueResume(ctx, "idle"); err != nil {
			t.Fatal(err)
		}
		form := url.Values{"kind": {"email"}}
		status, body, h := b.post(t, "/ui/queues/idle/pause-kind", form, admin)
		if status != http.StatusSeeOther || h.Get("Location") != "/?done=pause-kind&kind=email&queue=idle" {
			t.Fatalf("pause kind = %d to %q: %s", status, h.Get("Location"), body)
		}
		if got, err := b.client.QueueGet(ctx, "idle"); err != nil || !slices.Equal(got.PausedKinds, []string{"email"}) {
			t.Fatalf("store after the pause kind form: %+v, %v", got, err)
		}
		page := b.page(t, h.Get("Location"))
		if !strings.Contains(page, "Kind email of queue idle paused") ||
			!strings.Contains(page, `<span class="badge paused" data-kind="email">email paused</span>`) {
			t.Fatalf("overview after pausing kind email:\n%s", page)
		}
		if page := b.page(t, "/ui/queues/idle"); !strings.Contains(page, `action="/ui/queues/idle/resume-kind"`) ||
			!strings.Contains(page, `<input type="hidden" name="kind" value="email">`) {
			t.Fatalf("the queue's page has no button to resume kind email:\n%s", page)
		}
		if page := b.page(t, "/?done=pause-kind&queue=idle&kind=%3Cb%3Elocked"); strings.Contains(page, "locked") {
			t.Fatalf("overview shows a kind from the URL that is no kind:\n%s", page)
		}
		if status, body, _ := b.post(t, "/ui/queues/idle/pause-kind", url.Values{"kind": {"no spaces"}}, admin); status != http.StatusBadRequest {
			t.Fatalf("pause of a bad kind = %d: %s", status, body)
		}
		if status, _, _ := b.post(t, "/ui/queues/idle/resume-kind", form, admin); status != http.StatusSeeOther {
			t.Fatalf("resume kind = %d", status)
		}
		if got, err := b.client.QueueGet(ctx, "idle"); err != nil || got.PausedKinds != nil {
			t.Fatalf("store after the resume kind button: %+v, %v", got, err)
		}
	})
}

// TestQueueSettingsRefuseUnknownQueues: pausing, resuming, pausing a kind
// of, or setting strict order on a queue the store does not know (no
// jobs, no stored settings, no worker works it) is a 404 that stores
// nothing, so that a typo does not pause a phantom queue that then stays
// on the dashboard; create=true stores it anyway. A queue is known by its
// waiting jobs, its finished ones, its stored settings or a worker of
// the registry that works it. Before, every name was taken.
func TestQueueSettingsRefuseUnknownQueues(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		for _, c := range []struct{ method, path string }{
			{"POST", "/v1/queues/mial/pause"},
			{"POST", "/v1/queues/mial/pause?kind=email"},
			{"POST", "/v1/queues/mial/resume"},
			{"POST", "/v1/queues/mial/strict"},
			{"GET", "/v1/queues/mial"},
		} {
			var body any
			if strings.HasSuffix(c.path, "strict") {
				body = map[string]any{}
			}
			r := b.must(t, http.StatusNotFound, server.ScopeAdmin, c.method, c.path, body)
			if msg := r.errorMessage(t); !strings.Contains(msg, `queue "mial" not found`) {
				t.Errorf("%s %s: %q does not name the queue", c.method, c.path, msg)
			}
		}
		if stored, err := b.client.QueueList(ctx); err != nil || len(stored) != 0 {
			t.Fatalf("refused calls stored settings: %+v, %v", stored, err)
		}
		var q queue
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/queues/later/pause?create=true", nil).decode(t, &q)
		if !q.Paused {
			t.Fatalf("pause with create=true answered %+v", q)
		}
		b.must(t, http.StatusOK, server.ScopeAdmin, "GET", "/v1/queues/later", nil) // known now: it has settings

		// Known by a waiting job, a finished one, or a worker.
		b.enqueue(t, newJob("waiting"), newJob("done"))
		job := b.claim(t, map[string]any{"queue": "done", "worker": "w"})[0]
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/finish", map[string]any{"results": []any{map[string]any{
			"id": job.ID, "attempt": job.Attempt, "lease_token": job.LeaseToken, "outcome": "completed"}}})
		b.claim(t, map[string]any{"queue": "worked", "worker": "w2", "worker_name": "w2"})
		for _, name := range []string{"waiting", "done", "worked"} {
			b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/queues/"+name+"/pause", nil).decode(t, &q)
			if !q.Paused {
				t.Errorf("pause of %s answered %+v", name, q)
			}
		}
	})
}
