package droverdriver

import (
	"context"
	"time"

	"github.com/droverhq/drover/drovertype"
)

// HistoryExecutor holds the statements of the stored history of queue
// figures and subscription lag (migration 023), behind the dashboard's
// charts: the leader records a minute sample of every queue, kind and
// subscription (maintenance.HistoryRecorder), rolls old minute samples
// into hourly ones and drops what is past retention, so the history
// survives restarts and stays bounded by the series in use.
type HistoryExecutor interface {
	// StatsRecord stores the minute sample that ends at p.At: for every
	// queue and kind, for every queue (kind ""), and for all queues
	// together (queue and kind ""), the jobs waiting and running at p.Now
	// (read from the hot table, as QueueStats does), the jobs finished in
	// (p.Since, p.Until] by final state, and the nearest-rank percentiles
	// of the completed ones' pickup latency and run time. The all-queues
	// sample is stored even when no job exists. A sample already stored
	// for p.At is kept (a second leader records nothing twice). It returns
	// how many samples it stored.
	StatsRecord(ctx context.Context, p StatsRecordParams) (int, error)

	// TopicLagRecord stores the minute sample of subscription lag that
	// ends at, one per lag, keeping any stored already.
	TopicLagRecord(ctx context.Context, at time.Time, lags []drovertype.SubscriptionLag) error

	// StatsRollup replaces the minute samples of both tables at or before
	// p.Minutes (an hour's end) with hourly ones, one per hour and series:
	// the hour's average of gauges (lag included), the sum of its counts
	// and the largest of its percentiles, dropped counts and ages. It
	// deletes hourly samples before p.Hours. It returns how many samples
	// it deleted in all.
	StatsRollup(ctx context.Context, p StatsRollupParams) (int, error)

	// StatsHistory returns the samples of the series p selects in
	// (p.From, p.To], merged into buckets of p.Bucket ending on its
	// multiples (since the Unix epoch) as StatsRollup merges an hour,
	// oldest first, then by queue and kind. Only samples no longer than
	// the bucket are read: an hourly sample never lands in a shorter
	// bucket.
	StatsHistory(ctx context.Context, p StatsHistoryParams) ([]drovertype.StatSample, error)

	// TopicLagHistory is StatsHistory for subscription lag: the samples
	// of p.Topic's subscriptions (of every topic for ""), by topic and
	// subscription.
	TopicLagHistory(ctx context.Context, p TopicLagHistoryParams) ([]drovertype.TopicLagSample, error)
}

// StatsEach selects, as a queue or kind of StatsHistoryParams, the series
// of each queue or kind on its own; no queue or kind can be named so.
const StatsEach = "*"

// StatsRecordParams is one StatsRecord.
type StatsRecordParams struct {
	// At ends the sample: its time, and its key.
	At time.Time
	// Now is when its gauges are read: a job due by then is waiting as
	// available, a later one as scheduled (or retryable).
	Now time.Time
	// Since and Until bound the finish times of the jobs it counts;
	// Until is a little before At, so that finishes still committing at
	// At are counted by the next sample, never lost.
	Since, Until time.Time
}

// StatsRollupParams is one StatsRollup.
type StatsRollupParams struct {
	// Minutes is the end of the last hour whose minute samples become an
	// hourly one.
	Minutes time.Time
	// Hours drops the hourly samples before it.
	Hours time.Time
}

// StatsHistoryParams selects stored samples.
type StatsHistoryParams struct {
	From, To time.Time
	// Bucket is how long one returned sample is, at least a minute.
	Bucket time.Duration
	// Queue and Kind select the series: a name, "" for all queues (all
	// kinds of the queue) together, or StatsEach for each one on its own.
	Queue, Kind string
}

// TopicLagHistoryParams selects stored lag samples.
type TopicLagHistoryParams struct {
	From, To time.Time
	Bucket   time.Duration
	// Topic is the topic whose subscriptions are read, "" for every one.
	Topic string
}

// SetDurations sets the sample's percentiles from milliseconds, as the
// stores keep them: pickup p50, p95, p99, then run time p50, p95, p99.
func SetDurations(s *drovertype.StatSample, ms [6]float64) {
	s.PickupP50, s.PickupP95, s.PickupP99 = MS(ms[0]), MS(ms[1]), MS(ms[2])
	s.RunP50, s.RunP95, s.RunP99 = MS(ms[3]), MS(ms[4]), MS(ms[5])
}

// MS turns milliseconds into a duration, to the microsecond the stores
// keep times to.
func MS(ms float64) time.Duration {
	return time.Duration(ms * float64(time.Millisecond)).Round(time.Microsecond)
}

// LagAgeMS is how long, in milliseconds, the oldest pending message of a
// subscription (published at oldest, nil for none) had waited at at.
func LagAgeMS(at time.Time, oldest *time.Time) float64 {
	if oldest == nil {
		return 0
	}
	return float64(max(at.Sub(*oldest), 0)) / float64(time.Millisecond)
}
