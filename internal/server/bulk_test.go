package server_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/server"
	"github.com/droverhq/drover/internal/waitfor"
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
		if st := b.stored(t, ids[0]).State; st != drover.JobStateAvailable {
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
		if st := b.stored(t, ids[0]).State; st != drover.JobStateRunning {
			t.Errorf("the running job is %s after the delete, want running", st)
		}
		if _, err := b.client.JobGet(context.Background(), ids[1]); !errors.Is(err, drover.ErrNotFound) {
			t.Errorf("the deleted job: %v, want not found", err)
		}
		if st := b.stored(t, ids[2]).State; st != drover.JobStateAvailable {
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
		if st := b.stored(t, ids[2]).State; st != drover.JobStateAvailable {
			t.Errorf("a refused request changed job %d: %s", ids[2], st)
		}
	})
}
