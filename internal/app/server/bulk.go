package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
)

// Bounds of the bulk tasks.
const (
	// bulkKept is how many bulk tasks the store keeps, finished or not,
	// for their progress to be read.
	bulkKept = 1000
	// maxBulkIDs bounds the jobs one bulk task by ID may name: a
	// selection of rows on the dashboard, or a list a script sends.
	// Larger sets are a filter's work.
	maxBulkIDs = 10_000
	// MaxBulkRunning bounds the bulk tasks one server runs at once: each
	// holds a goroutine and pages through the store, so a client starting
	// them in a loop must not multiply the load without end.
	MaxBulkRunning = 4
	// bulkWriteEvery is how often a running task's progress is written,
	// and bulkStaleAfter how long a task may go without a write before it
	// is read as interrupted (its server died): several writes, so that
	// a slow store or skewed clocks do not make a live task look dead.
	bulkWriteEvery = time.Second
	bulkStaleAfter = time.Minute
)

// bulkTask is one bulk action (drover.Client.JobBulk, JobBulkByID) as the
// store holds it: the dashboard's "all jobs of the filter" and "selected"
// buttons and POST /v1/bulk start one and answer at once, and its
// progress is read while it runs, from any server, after a restart too.
type bulkTask struct {
	id  int64
	row droverdriver.BulkTaskRow
	// read is when the row was read, to tell a task that stopped moving.
	read time.Time
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
	Selected int `json:"selected,omitempty"`
	// Status is running, done, failed or interrupted: the task stopped
	// before it ended (its server stopped or died), having changed what
	// Changed counts.
	Status  string `json:"status"`
	Matched int64  `json:"matched"`
	Changed int64  `json:"changed"`
	Error   string `json:"error,omitempty"`
	Started string `json:"started_at"`
}

func (t *bulkTask) json() bulkJSON {
	r := t.row
	out := bulkJSON{ID: r.ID, Action: r.Action, Queue: r.Queue, Kind: r.Kind, State: r.State, Selected: r.Selected,
		Status: r.Status, Matched: r.Matched, Changed: r.Changed, Error: r.Error, Started: r.StartedAt.UTC().Format(time.RFC3339Nano)}
	if r.Status == bulkRunning && t.read.Sub(r.UpdatedAt) > bulkStaleAfter {
		out.Status = bulkInterrupted
		out.Error = fmt.Sprintf("the server running it stopped writing its progress at %s, before the action ended",
			r.UpdatedAt.UTC().Format(time.RFC3339))
	}
	return out
}

// A task's statuses.
const (
	bulkRunning     = "running"
	bulkDone        = "done"
	bulkFailed      = "failed"
	bulkInterrupted = "interrupted"
)

// bulkTasks runs the server's bulk tasks and records them in the store.
// Their goroutines belong to it: stop cancels them and waits for them.
type bulkTasks struct {
	store  droverdriver.BulkTaskExecutor
	logger *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	running int
}

func newBulkTasks(store droverdriver.BulkTaskExecutor, logger *slog.Logger) *bulkTasks {
	ctx, cancel := context.WithCancel(context.Background())
	return &bulkTasks{store: store, logger: logger, ctx: ctx, cancel: cancel}
}

// bulkStoreTimeout bounds each write of a task's row, which the task's
// goroutine makes on contexts of its own.
const bulkStoreTimeout = 5 * time.Second

