package maintenance

import (
	"context"
	"log/slog"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/engine"
	"github.com/droverhq/drover/internal/outage"
)

// Promoter makes blocked keyed jobs available when their key has room but
// no finish promoted them: a job of the key was rescued out of attempts,
// cancelled while waiting, or a finished one was retried. Finishing a keyed
// job promotes in the same transaction, so this sweep only covers those
// paths, which are rare and need no better latency than the rescuer's.
type Promoter struct {
	Exec        droverdriver.Executor
	Interval    time.Duration
	Logger      *slog.Logger
	TestSignals TestSignals
}

// Run promotes every Interval until ctx ends.
func (p *Promoter) Run(ctx context.Context) {
	failures := &outage.Reporter{Logger: p.Logger, What: "promoting blocked keyed jobs"}
	every(ctx, p.Interval, func() {
		n, err := p.RunOnce(ctx)
		report(ctx, failures, err)
		if n > 0 {
			p.Logger.Info("promoted blocked keyed jobs", "jobs", n)
		}
		p.TestSignals.Passed.Send(n)
	})
}

// RunOnce runs one pass over at most batchLimit keys and reports how many
// jobs it promoted.
func (p *Promoter) RunOnce(ctx context.Context) (int, error) {
	return engine.Promote(ctx, p.Exec, batchLimit)
}
