package bench

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/droverhq/drover/internal/app/bench/report"
	"github.com/droverhq/drover/internal/app/bench/stats"
)

// queueName gives every run (and every point of a sweep) a queue of its
// own, so that jobs left by earlier runs never mix into a measurement.
func (r *runner) queueName(suffix string) string {
	if suffix == "" {
		return fmt.Sprintf("%s_%s", r.opts.queue, r.runID)
	}
	return fmt.Sprintf("%s_%s_%s", r.opts.queue, r.runID, suffix)
}

func (r *runner) workerConfig(queue string) workerConfig {
	return workerConfig{Queue: queue, Concurrency: r.opts.concurrency, ClaimMax: r.opts.claimMax, Lease: r.opts.lease,
		GlobalLimit: r.opts.globalLimit, DeleteCompleted: r.opts.deleteCompleted, Queues: r.opts.queues}
}

// fleetFor returns the workers --via names, else k worker processes, or
// (k == 0) one client in this process.
func (r *runner) fleetFor(queue string, k int) fleet {
	switch r.opts.via {
	case viaHTTP:
		return &httpFleet{store: r.store, cfg: r.workerConfig(queue)}
	case viaPython, viaTypeScript:
		return &sdkFleet{store: r.store, cfg: r.workerConfig(queue), sdk: r.sdk(), n: max(k, 1)}
	}
	if k == 0 {
		return &localFleet{store: r.store, cfg: r.workerConfig(queue), n: r.opts.clients, types: r.opts.workerTypes}
	}
	return r.procFleet(queue, k)
}

// procFleet returns k worker processes working queue, behind the remote
// hop when there is one.
func (r *runner) procFleet(queue string, k int) *procFleet {
	f := &procFleet{env: r.env, cfg: r.workerConfig(queue), n: k}
	if r.remote != nil {
		f.env.DatabaseURL = r.remote.url
		f.extra = r.remote.wrap()
	}
	return f
}

// sdk is what runs the workers of --via python or typescript.
func (r *runner) sdk() sdk {
	if r.opts.via == viaTypeScript {
		return sdk{via: viaTypeScript, name: "TypeScript", exe: r.opts.node, module: r.opts.nodeModule}
	}
	return sdk{via: viaPython, name: "Python", exe: r.opts.python}
}

// burndown inserts a backlog, then works it off and reports both rates.
func (r *runner) burndown(ctx context.Context) (*report.Report, error) {
	rep := r.newReport("burndown")
	queue := r.queueName("")
	k := r.opts.fleetSize()
	pt, err := r.burnPoint(ctx, queue, k, r.opts.jobs, "burndown")
	if err != nil {
		return nil, err
	}
	rep.Settings = r.settings(fmt.Sprintf("workers: %s", r.describeFleet(k)))
	fillFromPoint(rep, pt)
	if err := checkLost(pt); err != nil || r.opts.via == viaClient {
		return rep, err
	}
	return rep, r.goReference(ctx, rep, pt, k)
}

// goReference works a backlog of the same size with one Go client in the
// bench process, as `--via client` would, and puts it beside the run's
// workers over HTTP: the figure they are measured against, on the same
// store in the same run.
func (r *runner) goReference(ctx context.Context, rep *report.Report, via point, k int) error {
	ref := *r
	ref.opts.via, ref.opts.processes, ref.opts.clients = viaClient, nil, 1
	pt, err := ref.burnPoint(ctx, r.queueName("go"), 0, r.opts.jobs, "go")
	if err != nil {
		return err
	}
	if err := checkLost(pt); err != nil {
		return err
	}
	rate := cmp.Or(pt.SteadyJobsPerSec, pt.JobsPerSec)
	rep.GoInProcess = &report.Reference{Name: "Go client in the bench process, same backlog, same concurrency",
		JobsPerSec: rate, Command: "drover bench burndown --via client (run by this command)", Cost: pt.Cost}
	procs := max(k, 1)
	if r.opts.via == viaHTTP {
		procs = 1 // the HTTP loops run in the bench process
	}
	mine := cmp.Or(via.SteadyJobsPerSec, via.JobsPerSec)
	rep.Via = &report.Via{Workers: r.opts.via, Processes: procs, JobsPerSecPerProcess: round2(mine / float64(procs)),
		WorkerCPUUsPerJob: via.workerCPU, GoRatio: round2(mine / rate)}
	rep.Notes = append(rep.Notes, fmt.Sprintf("--via %s: %.0f jobs/s per worker process (%d), %.2f× the Go client in the bench process on the same store in this run (%.0f jobs/s)",
		r.opts.via, rep.Via.JobsPerSecPerProcess, procs, rep.Via.GoRatio, rate))
	return nil
}

