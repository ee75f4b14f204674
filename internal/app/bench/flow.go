package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/bench/report"
	"github.com/droverhq/drover/internal/app/bench/stats"
)

// The scenarios of workflows and batches: runs (a batch of simulation runs
// with a result each) and dag (many small workflows).

// SimArgs are the arguments of one simulation run of the runs scenario.
type SimArgs struct {
	Seed  int64 `json:"seed"`
	Steps int   `json:"steps"`
}

// Kind implements drover.Args.
func (SimArgs) Kind() string { return "drover.bench.run" }

// SimResult is what a simulation run stores.
type SimResult struct {
	Seed  int64  `json:"seed"`
	Value uint32 `json:"value"`
}

// simulate is the run's deterministic CPU body: a random walk of steps
// xorshift draws seeded by seed. The bench recomputes it to check every
// stored result.
func simulate(seed int64, steps int) uint32 {
	x := uint64(seed)*0x9E3779B97F4A7C15 | 1
	var pos uint32
	for range steps {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		pos += uint32(x>>40) & 0xff
	}
	return pos
}

func runSim(ctx context.Context, j *drover.Job[SimArgs]) error {
	return j.SetResult(SimResult{Seed: j.Args.Seed, Value: simulate(j.Args.Seed, j.Args.Steps)})
}

// StepArgs are the arguments of one noop step of the dag scenario.
type StepArgs struct {
	Instance int `json:"i"`
	Step     int `json:"s"`
}

// Kind implements drover.Args.
func (StepArgs) Kind() string { return "drover.bench.step" }

func runStep(ctx context.Context, j *drover.Job[StepArgs]) error { return nil }

// simSteps is the length of each run's random walk: a few microseconds of
// CPU, so that the store, not the body, is what is measured.
const simSteps = 200

