package drover

import (
	"context"
	"fmt"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/validate"
)

// Args are the typed arguments of a job. Kind names the job type in the
// store; it must be stable across deploys because stored jobs refer to it.
// Implement it on a struct value type (not a pointer), and make the struct
// encodable with encoding/json.
type Args interface {
	Kind() string
}

// Worker works jobs of one kind.
type Worker[T Args] interface {
	// Work runs one attempt of job. Returning nil completes the job; an
	// error schedules a retry with backoff until the job's attempts run
	// out, then discards it; an error made with Cancel finishes it as
	// cancelled without retry. A panic is recovered and treated as an
	// error. ctx is cancelled when the job's timeout passes, when someone
	// cancels the job, or when a stopping client gives up waiting.
	Work(ctx context.Context, job *Job[T]) error
}

// WorkerTimeout may be implemented by a Worker to set the timeout of its
// kind, overriding Config.JobTimeout. A job's own InsertOpts.Timeout wins
// over both. A negative duration means no timeout.
type WorkerTimeout[T Args] interface {
	Timeout(job *Job[T]) time.Duration
}

// WorkerNextRetry may be implemented by a Worker to choose when a failed
// job runs again, overriding Config.RetryPolicy.
type WorkerNextRetry[T Args] interface {
	NextRetry(job *Job[T]) time.Time
}

// WorkFunc turns a function into a Worker, for handlers that need no state.
func WorkFunc[T Args](f func(ctx context.Context, job *Job[T]) error) Worker[T] {
	return workFunc[T](f)
}

type workFunc[T Args] func(context.Context, *Job[T]) error

func (f workFunc[T]) Work(ctx context.Context, job *Job[T]) error { return f(ctx, job) }

// Workers is the set of workers a client can run, by kind. Build it with
// NewWorkers and AddWorker before creating the client.
type Workers struct {
	byKind map[string]workUnit
}

// NewWorkers returns an empty set of workers.
func NewWorkers() *Workers {
	return &Workers{byKind: make(map[string]workUnit)}
}

// AddWorker registers w for the kind of T. It panics when the kind is
// already registered, because two handlers for one kind is a programming
// error that must not reach production; use AddWorkerSafely to get an error
// instead.
func AddWorker[T Args](workers *Workers, w Worker[T]) {
	if err := AddWorkerSafely(workers, w); err != nil {
		panic(err)
	}
}

// AddWorkerSafely registers w for the kind of T, or reports why it cannot.
func AddWorkerSafely[T Args](workers *Workers, w Worker[T]) error {
	var zero T
	kind := zero.Kind()
	if err := validate.Kind(kind); err != nil {
		return err
	}
	if _, dup := workers.byKind[kind]; dup {
		return fmt.Errorf("worker for kind %q is already registered", kind)
	}
	workers.byKind[kind] = &typedUnit[T]{worker: w}
	return nil
}

// Kinds returns the registered kinds.
func (w *Workers) Kinds() []string {
	kinds := make([]string, 0, len(w.byKind))
	for k := range w.byKind {
		kinds = append(kinds, k)
	}
	return kinds
}

func (w *Workers) has(kind string) bool {
	if w == nil {
		return false
	}
	_, ok := w.byKind[kind]
	return ok
}

// workUnit erases the type parameter so the engine can hold workers of every
// kind in one map; each unit decodes its own args, once per attempt.
type workUnit interface {
	// begin returns the state of an attempt of the claimed row r, which
	// its Job holds (and its handler may change).
	begin(r *drovertype.JobRow, exec droverdriver.Executor) *attemptState
	work(ctx context.Context, row *drovertype.JobRow, attempt *attemptState) error
	timeout(row *drovertype.JobRow, attempt *attemptState) (time.Duration, bool)
	nextRetry(row *drovertype.JobRow, attempt *attemptState) (time.Time, bool)
}

type typedUnit[T Args] struct {
	worker Worker[T]
}

// typedAttempt is everything an attempt of a T job needs, allocated
// together: its Job (args decoded later) and the attempt's state. One
// allocation instead of two per job.
//
// The Job holds the claimed row itself, not a copy of it: a claim's rows
// belong to their attempts, one each, and what the runtime reads of a row
// once its handler ran (the attempt, the flow, the key, the outcome's
// limits) it reads before, so a handler that changes its row changes
// nothing the attempt's finish writes (runJob). A copy per attempt was a
// third of a noop job's allocated bytes (docs/design/cost-per-job.md).
type typedAttempt[T Args] struct {
	job   Job[T]
	state attemptState
}

func (u *typedUnit[T]) begin(r *drovertype.JobRow, exec droverdriver.Executor) *attemptState {
	a := &typedAttempt[T]{}
	a.job.JobRow, a.job.attempt = r, &a.state
	a.state.exec, a.state.job = exec, &a.job
	return &a.state
}

// job returns the attempt's Job, decoding its args the first time one of
// the worker's methods needs them: an attempt decodes them at most once,
// and only if its kind has a worker here.
func (u *typedUnit[T]) job(row *drovertype.JobRow, attempt *attemptState) (*Job[T], error) {
	job := attempt.job.(*Job[T])
	if attempt.decoded || attempt.decodeErr != nil {
		return job, attempt.decodeErr
	}
	if err := decodeArgs(row.EncodedArgs, &job.Args); err != nil {
		attempt.decodeErr = fmt.Errorf("decode args of %s job %d: %w", row.Kind, row.ID, err)
		return nil, attempt.decodeErr
	}
	attempt.decoded = true
	return job, nil
}

func (u *typedUnit[T]) work(ctx context.Context, row *drovertype.JobRow, attempt *attemptState) error {
	job, err := u.job(row, attempt)
	if err != nil {
		return err
	}
	return u.worker.Work(ctx, job)
}

func (u *typedUnit[T]) timeout(row *drovertype.JobRow, attempt *attemptState) (time.Duration, bool) {
	wt, ok := u.worker.(WorkerTimeout[T])
	if !ok {
		return 0, false
	}
	job, err := u.job(row, attempt)
	if err != nil {
		return 0, false
	}
	return wt.Timeout(job), true
}

// nextRetry asks the worker when to retry, with the Job its handler had.
func (u *typedUnit[T]) nextRetry(row *drovertype.JobRow, attempt *attemptState) (time.Time, bool) {
	wr, ok := u.worker.(WorkerNextRetry[T])
	if !ok {
		return time.Time{}, false
	}
	job, err := u.job(row, attempt)
	if err != nil {
		return time.Time{}, false
	}
	return wr.NextRetry(job), true
}
