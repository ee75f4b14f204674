package bench

import (
	"context"
	"sync"
	"time"

	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/internal/bench/report"
)

// healther is implemented by drivers that can sample the hot table's
// physical state (PostgreSQL).
type healther interface {
	Health(ctx context.Context) (droverpg.TableHealth, error)
}

// sampleHealth samples the hot table every --health-every into rep.Health
// until the returned stop function is called, which takes a last sample.
// Long steady runs use it to show that the table's size and dead tuples stay
// flat, that is, that vacuum keeps up with the churn.
func (r *runner) sampleHealth(ctx context.Context, rep *report.Report) (stop func()) {
	h, ok := r.store.Driver.(healther)
	if r.opts.healthEvery <= 0 || !ok {
		return func() {}
	}
	start := time.Now()
	sample := func() {
		s, err := h.Health(ctx)
		if err != nil {
			return // a sample lost to a fault says nothing about health
		}
		rep.Health = append(rep.Health, report.HealthSample{
			AtSec: time.Since(start).Seconds(), LiveTuples: s.LiveTuples, DeadTuples: s.DeadTuples,
			TableBytes: s.TableBytes, IndexBytes: s.IndexBytes, FinishedBytes: s.FinishedBytes,
			DeadPercent: s.DeadPercent, FreePercent: s.FreePercent, AutovacuumCount: s.AutovacuumCount,
		})
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(r.opts.healthEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				sample()
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
		sample()
	}
}
