package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/droverhq/drover"
)

// bulkKept is how many bulk tasks the server remembers, finished or not,
// for their progress to be read.
const bulkKept = 50

// maxBulkIDs bounds the jobs one bulk task by ID may name: a selection of
// rows on the dashboard, or a list a script sends. Larger sets are a
// filter's work.
const maxBulkIDs = 10_000

// bulkTask is one bulk action running in the background
// (drover.Client.JobBulk, JobBulkByID): the dashboard's "all jobs of the
// filter" and "selected" buttons and POST /v1/bulk start one and answer at
// once, and its progress is read while it runs.
type bulkTask struct {
	id     int64
	action drover.BulkAction
	filter jobFilter
	// ids are the jobs a task by ID acts on; nil for a task over filter.
	ids     []int64
	started time.Time

	mu       sync.Mutex
	progress drover.BulkProgress
	done     bool
	err      error
}

// bulkJSON is a task as GET /v1/bulk/{id} shows it.
type bulkJSON struct {
	ID     int64  `json:"id"`
	Action string `json:"action"`
	Queue  string `json:"queue,omitempty"`
	Kind   string `json:"kind,omitempty"`
	State  string `json:"state,omitempty"`
	// Selected is how many job IDs a task by ID was given; 0 for a task
	// over a filter.
	Selected int    `json:"selected,omitempty"`
	Status   string `json:"status"` // running, done or failed
	Matched  int64  `json:"matched"`
	Changed  int64  `json:"changed"`
	Error    string `json:"error,omitempty"`
	Started  string `json:"started_at"`
}

func (t *bulkTask) json() bulkJSON {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := bulkJSON{ID: t.id, Action: string(t.action), Queue: t.filter.Queue, Kind: t.filter.Kind, State: t.filter.State,
		Selected: len(t.ids), Status: "running", Matched: t.progress.Scanned, Changed: t.progress.Changed,
		Started: t.started.UTC().Format(time.RFC3339Nano)}
	switch {
	case t.err != nil:
		out.Status, out.Error = "failed", t.err.Error()
	case t.done:
		out.Status = "done"
	}
	return out
}

// bulkTasks runs and remembers the server's bulk tasks. Their goroutines
// belong to it: stop cancels them and waits for them.
type bulkTasks struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	next  int64
	tasks map[int64]*bulkTask
}

func newBulkTasks() *bulkTasks {
	ctx, cancel := context.WithCancel(context.Background())
	return &bulkTasks{ctx: ctx, cancel: cancel, tasks: map[int64]*bulkTask{}}
}

// start runs action in the background, over the jobs ids names or, when
// ids is nil, over the jobs of f, and returns its task.
func (b *bulkTasks) start(client Client, action drover.BulkAction, f jobFilter, ids []int64) (*bulkTask, error) {
	switch action {
	case drover.BulkRetry, drover.BulkCancel, drover.BulkDiscard, drover.BulkDelete:
	default:
		return nil, badRequest("action %q: use retry, cancel, discard or delete", action)
	}
	p, err := f.params()
	if err != nil {
		return nil, err
	}
	if ids != nil {
		switch {
		case len(ids) == 0:
			return nil, badRequest("ids: empty; name at least one job")
		case len(ids) > maxBulkIDs:
			return nil, badRequest("ids: %d jobs, at most %d; use a filter for more", len(ids), maxBulkIDs)
		}
		for _, id := range ids {
			if id < 1 {
				return nil, badRequest("ids: %d is not a job id", id)
			}
		}
	}
	b.mu.Lock()
	b.next++
	t := &bulkTask{id: b.next, action: action, filter: f, ids: ids, started: time.Now()}
	b.tasks[t.id] = t
	delete(b.tasks, t.id-bulkKept)
	b.mu.Unlock()
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		progress := func(p drover.BulkProgress) {
			t.mu.Lock()
			t.progress = p
			t.mu.Unlock()
		}
		var res drover.BulkProgress
		var err error
		if ids != nil {
			res, err = client.JobBulkByID(b.ctx, action, ids, progress)
		} else {
			res, err = client.JobBulk(b.ctx, action, p, progress)
		}
		t.mu.Lock()
		t.progress, t.done, t.err = res, true, err
		t.mu.Unlock()
	}()
	return t, nil
}

func (b *bulkTasks) get(id int64) *bulkTask {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tasks[id]
}

// stop cancels the tasks still running and waits for them.
func (b *bulkTasks) stop() {
	b.cancel()
	b.wg.Wait()
}

// startBulk is POST /v1/bulk: it starts a bulk action over a filter and
// answers 202 with the task, whose progress GET /v1/bulk/{id} reads.
func (s *Server) startBulk(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Action string `json:"action"`
		State  string `json:"state"`
		Queue  string `json:"queue"`
		Kind   string `json:"kind"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.State != "" && !validState(req.State) {
		return badRequest("state %q: use one of %v", req.State, jobStates)
	}
	t, err := s.bulkTasks.start(s.cfg.Client, drover.BulkAction(req.Action), jobFilter{State: req.State, Queue: req.Queue, Kind: req.Kind}, nil)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, t.json())
	return nil
}

// startBulkSelection is POST /v1/bulk-selection: startBulk for the jobs a
// list of IDs names, as the dashboard's selected rows. A body of its own
// rather than ids beside a filter, whose meaning together no document
// could state.
func (s *Server) startBulkSelection(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Action string  `json:"action"`
		IDs    []int64 `json:"ids"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.IDs == nil {
		req.IDs = []int64{}
	}
	t, err := s.bulkTasks.start(s.cfg.Client, drover.BulkAction(req.Action), jobFilter{}, req.IDs)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, t.json())
	return nil
}

// getBulk is GET /v1/bulk/{id}.
func (s *Server) getBulk(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return badRequest("bulk task id %q: must be a positive integer", r.PathValue("id"))
	}
	t := s.bulkTasks.get(id)
	if t == nil {
		return &apiError{status: http.StatusNotFound,
			msg: fmt.Sprintf("bulk task %d not found: the server keeps the last %d since it started", id, bulkKept)}
	}
	writeJSON(w, http.StatusOK, t.json())
	return nil
}

func validState(s string) bool {
	for _, st := range jobStates {
		if s == st {
			return true
		}
	}
	return false
}
