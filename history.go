package drover

import (
	"context"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/maintenance"
	"github.com/droverhq/drover/internal/validate"
)

// The stored history of queue figures and subscription lag, behind the
// dashboard's charts: the leader records a sample of every queue, kind and
// subscription each minute (Config.HistoryRetention), so the history
// survives restarts and covers days, whichever process draws it.

// HistoryRetentionDefault is how long the hourly samples of the history
// are kept unless Config.HistoryRetention says otherwise; minute samples
// are kept for two days (HistoryMinutesKept).
const HistoryRetentionDefault = 30 * 24 * time.Hour

// HistoryMinutesKept is how long the history keeps its minute samples
// before they are merged into hourly ones.
const HistoryMinutesKept = maintenance.HistoryMinutesKept

// StatsEach selects, as StatsHistoryParams.Queue or Kind, each queue or
// kind on its own.
const StatsEach = droverdriver.StatsEach

// historyMaxPointsDefault is how many samples a series of the history
// gets at most unless asked otherwise: about one per two pixels of a
// chart.
const historyMaxPointsDefault = 400

// historyBuckets are the lengths a sample of the history can be read at:
// minutes as recorded, then longer merges.
var historyBuckets = []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour, 6 * time.Hour, 24 * time.Hour}

// StatsHistoryParams selects a stored history.
type StatsHistoryParams struct {
	// From and To bound the samples' times (From, To]; a zero To is now.
	From, To time.Time
	// Queue selects a queue's series, "" the figures of all queues
	// together, StatsEach each queue's on its own. Kind selects likewise
	// among the kinds of Queue (or of all queues).
	Queue, Kind string
	// MaxPoints bounds the samples of each series (default 400): samples
	// are merged into longer ones (5 minutes, 15, an hour, ...) until the
	// range fits.
	MaxPoints int
}

// StatsHistory is a stored history, as StatsHistory reads it.
type StatsHistory struct {
	// Bucket is how long each sample is: a minute, or a merge of
	// minutes (their gauges averaged, counts summed, percentiles the
	// largest), an hour at least for a range that reaches past
	// HistoryMinutesKept.
	Bucket  time.Duration
	Samples []drovertype.StatSample
}

// historyRange checks a range and picks the bucket it is read at.
func historyRange(from, to time.Time, maxPoints int, now time.Time) (time.Time, time.Duration, error) {
	if to.IsZero() {
		to = now
	}
	if maxPoints == 0 {
		maxPoints = historyMaxPointsDefault
	}
	switch {
	case !from.Before(to):
		return to, 0, invalidf("history range: from %s must be before to %s", from.Format(time.RFC3339), to.Format(time.RFC3339))
	case maxPoints < 10 || maxPoints > 10_000:
		return to, 0, invalidf("history max points %d: must be between 10 and 10000", maxPoints)
	}
	span := to.Sub(from)
	for _, b := range historyBuckets {
		if from.Before(now.Add(-HistoryMinutesKept)) && b < time.Hour {
			continue
		}
		if span/b <= time.Duration(maxPoints) {
			return to, b, nil
		}
	}
	return to, 0, invalidf("history range of %s: too long for %d samples of a day", span, maxPoints)
}

// StatsHistory reads the stored history of the series p selects, oldest
// first, then by queue and kind.
func (c *Client[TTx]) StatsHistory(ctx context.Context, p StatsHistoryParams) (*StatsHistory, error) {
	for _, f := range []struct {
		v     string
		check func(string) error
	}{{p.Queue, validate.Queue}, {p.Kind, validate.Kind}} {
		if f.v != "" && f.v != StatsEach {
			if err := f.check(f.v); err != nil {
				return nil, err
			}
		}
	}
	to, bucket, err := historyRange(p.From, p.To, p.MaxPoints, time.Now())
	if err != nil {
		return nil, err
	}
	samples, err := c.exec.StatsHistory(ctx, droverdriver.StatsHistoryParams{From: p.From, To: to, Bucket: bucket, Queue: p.Queue, Kind: p.Kind})
	if err != nil {
		return nil, err
	}
	return &StatsHistory{Bucket: bucket, Samples: samples}, nil
}

// TopicLagHistory is a stored history of subscription lag.
type TopicLagHistory struct {
	Bucket  time.Duration
	Samples []drovertype.TopicLagSample
}

// TopicLagHistory reads the stored lag of topic's subscriptions (every
// topic's for "") in (from, to] (a zero to is now), at most maxPoints
// samples a subscription (0: 400), merged as StatsHistory merges them
// (lag averaged, the oldest message's age the largest).
func (c *Client[TTx]) TopicLagHistory(ctx context.Context, topic string, from, to time.Time, maxPoints int) (*TopicLagHistory, error) {
	if topic != "" {
		if err := validate.Topic(topic); err != nil {
			return nil, err
		}
	}
	to, bucket, err := historyRange(from, to, maxPoints, time.Now())
	if err != nil {
		return nil, err
	}
	samples, err := c.exec.TopicLagHistory(ctx, droverdriver.TopicLagHistoryParams{From: from, To: to, Bucket: bucket, Topic: topic})
	if err != nil {
		return nil, err
	}
	return &TopicLagHistory{Bucket: bucket, Samples: samples}, nil
}
