package server_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/server"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// TestBulkAPI starts a bulk retry over HTTP and follows it to its end: it
// reports the jobs it changed (the discarded ones), not those its filter
// matched (every job of the queue).
func TestBulkAPI(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		ids := b.enqueue(t,
			map[string]any{"kind": "k", "args": map[string]any{}, "queue": "q", "max_attempts": 1},
			map[string]any{"kind": "k", "args": map[string]any{}, "queue": "q"},
			map[string]any{"kind": "k", "args": map[string]any{}, "queue": "q"},
		)
		b.claim(t, map[string]any{"queue": "q", "worker": "w", "max": 1})
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/finish", map[string]any{"results": []any{map[string]any{
			"id": ids[0], "attempt": 1, "lease_token": b.lease(ids[0]), "outcome": "failed", "error": "no"}}})

		var task struct {
			ID               int64
			Status           string
			Matched, Changed int64
		}
		b.must(t, http.StatusAccepted, server.ScopeAdmin, "POST", "/v1/bulk", map[string]any{"action": "retry", "queue": "q"}).decode(t, &task)
		waitfor.Cond(t, "the bulk retry to finish", func() bool {
			b.must(t, http.StatusOK, server.ScopeAdmin, "GET", fmt.Sprintf("/v1/bulk/%d", task.ID), nil).decode(t, &task)
			return task.Status != "running"
		})
		if task.Status != "done" || task.Matched != 3 || task.Changed != 1 {
			t.Errorf("bulk retry: %+v, want done with 1 changed of 3 matched", task)
		}
		if st := b.stored(t, ids[0]).State; st != drovertype.JobStateAvailable {
			t.Errorf("the discarded job is %s after the retry", st)
		}
		if r := b.call(t, server.ScopeAdmin, "POST", "/v1/bulk", map[string]any{"action": "purge"}, false); r.status != http.StatusBadRequest {
			t.Errorf("unknown action = %d: %s", r.status, r.body)
		}
		b.must(t, http.StatusNotFound, server.ScopeAdmin, "GET", "/v1/bulk/999", nil)
	})
}

// TestBulkDeleteByID deletes the jobs a list of IDs names over HTTP: the
// task counts the jobs deleted (not the running one, which stays, nor the
// unknown ID), and the store holds exactly the others. A filter beside
// the list, an empty or missing list, a bad ID or action are refused.
func TestBulkDeleteByID(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		ids := b.enqueue(t,
			map[string]any{"kind": "k", "args": map[string]any{}, "queue": "q"},
			map[string]any{"kind": "k", "args": map[string]any{}, "queue": "q"},
			map[string]any{"kind": "k", "args": map[string]any{}, "queue": "q"},
		)
		b.claim(t, map[string]any{"queue": "q", "worker": "w", "max": 1})
		var task struct {
			ID                         int64
			Action, Status             string
			Selected, Matched, Changed int64
		}
		b.must(t, http.StatusAccepted, server.ScopeAdmin, "POST", "/v1/bulk-selection",
			map[string]any{"action": "delete", "ids": []int64{ids[0], ids[1], ids[2] + 100}}).decode(t, &task)
		waitfor.Cond(t, "the bulk delete to finish", func() bool {
			b.must(t, http.StatusOK, server.ScopeAdmin, "GET", fmt.Sprintf("/v1/bulk/%d", task.ID), nil).decode(t, &task)
			return task.Status != "running"
		})
		if task.Status != "done" || task.Action != "delete" || task.Selected != 3 || task.Matched != 3 || task.Changed != 1 {
			t.Errorf("bulk delete: %+v, want done with 1 deleted of 3 selected", task)
		}
		if st := b.stored(t, ids[0]).State; st != drovertype.JobStateRunning {
			t.Errorf("the running job is %s after the delete, want running", st)
		}
		if _, err := b.client.JobGet(context.Background(), ids[1]); !errors.Is(err, drover.ErrNotFound) {
			t.Errorf("the deleted job: %v, want not found", err)
		}
		if st := b.stored(t, ids[2]).State; st != drovertype.JobStateAvailable {
			t.Errorf("a job not selected is %s, want available", st)
		}
		for _, body := range []map[string]any{
			{"action": "delete", "ids": []int64{ids[2]}, "queue": "q"},
			{"action": "delete", "ids": []int64{}},
			{"action": "delete"},
			{"action": "delete", "ids": []int64{0}},
			{"action": "purge", "ids": []int64{ids[2]}},
		} {
			if r := b.call(t, server.ScopeAdmin, "POST", "/v1/bulk-selection", body, false); r.status != http.StatusBadRequest {
				t.Errorf("POST /v1/bulk-selection %v = %d: %s; want 400", body, r.status, r.body)
			}
		}
		if st := b.stored(t, ids[2]).State; st != drovertype.JobStateAvailable {
			t.Errorf("a refused request changed job %d: %s", ids[2], st)
		}
	})
}

