package bench

import (
	"context"
	"sync"
	"time"

	"github.com/droverhq/drover/internal/app/bench/pgstore"
	"github.com/droverhq/drover/internal/app/bench/report"
)

// sampleHealth samples the hot table every --health-every into rep.Health
// until the returned stop function is called, which takes a last sample.
// Long steady runs use it to show that the table's size and dead tuples stay
// flat, that is, that vacuum keeps up with the churn.
func (r *runner) sampleHealth(ctx context.Context, rep *report.Report) (stop func()) {
	h, ok := pgstore.Of(r.store.Driver)
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
