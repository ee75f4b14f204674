// Package maintenance holds the singleton loops that only the elected
// leader runs: the rescuer returns jobs whose lease expired, the pruner
// deletes finished jobs past retention.
package maintenance

import (
	"context"
	"log/slog"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/engine"
	"github.com/droverhq/drover/internal/outage"
	"github.com/droverhq/drover/internal/testsignal"
)

// batchLimit bounds one rescue or prune statement; a pass repeats until a
// statement comes back short.
const batchLimit = 10_000

// TestSignals are what a maintenance loop tells a test
// (internal/testsignal); every loop has its own.
type TestSignals struct {
	// Passed is sent after each pass, failed or not, with how many rows
	// it changed: jobs rescued, pruned or promoted, jobs failed or fallen
	// back by the router, generations dropped by the topic retainer, and
	// 0 from the history recorder and the publisher watch.
	Passed testsignal.Signal[int]
}

// Init turns the signals on, for tests only.
func (s *TestSignals) Init() { s.Passed.Init() }

// Rescuer returns running jobs whose lease expired (their worker died or
// lost the store) to available, or discards them when out of attempts.
type Rescuer struct {
	Exec     droverdriver.Executor
	Interval time.Duration
	Logger   *slog.Logger
	// OnRescued is called with the number of jobs each pass moved.
	OnRescued   func(n int)
	TestSignals TestSignals
}

// Run rescues every Interval until ctx ends.
func (r *Rescuer) Run(ctx context.Context) {
	failures := &outage.Reporter{Logger: r.Logger, What: "rescuing expired leases"}
	every(ctx, r.Interval, func() {
		n, err := r.RunOnce(ctx)
		report(ctx, failures, err)
		if n > 0 {
			r.Logger.Info("rescued jobs whose lease expired", "jobs", n)
		}
		if r.OnRescued != nil {
			r.OnRescued(n)
		}
		r.TestSignals.Passed.Send(n)
	})
}

// RunOnce runs one pass and reports how many jobs it moved.
func (r *Rescuer) RunOnce(ctx context.Context) (int, error) {
	total := 0
	for {
		n, err := engine.Rescue(ctx, r.Exec, droverdriver.RescueParams{Now: time.Now(), Limit: batchLimit})
		total += n
		if err != nil || n < batchLimit {
			return total, err
		}
	}
}

// Pruner deletes finished jobs past their retention.
type Pruner struct {
	Exec     droverdriver.Executor
	Interval time.Duration
	// Retention per final state; negative keeps forever.
	Completed, Cancelled, Discarded time.Duration
	Logger                          *slog.Logger
	TestSignals                     TestSignals
}

// Run prunes every Interval until ctx ends.
func (p *Pruner) Run(ctx context.Context) {
	failures := &outage.Reporter{Logger: p.Logger, What: "pruning finished jobs"}
	every(ctx, p.Interval, func() {
		n, err := p.RunOnce(ctx)
		report(ctx, failures, err)
		p.TestSignals.Passed.Send(n)
	})
}

// RunOnce runs one pass and reports how many jobs it deleted.
func (p *Pruner) RunOnce(ctx context.Context) (int, error) {
	total := 0
	for {
		n, err := p.Exec.JobPrune(ctx, droverdriver.PruneParams{
			Now: time.Now(), CompletedRetention: p.Completed, CancelledRetention: p.Cancelled,
			DiscardedRetention: p.Discarded, Limit: batchLimit,
		})
		total += n
		if err != nil || n < batchLimit {
			return total, err
		}
	}
}

// report tells failures of one pass's outcome; a pass that failed because
// ctx ended is no failure of the store.
func report(ctx context.Context, failures *outage.Reporter, err error) {
	switch {
	case err == nil:
		failures.OK()
	case ctx.Err() == nil:
		failures.Failed(err)
	}
}

// every runs fn at once and then every interval until ctx ends.
func every(ctx context.Context, interval time.Duration, fn func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		fn()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