// stuckBulkClient is a client whose bulk actions report some progress and
// then wait for their context to end, as a long action over many jobs
// would: the tests stop servers and start tasks while such actions run.
type stuckBulkClient struct {
	testClient
	started chan int64 // the Changed count of each action that started
}

func (c stuckBulkClient) JobBulk(ctx context.Context, _ drover.BulkAction, _ drover.JobListParams, progress func(drover.BulkProgress)) (drover.BulkProgress, error) {
	p := drover.BulkProgress{Scanned: 5, Changed: 2}
	progress(p)
	c.started <- p.Changed
	<-ctx.Done()
	return p, ctx.Err()
}

// TestBulkTasksOutliveTheServer: a bulk task's progress is stored, so that
// after the server that ran it stops, another server on the store answers
// GET /v1/bulk/{id} and says the action stopped half way (interrupted,
// with what it had read and changed); a task whose server died without a
// word is read as interrupted once its progress stopped being written.
// Before, tasks lived in the server's memory: after a restart the GET was
// a 404, and nothing recorded that an action had stopped half way.
func TestBulkTasksOutliveTheServer(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			d, client := s.open(t)
			stuck := stuckBulkClient{testClient: client, started: make(chan int64, 1)}
			first := setup(t, func(*testing.T) (droverdriver.Driver, testClient) { return d, stuck })
			var task struct {
				ID               int64
				Status, Error    string
				Matched, Changed int64
			}
			first.must(t, http.StatusAccepted, server.ScopeAdmin, "POST", "/v1/bulk", map[string]any{"action": "retry", "queue": "q"}).decode(t, &task)
			<-stuck.started
			waitfor.Cond(t, "the task's progress written", func() bool {
				first.must(t, http.StatusOK, server.ScopeAdmin, "GET", fmt.Sprintf("/v1/bulk/%d", task.ID), nil).decode(t, &task)
				return task.Changed == 2
			})
			first.stop()

			second := setup(t, func(*testing.T) (droverdriver.Driver, testClient) { return d, client })
			second.must(t, http.StatusOK, server.ScopeAdmin, "GET", fmt.Sprintf("/v1/bulk/%d", task.ID), nil).decode(t, &task)
			if task.Status != "interrupted" || task.Matched != 5 || task.Changed != 2 || !strings.Contains(task.Error, "stopped") {
				t.Fatalf("after a restart the task reads %+v, want interrupted having read 5 and changed 2", task)
			}

			// A server that died wrote nothing more: its task's row says
			// running, and stopped moving long ago.
			id, err := d.Executor().BulkTaskInsert(context.Background(), &droverdriver.BulkTaskRow{Action: "cancel", Status: "running",
				StartedAt: time.Now().Add(-time.Hour)}, 1000)
			if err != nil {
				t.Fatal(err)
			}
			second.must(t, http.StatusOK, server.ScopeAdmin, "GET", fmt.Sprintf("/v1/bulk/%d", id), nil).decode(t, &task)
			if task.Status != "interrupted" || !strings.Contains(task.Error, "stopped writing its progress") {
				t.Fatalf("a task whose server died reads %+v, want interrupted", task)
			}
		})
	}
}

// TestBulkTasksAreCapped: a server runs at most MaxBulkRunning bulk tasks
// at once; one more is refused with 429 and a message saying why, and
// stores nothing. Before, every request started a task of its own.
func TestBulkTasksAreCapped(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			d, client := s.open(t)
			stuck := stuckBulkClient{testClient: client, started: make(chan int64, server.MaxBulkRunning)}
			b := setup(t, func(*testing.T) (droverdriver.Driver, testClient) { return d, stuck })
			var task struct{ ID int64 }
			for range server.MaxBulkRunning {
				b.must(t, http.StatusAccepted, server.ScopeAdmin, "POST", "/v1/bulk", map[string]any{"action": "cancel", "queue": "q"}).decode(t, &task)
			}
			r := b.must(t, http.StatusTooManyRequests, server.ScopeAdmin, "POST", "/v1/bulk-selection", map[string]any{"action": "cancel", "ids": []int64{1}})
			if msg := r.errorMessage(t); !strings.Contains(msg, "bulk tasks are running on this server") {
				t.Fatalf("429 message %q does not say why", msg)
			}
			b.must(t, http.StatusNotFound, server.ScopeAdmin, "GET", fmt.Sprintf("/v1/bulk/%d", task.ID+1), nil)
		})
	}
}
