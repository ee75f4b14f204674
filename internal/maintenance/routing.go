package maintenance

import (
	"context"
	"log/slog"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/engine"
	"github.com/droverhq/drover/internal/outage"
)

// Router applies the absent-worker policy of jobs aimed at worker names
// (droverdriver.AbsentPolicy: fall back to any worker of the job's type,
// or fail the job) once their workers stayed away long enough, and
// forgets the registry rows of workers not seen for
// engine.WorkerForgetAfter. Jobs whose policy is to wait are left to
// wait: the unroutable reports show them.
type Router struct {
	Exec     droverdriver.Executor
	Interval time.Duration
	Logger   *slog.Logger
	// Now reads the clock; nil means time.Now. Tests set it.
	Now         func() time.Time
	TestSignals TestSignals
}

// Run applies the policies every Interval until ctx ends.
func (r *Router) Run(ctx context.Context) {
	failures := &outage.Reporter{Logger: r.Logger, What: "applying absent-worker policies"}
	every(ctx, r.Interval, func() {
		failed, fell, err := r.RunOnce(ctx)
		report(ctx, failures, err)
		if failed > 0 || fell > 0 {
			r.Logger.Info("applied absent-worker policies", "failed", failed, "fell_back", fell)
		}
		r.TestSignals.Passed.Send(failed + fell)
	})
}

// RunOnce runs one pass and reports how many jobs it failed and how many
// fell back to their type.
func (r *Router) RunOnce(ctx context.Context) (failed, fellBack int, err error) {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	for {
		f, b, err := engine.RouteAbsent(ctx, r.Exec, droverdriver.RouteAbsentParams{Now: now(), Limit: batchLimit})
		failed, fellBack = failed+f, fellBack+b
		if err != nil {
			return failed, fellBack, err
		}
		if f+b < batchLimit {
			break
		}
	}
	_, err = r.Exec.WorkerPrune(ctx, now().Add(-engine.WorkerForgetAfter))
	return failed, fellBack, err
}