func (r *runner) describeFleet(k int) string {
	switch r.opts.via {
	case viaHTTP:
		return fmt.Sprintf("%d HTTP claim loops through drover serve's API on loopback, in the bench process", httpStreams)
	case viaPython, viaTypeScript:
		s := r.sdk()
		return fmt.Sprintf("%d %s SDK worker process(es) (%s, concurrency %d each) through drover serve's API on loopback, served from the bench process",
			max(k, 1), s.name, s.exe, r.opts.concurrency)
	}
	if k == 0 && r.opts.workerTypes > 0 {
		return fmt.Sprintf("%d clients in the bench process, of %d worker types, jobs routed over the types", r.opts.clients, r.opts.workerTypes)
	}
	if k == 0 {
		return fmt.Sprintf("%d client(s) in the bench process", r.opts.clients)
	}
	return fmt.Sprintf("%d worker processes", k)
}

// point is one measured run.
type point struct {
	report.Point
	insertPerSec float64
	windows      []stats.Window
	steadyNote   string
	db           map[string]any
	waiting      int64
	// workerCPU is the SDK worker processes' own CPU per job (µs), from
	// the moment all of them had claimed to the end of the measurement:
	// the client CPU less the bench process's (which serves the API) and
	// the workers' start-up.
	workerCPU *float64
	// warmupStart is the start latency of the warm-up (--warmup), left
	// out of StartLatencyMs.
	warmupStart *stats.Percentiles
}

// burnPoint runs one burndown: n jobs into queue, worked by fleet k.
func (r *runner) burnPoint(ctx context.Context, queue string, k, n int, label string) (point, error) {
	var pt point
	dbBefore := r.dbStats(ctx)
	fmt.Fprintf(r.out, "%-10s inserting %d jobs into queue %s\n", label, n, queue)
	ids, insertRate, err := r.insertBacklog(ctx, queue, n)
	if err != nil {
		return pt, err
	}
	fmt.Fprintf(r.out, "%-10s inserted %d jobs at %.0f/s; starting %s\n", label, n, insertRate, r.describeFleet(k))
	pickup.Store(stats.NewLatency())
	f := r.fleetFor(queue, k)
	started := time.Now()
	cost := r.cost.start(ctx, nil)
	if err := f.start(ctx); err != nil {
		return pt, err
	}
	m, err := r.watch(ctx, f, label, workerStats{}, started, int64(n), 0, func(written int64) int64 { return int64(n) - written })
	jobCost := cost.end(ctx, f.pids(), m.jobs)
	var workerCPU time.Duration
	sdkf, isSDK := f.(*sdkFleet)
	if isSDK {
		workerCPU = sdkf.workCPU()
	}
	if serr := stopFleet(f); err == nil {
		err = serr
	}
	if err != nil {
		return pt, err
	}
	v, err := r.verify(ctx, queue, ids)
	if err != nil {
		return pt, err
	}
	pt = r.pointFrom(m, v, ids.n)
	pt.Cost = jobCost
	if isSDK && m.jobs > 0 {
		us := round2(float64(workerCPU) / float64(time.Microsecond) / float64(m.jobs))
		pt.workerCPU = &us
	}
	pt.insertPerSec = insertRate
	pt.db = dbDelta(dbBefore, r.dbStats(ctx), int64(n))
	if k > 0 {
		pt.Processes = k
	}
	return pt, nil
}

