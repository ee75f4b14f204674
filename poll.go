package drover

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/outage"
)

// queuesPoller returns the store's read of every queue's due jobs when the
// driver has one (droverdriver.QueuesDueExecutor). The client then polls
// all its queues with one statement, and its producers keep no poll of
// their own: each producer's poll was a claim, and a client serving 1,000
// queues made 1,000 of them per poll interval while its queues waited
// (issue 36: on SQLite, whose interval is 50 ms, 14× the cost per job of
// one queue).
func (c *Client[TTx]) queuesPoller() droverdriver.QueuesDueExecutor {
	due, _ := c.exec.(droverdriver.QueuesDueExecutor)
	return due
}

// pollQueues asks the store every PollInterval which of the client's
// queues whose producers are drained have jobs due, and wakes their
// producers, until ctx ends. It is
// the fallback for what no notification announces (jobs another process
// inserted where notifications do not cross processes, scheduled jobs come
// due); a queue with jobs due that its producer cannot take (paused,
// limited, of other kinds or workers) is woken at every poll, as the
// producer's own poll claimed at every one.
func (c *Client[TTx]) pollQueues(ctx context.Context, due droverdriver.QueuesDueExecutor) {
	names := slices.Sorted(maps.Keys(c.producers))
	var queues []string
	failures := &outage.Reporter{Logger: c.config.Logger, What: "polling the queues for jobs due"}
	tick := time.NewTicker(c.config.PollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		var now time.Time // the store's clock, as the claims read it
		if c.config.Clock != nil {
			now = c.config.Clock.Now()
		}
		// Only drained producers wait for a poll: the others claim
		// until their queue runs dry.
		queues = queues[:0]
		for _, q := range names {
			if c.producers[q].Drained() {
				queues = append(queues, q)
			}
		}
		if len(queues) == 0 {
			continue
		}
		found, err := due.QueuesDue(ctx, queues, now)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failures.Failed(err)
			// Each producer claims, as its own poll did: the claims
			// report the outage and retry on their own.
			for _, p := range c.producers {
				p.Wake()
			}
			continue
		}
		failures.OK()
		for _, q := range found {
			if p := c.producers[q]; p != nil {
				p.Wake()
			}
		}
	}
}
