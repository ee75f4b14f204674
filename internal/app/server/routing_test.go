package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/server"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// TestRoutingOverHTTP: jobs enqueued with routing show it and are reported
// unroutable (job detail, /v1/unroutable, the metric, the workers page)
// until an HTTP worker that matches claims; a worker that does not match
// never gets them; the registry lists the worker.
func TestRoutingOverHTTP(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		ids := b.enqueue(t,
			map[string]any{"kind": "render", "args": map[string]any{}, "queue": "gfx", "worker_type": "gpu",
				"worker_labels": map[string]string{"vram": "48g"}},
			map[string]any{"kind": "render", "args": map[string]any{}, "queue": "gfx", "worker_names": []string{"py-7"},
				"on_worker_absent": "fail", "worker_absent_after_ms": 60000})
		var got struct {
			Routing struct {
				WorkerType   string            `json:"worker_type"`
				WorkerLabels map[string]string `json:"worker_labels"`
			} `json:"routing"`
			Unroutable bool `json:"unroutable"`
		}
		b.must(t, http.StatusOK, server.ScopeAdmin, "GET", "/v1/jobs/"+itoa(ids[0]), nil).decode(t, &got)
		if got.Routing.WorkerType != "gpu" || got.Routing.WorkerLabels["vram"] != "48g" || !got.Unroutable {
			t.Fatalf("job detail %+v", got)
		}
		var un struct {
			Unroutable []struct {
				Queue string `json:"queue"`
				Jobs  int64  `json:"jobs"`
			} `json:"unroutable"`
		}
		b.must(t, http.StatusOK, server.ScopeEnqueue, "GET", "/v1/unroutable", nil).decode(t, &un)
		if len(un.Unroutable) != 2 || un.Unroutable[0].Queue != "gfx" {
			t.Fatalf("unroutable %+v, want both groups of gfx", un)
		}
		waitfor.Cond(t, "the unroutable gauge", func() bool {
			f := b.scrape(t)["drover_jobs_unroutable"]
			return f != nil && len(f.Metric) == 1 && f.Metric[0].GetGauge().GetValue() == 2
		})
		if page := b.page(t, "/ui/workers"); !strings.Contains(page, `<tr data-queue="gfx" data-kind="render">`) || !strings.Contains(page, "vram=48g") {
			t.Fatalf("workers page does not list the unroutable jobs:\n%s", page)
		}
		if page := b.page(t, "/ui/jobs/"+itoa(ids[0])); !strings.Contains(page, `id="job-unroutable"`) || !strings.Contains(page, "type gpu") {
			t.Fatalf("job page does not say where the job may run, and that none can:\n%s", page)
		}

		// A gpu worker without the label, and a plain one, get nothing.
		if jobs := b.claim(t, map[string]any{"queue": "gfx", "worker": "py-1", "worker_type": "gpu", "max": 5}); len(jobs) != 0 {
			t.Fatalf("a gpu worker without vram=48g claimed %d jobs", len(jobs))
		}
		if jobs := b.claim(t, map[string]any{"queue": "gfx", "worker": "py-7", "max": 5}); len(jobs) != 0 {
			t.Fatalf("a plain worker claimed %d jobs", len(jobs))
		}
		jobs := b.claim(t, map[string]any{"queue": "gfx", "worker": "host-3", "worker_name": "py-7", "worker_type": "gpu",
			"worker_labels": map[string]string{"vram": "48g"}, "max": 5})
		if len(jobs) != 2 {
			t.Fatalf("the matching worker claimed %d jobs, want 2", len(jobs))
		}
		var ws struct {
			Workers []struct {
				Name     string            `json:"name"`
				Type     string            `json:"type"`
				Labels   map[string]string `json:"labels"`
				Owner    string            `json:"owner"`
				JobsHeld int64             `json:"jobs_held"`
				Live     bool              `json:"live"`
			} `json:"workers"`
		}
		b.must(t, http.StatusOK, server.ScopeAdmin, "GET", "/v1/workers", nil).decode(t, &ws)
		var found bool
		for _, w := range ws.Workers {
			if w.Name == "py-7" {
				found = w.Type == "gpu" && w.Labels["vram"] == "48g" && w.Owner == "host-3" && w.JobsHeld == 2 && w.Live
			}
		}
		if !found {
			t.Fatalf("registry %+v, want py-7 holding 2 jobs", ws)
		}
		// The page shows the sampler's reading of the registry.
		waitfor.Cond(t, "the workers page to show py-7 holding 2 jobs", func() bool {
			page := b.page(t, "/ui/workers")
			return strings.Contains(page, `<tr data-worker="py-7">`) && strings.Contains(page, `<td class="num" data-field="held"><a href="/ui/running">2</a></td>`)
		})
		// A bad label is refused, naming it.
		r := b.call(t, server.ScopeWork, "POST", "/v1/claim", map[string]any{"queue": "gfx", "worker": "w",
			"worker_labels": map[string]string{"bad key": "v"}}, false)
		if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "bad key") {
			t.Fatalf("bad label = %d %s", r.status, r.body)
		}
	})
}

