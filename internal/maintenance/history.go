package maintenance

import (
	"context"
	"log/slog"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/outage"
)

// Bounds of the stored history (droverdriver.HistoryExecutor).
const (
	// HistoryMinutesKept is how long minute samples stay before the
	// recorder rolls them into hourly ones: the charts of the last two
	// days keep their minutes.
	HistoryMinutesKept = 48 * time.Hour
	// historySettle is how long after a minute ends its sample is
	// recorded, so that the finishes stamped within it have committed.
	historySettle = time.Second
)

// HistoryRecorder records, once a minute, the sample of every queue, kind
// and subscription that the dashboard's charts draw, and keeps the stored
// history bounded: minute samples older than HistoryMinutesKept become
// hourly ones, and hourly ones older than Retention go. Only the leader
// runs it, so a minute is recorded once whichever processes watch (and a
// second leader after a failover records nothing twice: a stored sample
// is kept); minutes without a leader are missing from the charts.
type HistoryRecorder struct {
	Exec droverdriver.Executor
	// Topics, when the store has topics, is read for subscription lag.
	Topics droverdriver.TopicExecutor
	// Retention is how long hourly samples are kept.
	Retention   time.Duration
	Logger      *slog.Logger
	TestSignals TestSignals
}

// Run records at once the minute that ended last, then each minute just
// after it ends, until ctx ends.
func (r *HistoryRecorder) Run(ctx context.Context) {
	failures := &outage.Reporter{Logger: r.Logger, What: "recording the history of queue figures"}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		report(ctx, failures, r.RunOnce(ctx, time.Now()))
		r.TestSignals.Passed.Send(0)
		next := time.Now().Truncate(time.Minute).Add(time.Minute + historySettle)
		t.Reset(time.Until(next))
	}
}

// RunOnce records the minute that ended last before now (less the time
// its finishes take to commit), then rolls up and drops what the bounds
// say.
func (r *HistoryRecorder) RunOnce(ctx context.Context, now time.Time) error {
	at := now.Add(-historySettle).Truncate(time.Minute)
	if _, err := r.Exec.StatsRecord(ctx, droverdriver.StatsRecordParams{At: at, Since: at.Add(-time.Minute), Until: at, Now: now}); err != nil {
		return err
	}
	if r.Topics != nil {
		lags, err := r.Topics.TopicLag(ctx, nil)
		if err != nil {
			return err
		}
		if len(lags) > 0 {
			if err := r.Exec.TopicLagRecord(ctx, at, lags); err != nil {
				return err
			}
		}
	}
	// The cutoff is an hour's end, so that each hour is rolled up whole,
	// once.
	_, err := r.Exec.StatsRollup(ctx, droverdriver.StatsRollupParams{
		Minutes: at.Add(-HistoryMinutesKept).Truncate(time.Hour), Hours: at.Add(-r.Retention)})
	return err
}
