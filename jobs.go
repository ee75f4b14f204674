package drover

import (
	"context"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/engine"
)

// JobListParams filters JobList. Empty fields match everything.
type JobListParams struct {
	States []JobState
	Queue  string
	Kind   string
	// After is the keyset cursor: pass the last ID of the previous page.
	After int64
	// Limit caps the page; default 100, at most 10,000.
	Limit int
}

// JobGet returns one job, waiting, running or finished. A waiting routed
// job that no live worker can take comes back with Unroutable set.
func (c *Client[TTx]) JobGet(ctx context.Context, id int64) (*JobRow, error) {
	r, err := c.driver.JobGet(ctx, id)
	if err != nil {
		return nil, err
	}
	row := jobRowFromDriver(r)
	if err := c.markUnroutable(ctx, []*JobRow{row}); err != nil {
		return nil, err
	}
	return row, nil
}

// JobList returns a page of jobs in ID order. The next page starts after
// the last ID returned.
func (c *Client[TTx]) JobList(ctx context.Context, p JobListParams) ([]*JobRow, error) {
	if p.Limit == 0 {
		p.Limit = 100
	}
	if p.Limit < 0 || p.Limit > 10_000 {
		return nil, invalidf("limit %d: must be between 1 and 10000", p.Limit)
	}
	if p.Queue != "" {
		if err := ValidateQueue(p.Queue); err != nil {
			return nil, err
		}
	}
	states := make([]droverdriver.State, len(p.States))
	for i, s := range p.States {
		if !droverdriver.State(s).Valid() {
			return nil, invalidf("state %q: must be one of %v", s, droverdriver.States)
		}
		states[i] = droverdriver.State(s)
	}
	rows, err := c.driver.JobList(ctx, droverdriver.ListParams{States: states, Queue: p.Queue, Kind: p.Kind,
		AfterID: p.After, Limit: p.Limit, Now: time.Now()})
	if err != nil {
		return nil, err
	}
	out := mapAll(rows, jobRowFromDriver)
	if err := c.markUnroutable(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

// JobCancel cancels a job. A waiting job is cancelled at once; a running one
// has its context cancelled at its client's next heartbeat and ends as
// cancelled unless it completes first. A finished job is left as it is.
// It returns the job after the call.
func (c *Client[TTx]) JobCancel(ctx context.Context, id int64) (*JobRow, error) {
	r, err := engine.Cancel(ctx, c.driver, id, time.Now())
	if err != nil {
		return nil, err
	}
	return jobRowFromDriver(r), nil
}

// JobDiscard gives up on a job that has not started: a waiting job
// (available, scheduled or retryable) is finished as discarded at once and
// never runs. A running job is left alone (cancel it instead), as is a
// finished one. It returns the job after the call.
func (c *Client[TTx]) JobDiscard(ctx context.Context, id int64) (*JobRow, error) {
	r, err := engine.Discard(ctx, c.driver, id, time.Now())
	if err != nil {
		return nil, err
	}
	return jobRowFromDriver(r), nil
}

// JobRetry makes a job run again as soon as possible: a finished job
// (completed, cancelled or discarded) is made available with one more
// attempt allowed if it had none left; a scheduled or retryable job becomes
// available now. A running job is left alone. It returns the job after the
// call.
//
// A finished keyed job rejoins its key: it is blocked behind the key's
// active jobs while the key is at its limit, and starts before the key's
// other blocked jobs, in its original place in the insert order. A
// finished batch member or job with dependants is refused with
// ErrNotRetryable, because its end was already counted and settled.
func (c *Client[TTx]) JobRetry(ctx context.Context, id int64) (*JobRow, error) {
	r, err := engine.Retry(ctx, c.driver, id, time.Now())
	if err != nil {
		return nil, err
	}
	return jobRowFromDriver(r), nil
}

// JobCountByState counts jobs by state, in one queue or (queue "") all.
func (c *Client[TTx]) JobCountByState(ctx context.Context, queue string) (map[JobState]int64, error) {
	counts, err := c.driver.JobCountByState(ctx, queue)
	if err != nil {
		return nil, err
	}
	out := make(map[JobState]int64, len(counts))
	for s, n := range counts {
		out[JobState(s)] = n
	}
	return out, nil
}