// TestClaimKindsOverHTTP: an HTTP worker that names its kinds claims only
// jobs of those, and the registry records them; a job of a kind no live
// worker of its queue runs waits, reported by /v1/unroutable and the
// workers page (issue 38: SDK workers claimed such jobs and failed them).
// A claim that names an empty list of kinds, or a bad one, is refused
// naming the field.
func TestClaimKindsOverHTTP(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		ids := b.enqueue(t, map[string]any{"kind": "render", "args": map[string]any{}, "queue": "gfx"},
			map[string]any{"kind": "orphan", "args": map[string]any{}, "queue": "gfx"},
			map[string]any{"kind": "render", "args": map[string]any{}, "queue": "gfx"})
		jobs := b.claim(t, map[string]any{"queue": "gfx", "worker": "py-1", "kinds": []string{"render", "email"}, "max": 5})
		if len(jobs) != 2 || jobs[0].ID != ids[0] || jobs[1].ID != ids[2] {
			t.Fatalf("a worker of render and email claimed %+v, want jobs %d and %d", jobs, ids[0], ids[2])
		}
		var un struct {
			Unroutable []struct {
				Queue   string          `json:"queue"`
				Kind    string          `json:"kind"`
				Routing json.RawMessage `json:"routing"`
				Jobs    int64           `json:"jobs"`
				FirstID int64           `json:"first_id"`
			} `json:"unroutable"`
		}
		b.must(t, http.StatusOK, server.ScopeEnqueue, "GET", "/v1/unroutable", nil).decode(t, &un)
		if len(un.Unroutable) != 1 || un.Unroutable[0].Queue != "gfx" || un.Unroutable[0].Kind != "orphan" ||
			string(un.Unroutable[0].Routing) != "null" || un.Unroutable[0].Jobs != 1 || un.Unroutable[0].FirstID != ids[1] {
			t.Fatalf("unroutable %+v, want the orphan job of gfx", un)
		}
		var ws struct {
			Workers []struct {
				Name  string   `json:"name"`
				Kinds []string `json:"kinds"`
			} `json:"workers"`
		}
		b.must(t, http.StatusOK, server.ScopeAdmin, "GET", "/v1/workers", nil).decode(t, &ws)
		if len(ws.Workers) != 1 || ws.Workers[0].Name != "py-1" || strings.Join(ws.Workers[0].Kinds, ",") != "email,render" {
			t.Fatalf("registry %+v, want py-1 of email and render", ws)
		}
		// The page shows the unroutable jobs of the sampler's last
		// reading, taken after the claim soon.
		waitfor.Cond(t, "the workers page shows py-1's kinds and the orphan job", func() bool {
			page := b.page(t, "/ui/workers")
			return strings.Contains(page, `<tr data-queue="gfx" data-kind="orphan">`) && strings.Contains(page, "email, render")
		})
		if j := b.stored(t, ids[1]); j.State != drovertype.JobStateAvailable || j.Attempt != 0 {
			t.Fatalf("the orphan job is %s after %d attempts, want it waiting, never attempted", j.State, j.Attempt)
		}
		for _, kinds := range []any{[]string{}, []string{"no spaces"}} {
			r := b.call(t, server.ScopeWork, "POST", "/v1/claim", map[string]any{"queue": "gfx", "worker": "w", "kinds": kinds}, false)
			if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "kinds") {
				t.Fatalf("claim with kinds %v = %d %s", kinds, r.status, r.body)
			}
		}
	})
}

// TestStrictOrderOverHTTP: an admin puts a queue in strict order; the
// queue's settings say so and HTTP workers get its head one at a time.
func TestStrictOrderOverHTTP(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		var q struct {
			StrictOrder int `json:"strict_order"`
		}
		// No job, setting nor worker yet: create=true sets it all the same.
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/queues/fifo/strict?create=true", map[string]any{}).decode(t, &q)
		if q.StrictOrder != 1 {
			t.Fatalf("strict order %d, want the default of 1", q.StrictOrder)
		}
		ids := b.enqueue(t, map[string]any{"kind": "k", "args": map[string]any{}, "queue": "fifo"},
			map[string]any{"kind": "k", "args": map[string]any{}, "queue": "fifo"})
		jobs := b.claim(t, map[string]any{"queue": "fifo", "worker": "w", "max": 5})
		if len(jobs) != 1 || jobs[0].ID != ids[0] {
			t.Fatalf("claimed %+v, want job %d alone", jobs, ids[0])
		}
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/queues/fifo/strict", map[string]any{"max_running": 0}).decode(t, &q)
		if q.StrictOrder != 0 {
			t.Fatalf("strict order %d after turning it off", q.StrictOrder)
		}
		r := b.call(t, server.ScopeAdmin, "POST", "/v1/queues/fifo/strict", map[string]any{"max_running": -1}, false)
		if r.status != http.StatusBadRequest {
			t.Fatalf("max_running -1 = %d %s", r.status, r.body)
		}
	})
}