func (r *runner) pointFrom(m measurement, v verdict, inserted int64) point {
	_, steady := stats.SteadyState(m.windows)
	pt := point{
		Point: report.Point{
			Jobs: m.jobs, Seconds: m.seconds, JobsPerSec: float64(m.jobs) / m.seconds, SteadyJobsPerSec: steady,
			LatencyMs: v.latency, StartLatencyMs: v.start,
			Lost: inserted - v.completed - v.waiting, Duplicates: v.duplicates,
			Cost: m.cost,
		},
		windows:    m.windows,
		steadyNote: report.SteadyNote(m.windows),
		waiting:    v.waiting,
	}
	return pt
}

// fillFromPoint puts one measured point at the top level of a report.
func fillFromPoint(rep *report.Report, pt point) {
	rep.Jobs = pt.Jobs
	rep.Seconds = pt.Seconds
	rep.JobsPerSec = pt.JobsPerSec
	rep.SteadyJobsPerSec = pt.SteadyJobsPerSec
	rep.SteadyNote = pt.steadyNote
	rep.InsertPerSec = pt.insertPerSec
	rep.LatencyMs = pt.LatencyMs
	rep.StartLatencyMs = pt.StartLatencyMs
	rep.WarmupStartLatencyMs = pt.warmupStart
	rep.Lost = pt.Lost
	rep.Duplicates = pt.Duplicates
	rep.Cost = pt.Cost
	rep.Windows = pt.windows
	rep.DB = pt.db
}

func checkLost(pt point) error {
	if pt.Lost != 0 {
		return fmt.Errorf("%w: %d jobs inserted were neither completed nor waiting in the store", errLost, pt.Lost)
	}
	return nil
}

// steady runs producers and workers together for the duration and reports
// both rates, the backlog and latency. latency is the same shape at a fixed
// rate well below capacity, one job per insert.
func (r *runner) steady(ctx context.Context, scenario string) (*report.Report, error) {
	rep := r.newReport(scenario)
	queue := r.queueName("")
	k := r.opts.fleetSize()
	stopHealth := r.sampleHealth(ctx, rep)
	pt, err := r.steadyPoint(ctx, queue, k, 1, r.opts.producers, scenario)
	stopHealth()
	if err != nil {
		return nil, err
	}
	rate := "as fast as possible"
	if r.opts.rate > 0 {
		rate = fmt.Sprintf("%.0f jobs/s", r.opts.rate)
	}
	rep.Settings = r.settings(fmt.Sprintf("workers: %s", r.describeFleet(k)),
		fmt.Sprintf("%d producers, batch %d, rate %s", r.opts.producers, r.opts.batch, rate),
		fmt.Sprintf("duration %s", r.opts.duration))
	fillFromPoint(rep, pt)
	rep.Notes = append(rep.Notes, fmt.Sprintf("backlog at the end of the producing phase: %d jobs", pt.waiting))
	if scenario == "latency" && k == 0 {
		rep.Notes = append(rep.Notes, "start_latency_ms is measured by the handler (insert→handler start); latency_ms by the store (insert→completion written)")
	}
	return rep, checkLost(pt)
}

