package maintenance

import (
	"context"
	"log/slog"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/outage"
)

// PublisherWatch logs, once each, the transactions that published topic
// messages and stayed open longer than StallAfter (TopicPublishers). Such a
// transaction holds back nothing of other publishers (positions follow
// commit order, docs/design/topics.md), but its own messages wait for its
// commit and the retention of the generation it wrote to waits for its
// end: an outbox transaction forgotten in a console, or a prepared
// transaction no coordinator resolved, would otherwise go unnoticed until
// the disk fills. The log names the session to end.
type PublisherWatch struct {
	Exec        droverdriver.TopicExecutor
	Interval    time.Duration
	StallAfter  time.Duration
	Logger      *slog.Logger
	TestSignals TestSignals
	// watched are the open publishers of the last pass, by xid.
	watched map[int64]watched
}

// watched is what the watch remembers of an open publisher.
type watched struct {
	// since is when it began, or when a pass first saw it if the store
	// does not say (another role's session without pg_read_all_stats).
	since  time.Time
	logged bool
}

// Run watches every Interval until ctx ends.
func (w *PublisherWatch) Run(ctx context.Context) {
	failures := &outage.Reporter{Logger: w.Logger, What: "listing open topic publishers"}
	every(ctx, w.Interval, func() {
		stalled, err := w.RunOnce(ctx, time.Now())
		report(ctx, failures, err)
		for _, p := range stalled {
			w.Logger.Warn("a transaction that published topic messages is still open: its messages wait for its commit, and the retention of their generation for its end",
				"pid", p.PID, "application_name", p.ApplicationName, "state", p.State, "xact_start", p.Started,
				"xid", p.Xid, "gid", p.GID)
		}
		w.TestSignals.Passed.Send(0)
	})
}

// RunOnce returns the open publishers that have been open for StallAfter
// at now and were not returned before.
func (w *PublisherWatch) RunOnce(ctx context.Context, now time.Time) ([]drovertype.OpenPublisher, error) {
	open, err := w.Exec.TopicPublishers(ctx)
	if err != nil {
		return nil, err
	}
	next := make(map[int64]watched, len(open))
	var stalled []drovertype.OpenPublisher
	for _, p := range open {
		v, ok := w.watched[p.Xid]
		switch {
		case !p.Started.IsZero():
			v.since = p.Started
		case !ok:
			v.since = now
		}
		if !v.logged && now.Sub(v.since) >= w.StallAfter {
			v.logged = true
			stalled = append(stalled, p)
		}
		next[p.Xid] = v
	}
	w.watched = next
	return stalled, nil
}
