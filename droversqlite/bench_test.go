package droversqlite

import (
	"context"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/engine"
)

// BenchmarkBurndown measures the hot path the way a busy client drives it:
// 50,000 noop jobs inserted up front, then claimed 500 at a time and
// completed 500 at a time until the queue is empty. It reports the
// burn-down rate (claim plus finish) and, separately, the insert rate.
func BenchmarkBurndown(b *testing.B) {
	const (
		total = 50000
		batch = 500
	)
	ctx := context.Background()
	d := setup(b)
	in := make([]droverdriver.InsertParams, total)
	for i := range in {
		in[i] = droverdriver.InsertParams{Queue: "bench", Kind: "noop", Args: []byte(`{"n":1}`), MaxAttempts: 25}
	}
	res := make([]droverdriver.Result, 0, batch)
	var burn, ins time.Duration
	var jobs int
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		if _, err := d.exec.JobInsertMany(ctx, in); err != nil {
			b.Fatal(err)
		}
		ins += time.Since(start)

		start = time.Now()
		for {
			claimed, err := d.exec.JobClaim(ctx, droverdriver.ClaimParams{Queue: "bench", Max: batch, Owner: "bench", Lease: time.Minute})
			if err != nil {
				b.Fatal(err)
			}
			if len(claimed) == 0 {
				break
			}
			res = res[:0]
			for _, j := range claimed {
				res = append(res, droverdriver.Result{ID: j.ID, Attempt: j.Attempt, LeaseToken: j.LeaseToken, Outcome: droverdriver.OutcomeCompleted})
			}
			acc, err := engine.Finish(ctx, d.Executor(), res)
			if err != nil {
				b.Fatal(err)
			}
			if len(acc) != len(res) {
				b.Fatalf("finished %d of %d", len(acc), len(res))
			}
			jobs += len(claimed)
		}
		burn += time.Since(start)
	}
	b.ReportMetric(float64(jobs)/burn.Seconds(), "jobs/s")
	b.ReportMetric(float64(b.N*total)/ins.Seconds(), "inserts/s")
}