// steadyPoint produces into queue for the duration while workers (k
// processes, or `clients` clients in this process) work it, then drains.
func (r *runner) steadyPoint(ctx context.Context, queue string, k, clients, nProducers int, label string) (point, error) {
	var pt point
	if err := r.settle(ctx); err != nil {
		return pt, err
	}
	dbBefore := r.dbStats(ctx)
	pickup.Store(stats.NewLatency())
	var f fleet
	if r.opts.via != viaClient || k > 0 {
		f = r.fleetFor(queue, k)
	} else {
		f = &localFleet{store: r.store, cfg: r.workerConfig(queue), n: clients}
	}
	if err := f.start(ctx); err != nil {
		return pt, err
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = stopFleet(f)
		}
	}()

	stopProducers := make(chan struct{})
	p := &producers{r: r, queue: queue, n: nProducers, batch: r.opts.batch, rate: r.opts.rate}
	base := f.counters()
	cost := r.cost.start(ctx, f.pids())
	prodStart := time.Now()
	prodDone := make(chan struct{})
	go func() { p.run(ctx, stopProducers); close(prodDone) }()
	// The warm-up's start latencies go into a histogram of their own: the
	// handlers record into whichever pickup holds when they start.
	var warm *stats.Latency
	var warmOnce sync.Once
	endWarmup := func() { warmOnce.Do(func() { warm = pickup.Swap(stats.NewLatency()) }) }
	if r.opts.warmup > 0 {
		t := time.AfterFunc(r.opts.warmup, endWarmup)
		defer t.Stop()
	}
	m, err := r.watch(ctx, f, label, base, time.Now(), 0, r.opts.duration, func(written int64) int64 { return p.inserted.Load() - written })
	jobCost := cost.end(ctx, f.pids(), m.jobs)
	close(stopProducers)
	<-prodDone
	insertRate := float64(p.inserted.Load()) / time.Since(prodStart).Seconds()
	if err != nil {
		return pt, err
	}
	if perr := <-p.errs; perr != nil {
		return pt, fmt.Errorf("producer: %w", perr)
	}
	// Drain what is left so that the store check accounts for every job.
	backlog := p.ids.n - m.jobs
	if backlog > 0 {
		if _, err := r.watch(ctx, f, label+"/drain", base, time.Now(), p.ids.n, 0, func(written int64) int64 { return p.ids.n - written }); err != nil {
			return pt, err
		}
	}
	stopped = true
	if err := stopFleet(f); err != nil {
		return pt, err
	}
	v, err := r.verify(ctx, queue, &p.ids)
	if err != nil {
		return pt, err
	}
	pt = r.pointFrom(m, v, p.ids.n)
	pt.Cost = jobCost
	pt.waiting = backlog
	pt.insertPerSec = insertRate
	pt.db = dbDelta(dbBefore, r.dbStats(ctx), p.ids.n)
	if k == 0 && r.opts.via != viaPython && r.opts.via != viaTypeScript {
		// In-process handlers saw the real start; the store only knows
		// the claim. (An SDK worker's handlers report nothing.)
		if r.opts.warmup > 0 {
			endWarmup() // a point shorter than its warm-up: all of it is warm-up
			w := warm.Snapshot()
			pt.warmupStart = &w
		}
		pt.StartLatencyMs = pickup.Load().Snapshot()
	}
	return pt, nil
}

// scale runs a burndown per process count K and reports the curve.
func (r *runner) scale(ctx context.Context) (*report.Report, error) {
	rep := r.newReport("scale")
	var prev *point
	err := r.sweep(rep, r.opts.processes, func(k int, round string) (point, error) {
		n := r.opts.jobs
		if n == 0 {
			n = r.jobsFor(k, prev)
		}
		pt, err := r.burnPoint(ctx, r.queueName(fmt.Sprintf("k%d%s", k, round)), k, n, fmt.Sprintf("K=%d%s", k, round))
		pt.Processes = k
		prev = &pt
		return pt, err
	})
	if err != nil {
		return nil, err
	}
	rep.ApplyScaling()
	rep.Settings = r.settings("each point is a burndown by K `drover worker` processes started by the bench")
	rep.SteadyNote = stats.SteadyRule
	if rep.Seconds > 0 {
		rep.JobsPerSec = float64(rep.Jobs) / rep.Seconds
	}
	rep.Notes = append(rep.Notes, "jobs_per_sec and seconds at the top level sum all points; steady_jobs_per_sec, insert_per_sec and the latencies are the best point's")
	return rep, nil
}

// sweep measures every K of ks and adds the points to rep. With --rounds
// above 1 it runs all of ks that many times in turn (1, 2, 4, 8, then 1, 2,
// 4, 8 again), so that a slow spell of a shared machine hits every K alike
// rather than one, and adds for each K its median round
// (report.MedianRound). measure gets the round's suffix for queue names
// and labels ("" when there is one round). A round that loses jobs ends
// the sweep at once.
func (r *runner) sweep(rep *report.Report, ks []int, measure func(k int, round string) (point, error)) error {
	rounds := max(1, r.opts.rounds)
	measured := make([][]point, len(ks))
	for i := range rounds {
		suffix := ""
		if rounds > 1 {
			suffix = fmt.Sprintf("_r%d", i+1)
		}
		for j, k := range ks {
			pt, err := measure(k, suffix)
			if err != nil {
				return err
			}
			if err := checkLost(pt); err != nil {
				return err
			}
			measured[j] = append(measured[j], pt)
		}
	}
	for _, pts := range measured {
		if len(pts) == 1 {
			if err := addPoint(rep, pts[0]); err != nil {
				return err
			}
			continue
		}
		each := make([]report.Point, len(pts))
		for i, pt := range pts {
			each[i] = pt.Point
		}
		// The median round's own windows, note and insert rate go with it.
		median, at := report.MedianRound(each)
		chosen := pts[at]
		chosen.Point = median
		if err := addPoint(rep, chosen); err != nil {
			return err
		}
	}
	if rounds > 1 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("each point ran %d times, all points in turn each time; a point's figures are its median round's (the lower of the middle two for an even count), its lost and duplicates count every round", rounds))
	}
	return nil
}