// runs inserts a batch of --jobs simulation runs per point and works it
// with K worker processes (K from --processes), then checks from the store
// that every run's result is there, by count and checksum.
func (r *runner) runs(ctx context.Context) (*report.Report, error) {
	rep := r.newReport("runs")
	var checks []string
	for _, k := range r.opts.processes {
		label := fmt.Sprintf("K=%d", k)
		queue := r.queueName(fmt.Sprintf("runs_k%d", k))
		n := r.opts.jobs
		jobs := make([]drover.InsertManyParams, n)
		opts := &drover.InsertOpts{Queue: queue}
		var want uint64
		for i := range jobs {
			jobs[i] = drover.InsertManyParams{Args: SimArgs{Seed: int64(i), Steps: simSteps}, Opts: opts}
			want += uint64(simulate(int64(i), simSteps))
		}
		fmt.Fprintf(r.out, "%-10s inserting a batch of %d runs into queue %s\n", label, n, queue)
		start := time.Now()
		batch, err := r.inserts.InsertBatch(ctx, jobs, nil)
		if err != nil {
			return nil, fmt.Errorf("insert batch: %w", err)
		}
		insertRate := float64(n) / time.Since(start).Seconds()
		jobs = nil
		if err := r.settle(ctx); err != nil {
			return nil, err
		}
		m, err := r.workOff(ctx, queue, k, label, int64(n))
		if err != nil {
			return nil, err
		}

		prog, err := r.inserts.BatchGet(ctx, batch.ID)
		if err != nil {
			return nil, err
		}
		var count, sum uint64
		err = r.inserts.BatchResults(ctx, batch.ID, func(res drovertype.JobResult) error {
			var sr SimResult
			if err := json.Unmarshal(res.Result, &sr); err != nil {
				return fmt.Errorf("result of job %d (%s): %w", res.ID, res.Result, err)
			}
			count++
			sum += uint64(sr.Value)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read results: %w", err)
		}
		if prog.Completed != int64(n) || !prog.Finished() || count != uint64(n) || sum != want {
			return nil, fmt.Errorf("%w: batch %d: %d of %d runs completed, %d results stored with checksum %d (want %d)",
				errLost, batch.ID, prog.Completed, n, count, sum, want)
		}
		checks = append(checks, fmt.Sprintf("K=%d: batch %d, %d results stored, checksum %d (expected %d)", k, batch.ID, count, sum, want))

		_, steady := stats.SteadyState(m.windows)
		pt := point{Point: report.Point{Processes: k, Jobs: m.jobs, Seconds: m.seconds,
			JobsPerSec: float64(m.jobs) / m.seconds, SteadyJobsPerSec: steady, Cost: m.cost}, windows: m.windows, insertPerSec: insertRate}
		if err := addPoint(rep, pt); err != nil {
			return nil, err
		}
	}
	rep.ApplyScaling()
	rep.Settings = r.settings(fmt.Sprintf("a batch of %d simulation runs (%d xorshift steps each, result stored) per point, worked by K `drover worker` processes", r.opts.jobs, simSteps))
	rep.SteadyNote = stats.SteadyRule
	if rep.Seconds > 0 {
		rep.JobsPerSec = float64(rep.Jobs) / rep.Seconds
	}
	rep.Notes = append(rep.Notes, checks...)
	rep.Notes = append(rep.Notes, "jobs are runs; jobs_per_sec and seconds at the top level sum all points")
	return rep, nil
}

// dag inserts N workflow instances per point, each a chain of --steps noop
// steps, and works them off; it reports actions (steps) per second per N.
func (r *runner) dag(ctx context.Context) (*report.Report, error) {
	rep := r.newReport("dag")
	k := r.opts.fleetSize()
	steps := r.opts.steps
	var rates []float64
	for _, n := range r.opts.instances {
		label := fmt.Sprintf("N=%d", n)
		queue := r.queueName(fmt.Sprintf("dag_n%d", n))
		fmt.Fprintf(r.out, "%-10s inserting %d workflows of %d steps into queue %s\n", label, n, steps, queue)
		start := time.Now()
		ids := &idRange{}
		// One call per chunk of instances: each is one workflow holding
		// many independent chains, stored in one transaction.
		const perCall = 5000
		for done := 0; done < n; done += perCall {
			w := drover.NewWorkflow()
			for i := done; i < min(done+perCall, n); i++ {
				var prev []drover.Step
				for s := range steps {
					prev = []drover.Step{w.Add(StepArgs{Instance: i, Step: s}, &drover.InsertOpts{Queue: queue}, prev...)}
				}
			}
			got, err := r.inserts.InsertWorkflow(ctx, w)
			if err != nil {
				return nil, fmt.Errorf("insert workflows: %w", err)
			}
			ids.add(got)
		}
		insertRate := float64(ids.n) / time.Since(start).Seconds()
		if err := r.settle(ctx); err != nil {
			return nil, err
		}
		m, err := r.workOff(ctx, queue, k, label, ids.n)
		if err != nil {
			return nil, err
		}
		v, err := r.verify(ctx, queue, ids)
		if err != nil {
			return nil, err
		}
		pt := r.pointFrom(m, v, ids.n)
		pt.Instances = n
		pt.insertPerSec = insertRate
		if err := addPoint(rep, pt); err != nil {
			return nil, err
		}
		rates = append(rates, pt.JobsPerSec)
	}
	rep.Settings = r.settings(fmt.Sprintf("N workflow instances, each a chain of %d noop steps, inserted before the workers start; workers: %s", steps, r.describeFleet(k)))
	rep.SteadyNote = stats.SteadyRule
	if rep.Seconds > 0 {
		rep.JobsPerSec = float64(rep.Jobs) / rep.Seconds
	}
	rep.Notes = append(rep.Notes, "jobs are actions (steps); jobs_per_sec per point is actions/s over the whole burn-down")
	if len(rates) > 1 {
		first, last := rates[0], rates[len(rates)-1]
		rep.Notes = append(rep.Notes, fmt.Sprintf("largest N ran at %.0f actions/s, %.1f%% of the smallest N's %.0f", last, 100*last/first, first))
	}
	return rep, nil
}

// workOff starts fleet k on queue and watches it until n results are
// written, then stops it.
func (r *runner) workOff(ctx context.Context, queue string, k int, label string, n int64) (measurement, error) {
	f := r.fleetFor(queue, k)
	started := time.Now()
	cost := r.cost.start(ctx, nil)
	if err := f.start(ctx); err != nil {
		return measurement{}, err
	}
	m, err := r.watch(ctx, f, label, workerStats{}, started, n, 0, func(written int64) int64 { return n - written })
	m.cost = cost.end(ctx, f.pids(), m.jobs)
	if serr := stopFleet(f); err == nil {
		err = serr
	}
	return m, err
}
