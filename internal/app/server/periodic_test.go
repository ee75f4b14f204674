package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/droverhq/drover/internal/app/server"
)

// periodicJSON is a periodic job as the API answers it.
type periodicJSON struct {
	Name        string          `json:"name"`
	Schedule    string          `json:"schedule"`
	Kind        string          `json:"kind"`
	Args        json.RawMessage `json:"args"`
	Queue       string          `json:"queue"`
	Source      string          `json:"source"`
	Paused      bool            `json:"paused"`
	NextRunAt   *string         `json:"next_run_at"`
	LastRunAt   *string         `json:"last_run_at"`
	MaxAttempts int             `json:"max_attempts"`
}

// TestPeriodicOverHTTP manages a periodic job through /v1/periodic: create,
// list with its next run, update, pause (no next run), trigger (one job
// stored, marked as triggered, and the last run set), resume, delete; and
// the refusals, each naming the field or the reason. Every check of a
// job reads the store.
func TestPeriodicOverHTTP(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		def := map[string]any{"name": "report", "schedule": "0 6 * * *", "kind": "report.build",
			"args": map[string]any{"n": 1}, "queue": "reports", "tags": []string{"cron"}}
		var p periodicJSON
		b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/periodic", def).decode(t, &p)
		if p.Name != "report" || p.Source != "api" || p.Paused || p.NextRunAt == nil || p.LastRunAt != nil || p.Queue != "reports" {
			t.Fatalf("created %+v", p)
		}
		if msg := b.must(t, http.StatusConflict, server.ScopeAdmin, "POST", "/v1/periodic", def).errorMessage(t); !strings.Contains(msg, "exists") {
			t.Fatalf("second create: %q", msg)
		}
		var list struct {
			PeriodicJobs []periodicJSON `json:"periodic_jobs"`
		}
		b.must(t, http.StatusOK, server.ScopeEnqueue, "GET", "/v1/periodic", nil).decode(t, &list)
		if len(list.PeriodicJobs) != 1 || list.PeriodicJobs[0].Name != "report" {
			t.Fatalf("list %+v", list)
		}
		b.must(t, http.StatusOK, server.ScopeAdmin, "PUT", "/v1/periodic/report",
			map[string]any{"schedule": "@every 1h", "kind": "report.build", "queue": "reports", "max_attempts": 3}).decode(t, &p)
		if p.Schedule != "@every 1h" || p.MaxAttempts != 3 {
			t.Fatalf("updated %+v", p)
		}
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/periodic/report/pause", nil).decode(t, &p)
		if !p.Paused || p.NextRunAt != nil {
			t.Fatalf("paused %+v", p)
		}
		var job struct {
			ID       int64           `json:"id"`
			Kind     string          `json:"kind"`
			Queue    string          `json:"queue"`
			Metadata json.RawMessage `json:"metadata"`
		}
		b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/periodic/report/trigger", nil).decode(t, &job)
		row := b.stored(t, job.ID)
		var meta struct {
			Periodic  string `json:"periodic"`
			Triggered bool   `json:"triggered"`
		}
		if err := json.Unmarshal(row.Metadata, &meta); err != nil || meta.Periodic != "report" || !meta.Triggered ||
			row.Kind != "report.build" || row.Queue != "reports" || row.MaxAttempts != 3 {
			t.Fatalf("triggered job %+v (metadata %s)", row, row.Metadata)
		}
		if n := b.counts(t); len(n) != 1 {
			t.Fatalf("jobs after one trigger: %v", n)
		}
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/periodic/report/resume", nil).decode(t, &p)
		if p.Paused || p.NextRunAt == nil || p.LastRunAt == nil {
			t.Fatalf("resumed %+v", p)
		}
		b.must(t, http.StatusNoContent, server.ScopeAdmin, "DELETE", "/v1/periodic/report", nil)
		b.must(t, http.StatusNotFound, server.ScopeEnqueue, "GET", "/v1/periodic/report", nil)
		b.must(t, http.StatusNotFound, server.ScopeAdmin, "POST", "/v1/periodic/report/trigger", nil)

		for _, tc := range []struct {
			body map[string]any
			want string
		}{
			{map[string]any{"name": "a", "schedule": "61 * * * *", "kind": "k"}, "schedule"},
			{map[string]any{"name": "a", "schedule": "0 0 30 2 *", "kind": "k"}, "never fires"},
			{map[string]any{"name": "a b", "schedule": "@hourly", "kind": "k"}, "name"},
			{map[string]any{"name": "a", "schedule": "@hourly", "kind": "k", "queue": "no queue"}, "queue"},
			{map[string]any{"name": "a", "schedule": "@hourly", "kind": "k", "args": []int{1}}, "args"},
			{map[string]any{"name": "a", "kind": "k"}, "schedule"},
		} {
			if msg := b.call(t, server.ScopeAdmin, "POST", "/v1/periodic", tc.body, false).errorMessage(t); !strings.Contains(msg, tc.want) {
				t.Errorf("create %v: %q, want it to name %s", tc.body, msg, tc.want)
			}
		}
		b.must(t, http.StatusOK, server.ScopeEnqueue, "GET", "/v1/periodic", nil).decode(t, &list)
		if len(list.PeriodicJobs) != 0 {
			t.Fatalf("stored after refused creates: %+v", list)
		}
	})
}

// TestPeriodicIntervalMinimum: an @every schedule shorter than a second,
// or not a whole number of seconds, is refused with a 400 naming the
// minimum, and nothing is stored; robfig/cron ran "@every 1ms" once a
// second without a word. A whole second is taken.
func TestPeriodicIntervalMinimum(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		for _, tc := range []struct{ schedule, want string }{
			{"@every 1ms", "the shortest interval is 1s"},
			{"@every 999ms", "the shortest interval is 1s"},
			{"CRON_TZ=UTC @every 10ms", "the shortest interval is 1s"},
			{"@every 1500ms", "whole number of seconds"},
		} {
			r := b.call(t, server.ScopeAdmin, "POST", "/v1/periodic", map[string]any{"name": "fast", "schedule": tc.schedule, "kind": "k"}, true)
			if r.status != http.StatusBadRequest || !strings.Contains(r.errorMessage(t), tc.want) {
				t.Errorf("schedule %q = %d %s, want 400 naming %q", tc.schedule, r.status, r.body, tc.want)
			}
		}
		b.must(t, http.StatusNotFound, server.ScopeAdmin, "GET", "/v1/periodic/fast", nil)
		b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/periodic", map[string]any{"name": "fast", "schedule": "@every 1s", "kind": "k"})
		r := b.call(t, server.ScopeAdmin, "PUT", "/v1/periodic/fast", map[string]any{"schedule": "@every 100ms", "kind": "k"}, true)
		if r.status != http.StatusBadRequest {
			t.Fatalf("update to @every 100ms = %d %s, want 400", r.status, r.body)
		}
	})
}
