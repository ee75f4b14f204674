package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/server"
	"github.com/droverhq/drover/internal/waitfor"
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
		b.must(t, http.StatusOK, server.ScopeAdmin, "GET", "/v1/queues/other", nil).decode(t, &q)
		if q.Name != "other" || q.Paused || q.UpdatedAt != nil {
			t.Fatalf("a queue without settings answered %+v", q)
		}

		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/queues/mail/resume", nil).decode(t, &q)
		if q.Paused {
			t.Fatalf("resume answered %+v", q)
		}
		var claimed int
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
		if !strings.Contains(page, `idle <span class="badge paused">paused</span>`) ||
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