// addPoint adds one point of a sweep to its report: totals at the top
// level, and the figures of the fastest point so far. It fails when the
// point lost jobs.
func addPoint(rep *report.Report, pt point) error {
	rep.Points = append(rep.Points, pt.Point)
	rep.Windows = append(rep.Windows, pt.windows...)
	rep.Lost += pt.Lost
	rep.Duplicates += pt.Duplicates
	rep.Jobs += pt.Jobs
	rep.Seconds += pt.Seconds
	if err := checkLost(pt); err != nil {
		return err
	}
	if pt.SteadyJobsPerSec < rep.SteadyJobsPerSec {
		return nil
	}
	rep.SteadyJobsPerSec = pt.SteadyJobsPerSec
	rep.Cost = pt.Cost
	rep.InsertPerSec = pt.insertPerSec
	rep.LatencyMs = pt.LatencyMs
	rep.StartLatencyMs = pt.StartLatencyMs
	return nil
}

// jobsFor sizes a point so that it runs about the requested duration:
// from the previous point's rate scaled to K, or from the job cost.
func (r *runner) jobsFor(k int, prev *point) int {
	secs := r.opts.duration.Seconds()
	var rate float64
	switch {
	case prev != nil:
		rate = prev.SteadyJobsPerSec * float64(k) / float64(prev.Processes)
	case r.opts.work > 0:
		rate = float64(r.opts.concurrency*k) / (r.opts.work + r.opts.cpu).Seconds()
	case r.opts.cpu > 0:
		rate = float64(k) / r.opts.cpu.Seconds()
	default:
		rate = 50_000
	}
	return int(min(max(rate*secs, 10_000), 2_000_000))
}

// streams sweeps the number of producer and consumer streams: S producers
// inserting one job at a time and S consumer clients in this process, or,
// with --processes, S consumer processes: clients in one process share a
// listening connection (droverpg/listener.go), processes each hear every
// notification.
func (r *runner) streams(ctx context.Context) (*report.Report, error) {
	rep := r.newReport("streams")
	consumers := "S consumer clients in one process"
	if r.opts.fleetSize() > 0 {
		consumers = "S consumer worker processes"
	}
	err := r.sweep(rep, r.opts.streams, func(s int, round string) (point, error) {
		k, clients := 0, s
		if r.opts.fleetSize() > 0 {
			k, clients = s, 0
		}
		pt, err := r.steadyPoint(ctx, r.queueName(fmt.Sprintf("s%d%s", s, round)), k, clients, s, fmt.Sprintf("S=%d%s", s, round))
		pt.Streams = s
		return pt, err
	})
	if err != nil {
		return nil, err
	}
	rep.ApplyScaling()
	rate := "as fast as possible"
	if r.opts.rate > 0 {
		rate = fmt.Sprintf("%.0f jobs/s in total", r.opts.rate)
	}
	rep.Settings = r.settings(fmt.Sprintf("S producers inserting one job per call (%s), %s, %s per point", rate, consumers, r.opts.duration))
	rep.SteadyNote = stats.SteadyRule
	if rep.Seconds > 0 {
		rep.JobsPerSec = float64(rep.Jobs) / rep.Seconds
	}
	rep.Notes = append(rep.Notes, "start_latency_ms per point is measured by the handler (insert→handler start)",
		"jobs_per_sec and seconds at the top level sum all points; steady_jobs_per_sec, insert_per_sec and the latencies are the best point's")
	return rep, nil
}
