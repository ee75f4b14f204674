package drover

import (
	"context"
	"sync"
	"time"

	"github.com/droverhq/drover/droverdriver"
)

// Cluster-wide queue limits (QueueConfig.GlobalMaxWorkers, RateLimit).
//
// The store keeps one row per limited queue holding its limits and a token
// bucket for the rate. A claim of a limited queue locks that row, so the
// queue's limited claims take turns, and takes no more jobs than the limits
// leave room for: the queue's rows claimed under them (marked limited) that
// are still running, counted from a partial index, stay within the cap, and
// each job spends a token. A job that finishes or is rescued stops running
// and so frees its room by itself: finishes, rescues and queues without
// limits never read or lock the row.

// checkQueueLimits validates the limits of queue q.
func checkQueueLimits(name string, q QueueConfig) error {
	switch {
	case q.GlobalMaxWorkers < 0 || q.GlobalMaxWorkers > 1_000_000:
		return invalidf("config: queue %q: GlobalMaxWorkers %d must be between 0 (no cap) and 1000000", name, q.GlobalMaxWorkers)
	case q.RateLimit < 0 || q.RateLimit > 1_000_000:
		return invalidf("config: queue %q: RateLimit %d must be between 0 (no limit) and 1000000", name, q.RateLimit)
	case q.RateLimit > 0 && q.RatePeriod < time.Millisecond:
		return invalidf("config: queue %q: RatePeriod %s must be at least 1ms when RateLimit is set", name, q.RatePeriod)
	case q.RateLimit == 0 && q.RatePeriod != 0:
		return invalidf("config: queue %q: RatePeriod %s needs a RateLimit", name, q.RatePeriod)
	}
	return nil
}

// limit returns the queue's limits for its claims, nil when it has none.
func (q QueueConfig) limit() *droverdriver.QueueLimit {
	if q.GlobalMaxWorkers == 0 && q.RateLimit == 0 {
		return nil
	}
	return &droverdriver.QueueLimit{MaxRunning: q.GlobalMaxWorkers, Rate: q.RateLimit, Period: q.RatePeriod}
}

// wakeLimited wakes the producers of limited queues that results of a
// flushed finish belong to. A limited claim comes back short when the
// limit, not the queue, ran out, and its producer then waits for a wake-up;
// the finish of its own jobs has just freed room for it. (Room freed by
// other processes reaches it at the next poll.) Clients without limited
// queues return at once.
func (c *Client[TTx]) wakeLimited(results []droverdriver.Result) {
	if !c.limited {
		return
	}
	last := ""
	for i := range results {
		if q := results[i].Queue; q != last {
			last = q
			if c.config.Queues[q].limit() != nil {
				c.wake(q)
			}
		}
	}
}

// remoteLimit returns the limits a remote claim of queue must respect. A
// remote worker brings no configuration, so the limits come from the store,
// where every limited claim of a Go client writes its queue's limits;
// without this a remote claim ignored them (GlobalMaxWorkers 1, a remote
// claim took 5 jobs). This client's own configuration, when it limits the
// queue, wins, as it does for its own claims.
func (r *Remote) remoteLimit(ctx context.Context, queue string) (*droverdriver.QueueLimit, error) {
	if l := r.config.Queues[queue].limit(); l != nil {
		return l, nil
	}
	return r.limits.get(ctx, queue, r.exec.QueueLimitGet)
}

// limitCacheTTL is how long a queue's stored limits are reused. Long enough
// that remote claims of a busy queue cost no extra statement each; short
// enough that a limit set or changed by a Go client's configuration reaches
// remote claims within a second.
const limitCacheTTL = time.Second

// maxCachedLimits bounds the queues whose stored limits are remembered.
const maxCachedLimits = 1024

// limitCache remembers, per queue, the limits last read from the store.
type limitCache struct {
	mu      sync.Mutex
	entries map[string]limitEntry
}

type limitEntry struct {
	limit *droverdriver.QueueLimit
	read  time.Time
}

func (lc *limitCache) get(ctx context.Context, queue string, read func(context.Context, string) (*droverdriver.QueueLimit, error)) (*droverdriver.QueueLimit, error) {
	lc.mu.Lock()
	e, ok := lc.entries[queue]
	lc.mu.Unlock()
	if ok && time.Since(e.read) < limitCacheTTL {
		return e.limit, nil
	}
	l, err := read(ctx, queue)
	if err != nil {
		return nil, err
	}
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.entries == nil || len(lc.entries) >= maxCachedLimits {
		// Remote workers name queues freely: start over rather than grow
		// without bound.
		lc.entries = map[string]limitEntry{}
	}
	lc.entries[queue] = limitEntry{limit: l, read: time.Now()}
	return l, nil
}
