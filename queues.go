package drover

import (
	"context"
	"time"

	"github.com/droverhq/drover/droverdriver"
)

// The public stats types mirror the driver's, so that they convert.
var (
	_ = QueueStats(droverdriver.QueueStat{})
	_ = FinishedStats(droverdriver.FinishedStat{})
	_ = LeaseOwner(droverdriver.LeaseOwner{})
)

// QueueStats is the state of one queue's waiting and running work.
type QueueStats struct {
	Queue     string
	Available int64
	Scheduled int64
	Retryable int64
	Running   int64
	// OldestAvailable is the run_at of the oldest claimable job, nil when
	// none is: now minus it is how far behind the queue's workers are.
	OldestAvailable *time.Time
}

// QueueStats summarises every queue that has waiting or running jobs. It
// reads only the hot table (one pass, no finished jobs), so it stays cheap
// however much history is kept, but it still scans every waiting job:
// sample it on an interval, as `drover serve` does, not per request.
func (c *Client[TTx]) QueueStats(ctx context.Context) ([]QueueStats, error) {
	rows, err := c.driver.QueueStats(ctx, time.Now())
	if err != nil {
		return nil, err
	}
	return mapAll(rows, func(r droverdriver.QueueStat) QueueStats { return QueueStats(r) }), nil
}

// FinishedStats summarises one queue's jobs finished in a window.
type FinishedStats struct {
	Queue                           string
	Completed, Cancelled, Discarded int64
	// PickupP50, PickupP95 and PickupP99 are nearest-rank percentiles of
	// how long completed jobs waited, from run_at to the start of their
	// last attempt.
	PickupP50, PickupP95, PickupP99 time.Duration
}

// FinishedStats summarises the jobs of every queue finished in (since,
// until]: throughput and pickup latency over that window, whichever process
// ran them. It reads the recent end of finished jobs through their index
// on finalized_at; sample it on an interval, each window starting where the
// previous one ended, so that no job counts twice.
func (c *Client[TTx]) FinishedStats(ctx context.Context, since, until time.Time) ([]FinishedStats, error) {
	rows, err := c.driver.FinishedStats(ctx, since, until)
	if err != nil {
		return nil, err
	}
	return mapAll(rows, func(r droverdriver.FinishedStat) FinishedStats { return FinishedStats(r) }), nil
}

// LeaseOwner is a process that holds running jobs.
type LeaseOwner struct {
	// Owner is the client's ID (Config.ID) or the HTTP worker's name.
	Owner   string
	Running int64
	// LeaseExpiresAt is the latest expiry of its leases; heartbeats push
	// it forward, so a date in the past means the process stopped
	// heartbeating and its jobs are about to be rescued.
	LeaseExpiresAt time.Time
}

// LeaseOwners lists the processes holding running jobs, Go clients and
// HTTP workers alike, from one pass over the hot table.
func (c *Client[TTx]) LeaseOwners(ctx context.Context) ([]LeaseOwner, error) {
	rows, err := c.driver.LeaseOwners(ctx)
	if err != nil {
		return nil, err
	}
	return mapAll(rows, func(r droverdriver.LeaseOwner) LeaseOwner { return LeaseOwner(r) }), nil
}
