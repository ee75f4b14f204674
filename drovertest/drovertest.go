// Package drovertest helps test code that uses Drover: assert that jobs
// were inserted (in a test transaction or committed), run a job's worker
// synchronously through the real execute path, drain a queue, and freeze
// and advance time for scheduled jobs.
//
//	clock := drovertest.NewClock(time.Time{})
//	client, _ := drover.NewClient(driver, &drover.Config{Workers: workers, Clock: clock})
//
//	tx, _ := pool.Begin(ctx)
//	signUp(ctx, client, tx, "ada@example.com") // inserts a welcome email in tx
//	drovertest.RequireInsertedTx(ctx, t, driver, tx, EmailArgs{To: "ada@example.com"},
//		&drovertest.InsertedOpts{Queue: "email", ScheduledAt: clock.Now().Add(time.Hour)})
//
//	clock.Advance(time.Hour)
//	ran := drovertest.DrainTx(ctx, t, client, tx, "email")
//
// Every helper takes the store's driver or a Drover client, so one test
// runs on PostgreSQL (pgx.Tx) and on SQLite (*sql.Tx) alike. The helpers
// fail the test with a message that lists what the store holds instead of
// what was expected; the functions they are built on (Client.WorkJob,
// Client.Drain) return errors, for tests that want to check them.
package drovertest

import (
	"context"
	"sync"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
)

// Clock is a clock a test controls: it stands still until the test moves
// it. Give it to the client under test (drover.Config.Clock), and the
// client decides every job's time by it: the run_at of jobs inserted
// without one, the retry time of a failed attempt, which jobs its claims
// (and so Drain and WorkJob) take as due. Leases, timeouts and
// maintenance keep the real clock. It is safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock stopped at start, or at the current time when
// start is zero. The time is kept to the microsecond, as the stores keep
// it, so that a time a test computes from the clock equals what is stored.
func NewClock(start time.Time) *Clock {
	if start.IsZero() {
		start = time.Now()
	}
	return &Clock{now: start.Truncate(time.Microsecond)}
}

// Now implements drover.Clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d (back, if d is negative) and
// returns the new time.
func (c *Clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d).Truncate(time.Microsecond)
	return c.now
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t.Truncate(time.Microsecond)
}

var _ drover.Clock = (*Clock)(nil)

// TB is the part of testing.TB the helpers use, so that a test of the
// helpers can watch them fail.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Worker is what Work, WorkJob and Drain need of a client: a
// *drover.Client of either store.
type Worker[TTx any] interface {
	Insert(ctx context.Context, args drover.Args, opts *drover.InsertOpts) (*drovertype.JobRow, error)
	InsertTx(ctx context.Context, tx TTx, args drover.Args, opts *drover.InsertOpts) (*drovertype.JobRow, error)
	WorkJob(ctx context.Context, id int64) (*drover.WorkResult, error)
	WorkJobTx(ctx context.Context, tx TTx, id int64) (*drover.WorkResult, error)
	Drain(ctx context.Context, queue string) ([]*drover.WorkResult, error)
	DrainTx(ctx context.Context, tx TTx, queue string) ([]*drover.WorkResult, error)
}

var _ Worker[any] = (*drover.Client[any])(nil)

// Work inserts a job of args with opts and runs it at once, as WorkJob
// does, returning what the attempt did and what it stored. The job must
// be due by the client's clock: Work of a job scheduled later fails.
func Work[TTx any](ctx context.Context, tb TB, client Worker[TTx], args drover.Args, opts *drover.InsertOpts) *drover.WorkResult {
	tb.Helper()
	row, err := client.Insert(ctx, args, opts)
	if err != nil {
		tb.Fatalf("drovertest: insert %s: %v", args.Kind(), err)
	}
	return WorkJob(ctx, tb, client, row.ID)
}

// WorkTx is Work inside the test's transaction tx.
func WorkTx[TTx any](ctx context.Context, tb TB, client Worker[TTx], tx TTx, args drover.Args, opts *drover.InsertOpts) *drover.WorkResult {
	tb.Helper()
	row, err := client.InsertTx(ctx, tx, args, opts)
	if err != nil {
		tb.Fatalf("drovertest: insert %s: %v", args.Kind(), err)
	}
	res, err := client.WorkJobTx(ctx, tx, row.ID)
	if err != nil {
		tb.Fatalf("drovertest: work job %d: %v", row.ID, err)
	}
	return res
}

// WorkJob runs the stored job id once, synchronously, through the real
// execute path (drover.Client.WorkJob: claim, timeout, panic recovery,
// retry decision, the fenced write of the result), and returns what the
// attempt did (WorkResult.Err: nil when it completed) and what it stored
// (WorkResult.Stored: its state, next run_at, errors). A failing handler
// fails the job's attempt, not the test; a job that cannot run (not
// available, not due, of a kind the client has no worker for) fails the
// test.
func WorkJob[TTx any](ctx context.Context, tb TB, client Worker[TTx], id int64) *drover.WorkResult {
	tb.Helper()
	res, err := client.WorkJob(ctx, id)
	if err != nil {
		tb.Fatalf("drovertest: work job %d: %v", id, err)
	}
	return res
}

// Drain works queue until no job of it is due, as drover.Client.Drain
// does: one job at a time, in claim order, jobs the handlers insert and
// retries due by the client's clock included. It returns the attempts
// that ran, in order.
func Drain[TTx any](ctx context.Context, tb TB, client Worker[TTx], queue string) []*drover.WorkResult {
	tb.Helper()
	ran, err := client.Drain(ctx, queue)
	if err != nil {
		tb.Fatalf("drovertest: drain %s: %v (after %d attempts)", queue, err, len(ran))
	}
	return ran
}

// DrainTx is Drain inside the test's transaction tx.
func DrainTx[TTx any](ctx context.Context, tb TB, client Worker[TTx], tx TTx, queue string) []*drover.WorkResult {
	tb.Helper()
	ran, err := client.DrainTx(ctx, tx, queue)
	if err != nil {
		tb.Fatalf("drovertest: drain %s: %v (after %d attempts)", queue, err, len(ran))
	}
	return ran
}
