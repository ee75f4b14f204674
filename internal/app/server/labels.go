package server

import "time"

// otherLabel is the label value that stands for every value past the
// limit of a label.
const otherLabel = "other"

// labelLimiter bounds the distinct values one metrics label takes. Queue
// and kind names come from whoever holds an enqueue token, and every new
// value is a new series that the registry keeps for good: ten thousand
// kinds made /metrics 500 times larger. The first max values seen keep
// their name, later ones count as "other"; a value unseen for ttl gives
// its place up, and its series are deleted, so that kinds and queues that
// went away stop costing anything.
type labelLimiter struct {
	max  int
	ttl  time.Duration
	seen map[string]time.Time
}

func newLabelLimiter(max int, ttl time.Duration) *labelLimiter {
	return &labelLimiter{max: max, ttl: ttl, seen: map[string]time.Time{}}
}

// admit returns v if it holds or can take a place, else otherLabel.
func (l *labelLimiter) admit(v string, now time.Time) string {
	if _, ok := l.seen[v]; ok || len(l.seen) < l.max {
		l.seen[v] = now
		return v
	}
	return otherLabel
}

// expire forgets the values unseen for ttl and returns them, for their
// series to be deleted.
func (l *labelLimiter) expire(now time.Time) []string {
	var gone []string
	for v, at := range l.seen {
		if now.Sub(at) >= l.ttl {
			delete(l.seen, v)
			gone = append(gone, v)
		}
	}
	return gone
}
