package server

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/jobjson"
)

// Routing (docs/routing.md): the worker registry, the waiting routed jobs
// no live worker can take, and strict order, through the API, the metrics
// and the dashboard's workers page. The unroutable jobs are read by the
// sampler, like the queue figures, so that a scrape never reads the
// store for them.

// sampled is the sampler's last reading of a value, and when it was
// read, for pages that show it rather than read the store per view.
type sampled[T any] struct {
	mu sync.Mutex
	at time.Time
	v  T
}

func (s *sampled[T]) set(at time.Time, v T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.at, s.v = at, v
}

func (s *sampled[T]) get() (time.Time, T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.at, s.v
}

// routeSample is the last reading of the unroutable jobs.
type routeSample = sampled[[]*drover.UnroutableJobs]

// workerSample is the last reading of the worker registry, with what each
// worker holds (from the store's leases), for every table of workers the
// dashboard shows: one reading, so that two pages never disagree on what a
// worker holds.
type workerSample = sampled[[]*drovertype.WorkerInfo]

// sampleWorkers reads the worker registry for the dashboard.
func (s *Server) sampleWorkers(ctx context.Context, now time.Time) error {
	ws, err := s.cfg.Client.Workers(ctx)
	if err != nil {
		return err
	}
	s.workerSample.set(now, ws)
	return nil
}

// sampleRouting reads the unroutable jobs for the gauge and the workers
// page.
func (s *Server) sampleRouting(ctx context.Context, now time.Time) error {
	groups, err := s.cfg.Client.Unroutable(ctx)
	if err != nil {
		return err
	}
	s.routeSample.set(now, groups)
	s.metrics.observeUnroutable(groups)
	return nil
}

// listWorkers answers GET /v1/workers: the worker registry.
func (s *Server) listWorkers(w http.ResponseWriter, r *http.Request) error {
	if len(r.URL.Query()) > 0 {
		return badRequest("query parameters: none are taken")
	}
	ws, err := s.cfg.Client.Workers(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"workers": jobjson.FromWorkers(visibleWorkers(requestToken(r), ws))})
	return nil
}

// visibleWorkers keeps, for a token restricted to queues, the workers that
// work one of its queues, each with only those of its queues listed: a
// worker's name, labels and other queues tell of work the token may not
// see. An unrestricted token sees the whole registry.
func visibleWorkers(tok *Token, ws []*drovertype.WorkerInfo) []*drovertype.WorkerInfo {
	if tok == nil || tok.Queues == nil {
		return ws
	}
	out := []*drovertype.WorkerInfo{}
	for _, w := range ws {
		queues := slices.DeleteFunc(slices.Clone(w.Queues), func(q string) bool { return !tok.AllowsQueue(q) })
		if len(queues) == 0 {
			continue
		}
		c := *w
		c.Queues = queues
		out = append(out, &c)
	}
	return out
}

// listUnroutable answers GET /v1/unroutable: the waiting routed jobs no
// live worker can take, read now.
func (s *Server) listUnroutable(w http.ResponseWriter, r *http.Request) error {
	if len(r.URL.Query()) > 0 {
		return badRequest("query parameters: none are taken")
	}
	groups, err := s.cfg.Client.Unroutable(r.Context())
	if err != nil {
		return err
	}
	if tok := requestToken(r); tok != nil && tok.Queues != nil {
		groups = slices.DeleteFunc(groups, func(g *drover.UnroutableJobs) bool { return !tok.AllowsQueue(g.Queue) })
	}
	writeJSON(w, http.StatusOK, map[string]any{"unroutable": jobjson.FromUnroutable(groups)})
	return nil
}

// strictQueue answers POST /v1/queues/{name}/strict: strict order on (at
// most max_running of its jobs at once, 1 by default) or off
// (max_running 0).
func (s *Server) strictQueue(w http.ResponseWriter, r *http.Request) error {
	req := struct {
		MaxRunning *int `json:"max_running"`
	}{}
	if err := decode(r, &req); err != nil {
		return err
	}
	n := 1
	if req.MaxRunning != nil {
		n = *req.MaxRunning
	}
	return s.queueCall(w, r, func(ctx context.Context, name string) error {
		_, err := s.cfg.Client.QueueSetStrictOrder(ctx, name, n)
		return err
	}, nil)
}

// workersPage shows the worker registry and the unroutable jobs, both as
// the sampler last read them.
func (s *Server) workersPage(w http.ResponseWriter, r *http.Request) error {
	at, ws := s.workerSample.get()
	_, groups := s.routeSample.get()
	return render(w, http.StatusOK, s.pages.workers, struct {
		page
		Workers    []*drovertype.WorkerInfo
		Sampled    time.Time
		Interval   time.Duration
		Unroutable []*drover.UnroutableJobs
	}{s.page("Workers", ""), ws, at, s.cfg.SampleInterval, groups})
}
