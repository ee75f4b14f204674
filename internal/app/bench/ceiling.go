package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/app/bench/report"
	"github.com/droverhq/drover/internal/engine"
	"golang.org/x/sync/errgroup"
)

// Sizes of the store-ceiling measurement: the floor's loop (pgstore.Store.Floor),
// with Drover's statements in place of the bare ones. A run with fewer
// --jobs measures the ceiling on as many.
const ceilingJobs, ceilingBatch, ceilingClients = 200_000, 500, 4

// ceilingCommand describes what ceiling measures, for reports.
const ceilingCommand = "store ceiling: %d clients each loop { JobClaim %d; JobFinish them as completed } over %d jobs inserted like the run's (Drover's own statements through its driver, no handlers)"

// ceiling measures the store ceiling: how fast Drover's own claim and
// finish statements work off a backlog when no job runs, through the
// driver the workers use. It splits the distance to the raw SQL floor in
// two: what the schema and its guarantees cost the store (the ceiling
// against the floor), and what running jobs costs on top of that, on CPUs
// the workers share with the store (Drover against the ceiling). The
// results complete the jobs as the run's workers would (forgotten with
// --delete-completed), and the store check must find every job finished.
func (r *runner) ceiling(ctx context.Context) (*report.Reference, error) {
	n := ceilingJobs
	if r.opts.jobs > 0 {
		n = min(n, r.opts.jobs)
	}
	queue := r.queueName("ceiling")
	fmt.Fprintf(r.out, "ceiling    measuring the store ceiling (%d jobs, batch %d, %d clients)\n", n, ceilingBatch, ceilingClients)
	ids, _, err := r.insertBacklog(ctx, queue, n)
	if err != nil {
		return nil, err
	}
	exec := r.store.Driver.Executor()
	g, gctx := errgroup.WithContext(ctx)
	cost := r.cost.start(ctx, nil)
	start := time.Now()
	for range ceilingClients {
		g.Go(func() error {
			for {
				rows, err := exec.JobClaim(gctx, droverdriver.ClaimParams{Queue: queue, Max: ceilingBatch,
					Owner: "bench-ceiling", Lease: r.opts.lease})
				if err != nil || len(rows) == 0 {
					return err
				}
				results := make([]droverdriver.Result, len(rows))
				for i, row := range rows {
					results[i] = droverdriver.Result{ID: row.ID, Attempt: row.Attempt, LeaseToken: row.LeaseToken, Outcome: droverdriver.OutcomeCompleted,
						Flow: row.Flow, Key: row.Key, Queue: row.Queue, Forget: r.opts.deleteCompleted}
				}
				accepted, err := engine.Finish(gctx, exec, results)
				if err != nil {
					return err
				}
				if len(accepted) != len(results) {
					return fmt.Errorf("%d of %d results accepted", len(accepted), len(results))
				}
			}
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("store ceiling: %w", err)
	}
	rate := float64(ids.n) / time.Since(start).Seconds()
	jobCost := cost.end(ctx, nil, ids.n)
	v, err := r.verify(ctx, queue, ids)
	if err != nil {
		return nil, err
	}
	if v.completed != ids.n {
		return nil, fmt.Errorf("store ceiling: %d of %d jobs completed", v.completed, ids.n)
	}
	return &report.Reference{Name: fmt.Sprintf("store ceiling (Drover's claim and finish, %d clients, no handlers)", ceilingClients),
		JobsPerSec: rate, Command: fmt.Sprintf(ceilingCommand, ceilingClients, ceilingBatch, n), Cost: jobCost}, nil
}