// start stores a task and runs action in the background, over the jobs
// ids names or, when ids is nil, over the jobs of f, and returns the task.
// Past MaxBulkRunning running tasks it refuses with 429.
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
	if b.running >= MaxBulkRunning {
		b.mu.Unlock()
		return nil, &apiError{status: http.StatusTooManyRequests, msg: fmt.Sprintf(
			"%d bulk tasks are running on this server, the most it runs at once; retry once one has ended (GET /v1/bulk/{id})", MaxBulkRunning)}
	}
	b.running++
	b.mu.Unlock()
	row := droverdriver.BulkTaskRow{Action: string(action), Queue: f.Queue, Kind: f.Kind, State: f.State, Selected: len(ids),
		Status: bulkRunning, StartedAt: time.Now()}
	ctx, cancel := context.WithTimeout(b.ctx, bulkStoreTimeout)
	row.ID, err = b.store.BulkTaskInsert(ctx, &row, bulkKept)
	cancel()
	if err != nil {
		b.done()
		return nil, err
	}
	row.UpdatedAt = row.StartedAt
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer b.done()
		b.run(client, row, p, ids)
	}()
	return &bulkTask{id: row.ID, row: row, read: row.StartedAt}, nil
}

// done frees a running task's place.
func (b *bulkTasks) done() {
	b.mu.Lock()
	b.running--
	b.mu.Unlock()
}

// run runs a stored task to its end, writing its progress at most every
// bulkWriteEvery (and at least that often, so that it does not look
// interrupted), then its end: done, failed, or interrupted when the
// server stops it.
func (b *bulkTasks) run(client Client, row droverdriver.BulkTaskRow, p drover.JobListParams, ids []int64) {
	var mu sync.Mutex
	var progress drover.BulkProgress
	write := func(status, msg string) {
		mu.Lock()
		pr := progress
		mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), bulkStoreTimeout)
		defer cancel()
		err := b.store.BulkTaskUpdate(ctx, droverdriver.BulkTaskUpdateParams{ID: row.ID, Status: status, Matched: pr.Scanned,
			Changed: pr.Changed, Error: msg, Now: time.Now()})
		if err != nil {
			b.logger.Warn("bulk task: could not write its progress", "task", row.ID, "status", status, "error", err)
		}
	}
	ended := make(chan struct{})
	var writer sync.WaitGroup
	writer.Add(1)
	go func() {
		defer writer.Done()
		t := time.NewTicker(bulkWriteEvery)
		defer t.Stop()
		for {
			select {
			case <-ended:
				return
			case <-t.C:
				write(bulkRunning, "")
			}
		}
	}()
	report := func(pr drover.BulkProgress) {
		mu.Lock()
		progress = pr
		mu.Unlock()
	}
	var res drover.BulkProgress
	var err error
	if ids != nil {
		res, err = client.JobBulkByID(b.ctx, drover.BulkAction(row.Action), ids, report)
	} else {
		res, err = client.JobBulk(b.ctx, drover.BulkAction(row.Action), p, report)
	}
	close(ended)
	writer.Wait()
	report(res)
	switch {
	case err == nil:
		write(bulkDone, "")
	case b.ctx.Err() != nil:
		write(bulkInterrupted, "the server stopped before the action ended")
	default:
		write(bulkFailed, err.Error())
	}
}

// lookup reads a task from the store; nil when the store has none of
// that ID.
func (b *bulkTasks) lookup(ctx context.Context, id int64) (*bulkTask, error) {
	row, err := b.store.BulkTaskGet(ctx, id)
	if err != nil || row == nil {
		return nil, err
	}
	return &bulkTask{id: row.ID, row: *row, read: time.Now()}, nil
}

// get is lookup for the dashboard's status line, which shows nothing when
// the task cannot be read.
func (b *bulkTasks) get(id int64) *bulkTask {
	ctx, cancel := context.WithTimeout(b.ctx, bulkStoreTimeout)
	defer cancel()
	t, err := b.lookup(ctx, id)
	if err != nil {
		b.logger.Warn("bulk task: could not read it", "task", id, "error", err)
	}
	return t
}

// stop cancels the tasks still running, which record themselves as
// interrupted, and waits for them.
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
	t, err := s.bulkTasks.lookup(r.Context(), id)
	if err != nil {
		return err
	}
	if t == nil {
		return &apiError{status: http.StatusNotFound,
			msg: fmt.Sprintf("bulk task %d not found: the store keeps the last %d", id, bulkKept)}
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
