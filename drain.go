package drover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/engine"
	"github.com/droverhq/drover/internal/producer"
	"github.com/droverhq/drover/internal/validate"
)

// WorkResult is one attempt that WorkJob or Drain ran.
type WorkResult struct {
	// Job is the job as its worker received it: running, with this
	// attempt's number.
	Job *drovertype.JobRow
	// Err is the attempt's error as stored on the job (what the handler
	// returned, a panic with its stack, a timeout), nil when the attempt
	// completed.
	Err *drovertype.AttemptError
	// Stored is the job as the attempt's result left it in the store:
	// completed with its result, retryable with the run_at of its next
	// attempt, discarded, cancelled. Nil when the store no longer holds
	// it (Config.DeleteCompleted).
	Stored *drovertype.JobRow
}

// drainMax bounds the attempts one Drain runs: a job that inserts another
// like itself every time would otherwise drain forever.
const drainMax = 100_000

// WorkJob runs job id here and now, in the calling goroutine, through the
// path a started client's workers take: it claims the job (so the job
// must be available, and due by Config.Clock, in a queue and of a kind
// that are not paused), runs its worker under its timeout with panic
// recovery, decides the outcome (completed, retried with backoff,
// discarded when out of attempts, cancelled) and writes it with the same
// fenced statements, settling workflows, batches, keys and unique keys.
// It is meant for tests (drovertest.WorkJob) and one-off scripts; the
// client need not be started, and need not work the job's queue.
func (c *Client[TTx]) WorkJob(ctx context.Context, id int64) (*WorkResult, error) {
	return c.workJob(ctx, c.exec, id)
}

// WorkJobTx is WorkJob inside the caller's transaction: the claim, the
// result and whatever the job's end settles are written in tx, and gone
// if tx rolls back.
func (c *Client[TTx]) WorkJobTx(ctx context.Context, tx TTx, id int64) (*WorkResult, error) {
	return c.workJob(ctx, c.driver.UnwrapExecutor(tx), id)
}

// Drain works queue to the end here and now, in the calling goroutine:
// it claims the queue's next due job of a kind the client has a worker
// for, runs it as WorkJob does, and starts again, until no job is left to
// claim, then returns the attempts it ran, in order. Jobs the handlers
// insert into the queue run too, as do retries due by Config.Clock (a
// frozen test clock keeps a retry for later; the system clock runs it
// once its backoff has passed). It stops with an error after 100,000
// attempts, the mark of a job that inserts itself again and again. Like
// WorkJob it is meant for tests (drovertest.Drain) and scripts, on a
// client whose producers do not work the queue.
func (c *Client[TTx]) Drain(ctx context.Context, queue string) ([]*WorkResult, error) {
	return c.drain(ctx, c.exec, queue)
}

// DrainTx is Drain inside the caller's transaction.
func (c *Client[TTx]) DrainTx(ctx context.Context, tx TTx, queue string) ([]*WorkResult, error) {
	return c.drain(ctx, c.driver.UnwrapExecutor(tx), queue)
}

