package drover

import (
	"context"
	"fmt"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// Cluster-wide queue limits (QueueConfig.GlobalMaxWorkers, RateLimit, or
// QueueSetLimits).
//
// The limits are queue settings stored in the database (queue_settings),
// next to the queue's pause, and the store keeps a token bucket per limited
// queue for the rate. Every claim, a Go client's or a remote worker's, goes
// through the engine (internal/engine), which applies the stored settings
// from a per-process cache: a claim of a limited queue locks the settings
// row, so the queue's limited claims take turns, and takes no more jobs
// than the stored limits leave room for: the queue's rows claimed under
// them (marked limited) that are still running, counted from a partial
// index, stay within the cap, and each job spends a token. A job that
// finishes or is rescued stops running and so frees its room by itself:
// finishes, rescues and queues without limits never read or lock the row.

// checkQueueLimits validates the limits of queue q.
func checkQueueLimits(name string, q QueueConfig) error {
	return checkLimits(fmt.Sprintf("config: queue %q: ", name), q.GlobalMaxWorkers, q.RateLimit, q.RatePeriod)
}

// checkLimits validates limits; prefix says where they come from.
func checkLimits(prefix string, globalMax, rate int, period time.Duration) error {
	switch {
	case globalMax < 0 || globalMax > 1_000_000:
		return invalidf("%sGlobalMaxWorkers %d must be between 0 (no cap) and 1000000", prefix, globalMax)
	case rate < 0 || rate > 1_000_000:
		return invalidf("%sRateLimit %d must be between 0 (no limit) and 1000000", prefix, rate)
	case rate > 0 && period < time.Millisecond:
		return invalidf("%sRatePeriod %s must be at least 1ms when RateLimit is set", prefix, period)
	case rate == 0 && period != 0:
		return invalidf("%sRatePeriod %s needs a RateLimit", prefix, period)
	}
	return nil
}

// limit returns the queue's configured limits, nil when it has none.
func (q QueueConfig) limit() *drovertype.QueueLimit {
	if q.GlobalMaxWorkers == 0 && q.RateLimit == 0 {
		return nil
	}
	return &drovertype.QueueLimit{MaxRunning: q.GlobalMaxWorkers, Rate: q.RateLimit, Period: q.RatePeriod}
}

// storeConfiguredLimits writes the limits of the client's queues that
// configure some into the store, where every claim reads them. Queues
// whose configuration sets none keep what is stored: a client started
// without limits must not lift those another client or an operator set.
func (c *Client[TTx]) storeConfiguredLimits(ctx context.Context) error {
	for name, q := range c.config.Queues {
		l := q.limit()
		if l == nil && q.StrictOrder == 0 {
			continue
		}
		p := droverdriver.QueueSettingsSetParams{Queue: name, Limit: l}
		if q.StrictOrder > 0 {
			p.Strict = &q.StrictOrder
		}
		if _, err := c.exec.QueueSettingsSet(ctx, p); err != nil {
			return fmt.Errorf("store the limits of queue %q: %w", name, err)
		}
		c.settings.Forget(name)
	}
	return nil
}

// wakeLimited wakes the producers of limited queues that results of a
// flushed finish belong to. A limited claim comes back short when the
// limit, not the queue, ran out, and its producer then waits for a wake-up;
// the finish of its own jobs has just freed room for it. (Room freed by
// other processes reaches it at the next poll.) Results of queues not
// known to be limited cost a map lookup per run of one queue.
func (c *Client[TTx]) wakeLimited(results []droverdriver.Result) {
	last := ""
	for i := range results {
		if q := results[i].Queue; q != last {
			last = q
			if s, _ := c.settings.Peek(q); s.Limited() {
				c.wake(q)
			}
		}
	}
}
