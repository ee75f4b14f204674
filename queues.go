package drover

import (
	"context"
	"time"

	"github.com/droverhq/drover/internal/driver"
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
	out := make([]QueueStats, len(rows))
	for i, r := range rows {
		out[i] = QueueStats(r)
	}
	return out, nil
}

// QueueStats and driver.QueueStat must stay convertible.
var _ = QueueStats(driver.QueueStat{})
