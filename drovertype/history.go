package drovertype

import "time"

// StatSample is one stored sample of a queue's figures, the window of the
// history's bucket that ends At: the jobs waiting and running at its time,
// those that finished in its window and the percentiles of the completed
// ones' pickup latency and run time.
type StatSample struct {
	At time.Time
	// Queue and Kind name the series; "" stands for all of them.
	Queue, Kind string
	// The jobs waiting and running at At (averaged over a longer
	// window).
	Pending, Blocked, Available, Scheduled, Retryable, Running int64
	// The jobs that finished in the window, by final state.
	Completed, Cancelled, Discarded int64
	// Nearest-rank percentiles of the completed jobs' pickup latency
	// (run_at to the start of their last attempt) and run time (that
	// start to their finish); the slowest minute's over a longer window.
	PickupP50, PickupP95, PickupP99 time.Duration
	RunP50, RunP95, RunP99          time.Duration
}

// TopicLagSample is one stored sample of a subscription's lag.
type TopicLagSample struct {
	At                  time.Time
	Topic, Subscription string
	// Lag counts the messages past the subscription's cursors, and
	// Oldest is how long the oldest of them had waited (the largest of a
	// longer window's).
	Lag    int64
	Oldest time.Duration
	// Dropped counts the messages retention dropped unread, in all.
	Dropped int64
}

// TimeRange bounds one of a job's times: From inclusive, To exclusive. A
// zero bound is open; a zero range matches every job, also one whose time
// is not set (a job never attempted, a job not finished).
type TimeRange struct {
	From, To time.Time
}

// IsZero reports whether r bounds nothing.
func (r TimeRange) IsZero() bool { return r.From.IsZero() && r.To.IsZero() }