func (c *Client[TTx]) workJob(ctx context.Context, ex droverdriver.Executor, id int64) (*WorkResult, error) {
	row, err := ex.JobGet(ctx, id)
	if err != nil {
		return nil, err
	}
	if c.config.Workers == nil || !c.config.Workers.has(row.Kind) {
		return nil, fmt.Errorf("job %d: %w %q: no worker registered in client %s", id, ErrUnknownKind, row.Kind, c.config.ID)
	}
	now := c.now()
	switch row.State {
	case drovertype.JobStateAvailable, drovertype.JobStateScheduled, drovertype.JobStateRetryable:
		if row.RunAt.After(now) {
			return nil, fmt.Errorf("job %d is due at %s, after the client's now (%s): advance Config.Clock, or wait",
				id, row.RunAt.Format(time.RFC3339Nano), now.Format(time.RFC3339Nano))
		}
	default:
		return nil, fmt.Errorf("job %d is %s: only a waiting job that is due can be worked", id, row.State)
	}
	// The claim from just before the job's place in the claim order takes
	// the job itself: it is available and due, so nothing sorts between.
	after := droverdriver.ClaimPosition{Priority: row.Priority, RunAt: row.RunAt, ID: id - 1}
	claimed, err := c.claimIn(ctx, ex, droverdriver.ClaimParams{Queue: row.Queue, Max: 1, Owner: c.config.ID,
		Lease: c.config.LeaseDuration, After: &after, Kinds: []string{row.Kind}})
	if err != nil {
		return nil, err
	}
	if len(claimed) == 0 {
		return nil, fmt.Errorf("job %d could not be claimed: its queue %q or kind %q is paused, or another worker holds it",
			id, row.Queue, row.Kind)
	}
	if claimed[0].ID != id {
		// Another worker took the job between the read and the claim,
		// and the claim found the next one: give that one back.
		other := claimed[0]
		_, err := engine.Finish(ctx, ex, []droverdriver.Result{{ID: other.ID, Attempt: other.Attempt,
			LeaseToken: other.LeaseToken, Outcome: droverdriver.OutcomeReleased, Flow: other.Flow, Key: other.Key, Queue: other.Queue}})
		return nil, errors.Join(fmt.Errorf("job %d could not be claimed: another worker holds it", id), err)
	}
	return c.runClaimed(ctx, ex, claimed[0])
}

func (c *Client[TTx]) drain(ctx context.Context, ex droverdriver.Executor, queue string) ([]*WorkResult, error) {
	if err := validate.Queue(queue); err != nil {
		return nil, err
	}
	if c.config.Workers == nil {
		return nil, invalidf("drain %s: the client has no Workers to run jobs with", queue)
	}
	kinds := c.config.Workers.Kinds()
	slices.Sort(kinds)
	var out []*WorkResult
	for len(out) < drainMax {
		// One job at a time, so that a job inserted by a handler takes
		// its place in the claim order before the next claim.
		claimed, err := c.claimIn(ctx, ex, droverdriver.ClaimParams{Queue: queue, Max: 1, Owner: c.config.ID,
			Lease: c.config.LeaseDuration, Kinds: kinds})
		if err != nil || len(claimed) == 0 {
			return out, err
		}
		res, err := c.runClaimed(ctx, ex, claimed[0])
		if err != nil {
			return out, err
		}
		out = append(out, res)
	}
	return out, fmt.Errorf("drain %s: stopped after %d attempts with jobs still due: does a job insert itself again every time?", queue, drainMax)
}

// runClaimed runs a job claimed in ex through the client's execute path
// (runJob: timeout, panic recovery, outcome), writes the result through
// the engine in ex, and reads the job back.
func (c *Client[TTx]) runClaimed(ctx context.Context, ex droverdriver.Executor, row *drovertype.JobRow) (*WorkResult, error) {
	// The handler's Job holds row (runJob): the result reports the row as
	// claimed, whatever the handler did to its own.
	claimed, ran := *row, producer.RanOf(row)
	jc, done := producer.Standalone(ctx)
	start := time.Now()
	res := c.runJob(jc, row)
	done()
	ran.Took = time.Since(start)
	c.observeRun(ran, res)
	accepted, err := engine.Finish(ctx, ex, []droverdriver.Result{res})
	if err != nil {
		return nil, fmt.Errorf("job %d: write the result: %w", claimed.ID, err)
	}
	if len(accepted) != 1 {
		return nil, fmt.Errorf("job %d: the store refused the result of attempt %d", claimed.ID, claimed.Attempt)
	}
	out := &WorkResult{Job: &claimed}
	if len(res.Error) > 0 {
		var ae drovertype.AttemptError
		if err := json.Unmarshal(res.Error, &ae); err == nil {
			out.Err = &ae
		}
	}
	stored, err := ex.JobGet(ctx, claimed.ID)
	switch {
	case errors.Is(err, droverdriver.ErrNotFound):
	case err != nil:
		return nil, err
	default:
		out.Stored = stored
	}
	return out, nil
}
