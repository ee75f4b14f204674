package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/bench/pgstore"
	"github.com/droverhq/drover/internal/app/bench/report"
	"github.com/droverhq/drover/internal/app/bench/stats"
	"github.com/droverhq/drover/internal/app/storeurl"
	"github.com/droverhq/drover/internal/testkit/pgha"
)

// options are the flags of every scenario; each scenario reads the ones
// that make sense for it.
type options struct {
	queue        string
	jobs         int
	duration     time.Duration
	rate         float64
	producers    int
	batch        int
	concurrency  int
	claimMax     int
	processes    []int
	streams      []int
	work         time.Duration
	cpu          time.Duration
	payloadBytes int
	priorityMix  []int
	window       time.Duration
	lease        time.Duration
	progress     time.Duration
	// floor also measures the raw SQL floor where the store supports it.
	floor bool
	// rounds is how many times a sweep (scale, streams) runs all its
	// points in turn; each point reports its median round.
	rounds int
	// instances are the workflow counts of the dag scenario, steps the
	// length of each workflow (flow.go).
	instances []int
	steps     int
	// via is how workers reach the store: viaClient (a drover.Client),
	// viaHTTP (drover serve's API), viaPython or viaTypeScript (SDK worker
	// processes through that API), which python, or node importing
	// nodeModule (resolved from nodeProject), runs.
	via, python                   string
	node, nodeProject, nodeModule string
	// fault is the chaos scenario's fault; pgData the local data
	// directory that pg-restart restarts.
	fault, pgData string
	// ha is the pg_auto_failover set the failover fault kills a primary
	// of, started for the run (startHASet).
	ha *pgha.Set
	// healthEvery, when set, samples the hot table's health that often
	// during a steady run.
	healthEvery time.Duration
	// remote puts worker processes behind a proxy that adds latency to
	// their round trips; netns also runs them in a network namespace.
	remote, netns bool
	latency       time.Duration
	// keys and keyLimit shape the keyed scenario: jobs spread over keys
	// ordering keys, at most keyLimit of a key active (0 keys: plain jobs).
	keys, keyLimit int
	// globalLimit caps the queue's running jobs across the fleet
	// (QueueConfig.GlobalMaxWorkers; 0: none).
	globalLimit int
	// deleteCompleted makes workers delete jobs as they complete.
	deleteCompleted bool
	// clients is how many clients work in the bench process when no
	// worker process does; workerTypes, when set, routes the jobs over
	// that many worker types in turn and makes client i a worker of type
	// i % workerTypes (routing, assign.go's assignType).
	clients, workerTypes int
	// queues spreads the jobs round robin over that many queues, which
	// the workers all serve (sweep.go; 0 or 1: the one queue), and
	// uniqueKeys gives every job a unique key of its own (UniqueKey).
	queues     int
	uniqueKeys bool

	// warmup is how long after the start of a steady or latency point
	// start latencies count apart, as warm-up (WarmupStartLatencyMs).
	warmup time.Duration
}

// fleetSize is the number of worker processes a single-point scenario
// runs: the first of --processes, or 0 (one client in the bench process).
func (o *options) fleetSize() int {
	if len(o.processes) > 0 {
		return o.processes[0]
	}
	return 0
}

// inserter is what the bench calls of its insert-only client, whatever
// the store's transaction type (storeurl.NewClient).
type inserter interface {
	Insert(ctx context.Context, args drover.Args, opts *drover.InsertOpts) (*drovertype.JobRow, error)
	InsertMany(ctx context.Context, jobs []drover.InsertManyParams) ([]int64, error)
	InsertWorkflow(ctx context.Context, w *drover.Workflow) ([]int64, error)
	InsertBatch(ctx context.Context, jobs []drover.InsertManyParams, opts *drover.BatchOpts) (*drover.InsertedBatch, error)
	BatchGet(ctx context.Context, id int64) (*drovertype.Batch, error)
	BatchResults(ctx context.Context, batchID int64, fn func(drovertype.JobResult) error) error
	JobList(ctx context.Context, p drover.JobListParams) ([]*drovertype.JobRow, error)
	JobCountByState(ctx context.Context, queue string) (map[drovertype.JobState]int64, error)
	JobBulk(ctx context.Context, action drover.BulkAction, filter drover.JobListParams, progress func(drover.BulkProgress)) (drover.BulkProgress, error)
}

// workerClient is what the bench calls of a client that works jobs.
type workerClient interface {
	ID() string
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	Stats() drover.Stats
	JobMetrics() []drover.JobMetrics
}

// runner holds what one bench invocation shares across its points.
type runner struct {
	env     Env
	opts    options
	store   *storeurl.Store
	inserts inserter // an insert-only client
	out     io.Writer
	payload string
	// runID keeps queue names of separate runs apart.
	runID string
	// remote, when set, is the network hop worker processes sit behind.
	remote *remote
	// cost reads CPU and WAL counters around measured intervals (cost.go).
	cost *costMeter
}

// jobArgs builds the args of the seq-th job.
func (r *runner) jobArgs(seq int64, stamp bool) Args {
	a := Args{Seq: seq, WorkNS: int64(r.opts.work), CPUNS: int64(r.opts.cpu), Payload: r.payload}
	if stamp {
		a.At = time.Now().UnixNano()
	}
	return a
}

func (r *runner) jobOpts(queue string, seq int64) *drover.InsertOpts {
	o := &drover.InsertOpts{Queue: spreadQueue(queue, seq, r.opts.queues)}
	if r.opts.uniqueKeys {
		o.UniqueKey = fmt.Sprintf("%s-%d", queue, seq)
	}
	if r.opts.workerTypes > 0 {
		o.WorkerType = assignType(int(seq), r.opts.workerTypes)
	}
	if r.opts.keys > 0 {
		o.Key, o.KeyLimit = r.keyOf(seq), r.opts.keyLimit
	}
	if len(r.opts.priorityMix) > 0 {
		o.Priority = r.opts.priorityMix[int(seq)%len(r.opts.priorityMix)]
	}
	return o
}

// insertBacklog inserts n jobs in InsertMany chunks, settles the store
// (settle) so that working them off is not billed for the insert, and
// returns their ID range and the insert rate.
func (r *runner) insertBacklog(ctx context.Context, queue string, n int) (*idRange, float64, error) {
	chunk := 10_000
	if shards := len(r.store.Target.Shards); shards > 1 {
		// A fleet places each call's jobs on the next shard in turn: no
		// chunk larger than a shard's share, so every shard gets one.
		chunk = min(chunk, (n+shards-1)/shards)
	}
	ids := &idRange{}
	start := time.Now()
	for done := 0; done < n; done += chunk {
		batch := make([]drover.InsertManyParams, min(chunk, n-done))
		for i := range batch {
			seq := int64(done + i)
			batch[i] = drover.InsertManyParams{Args: r.jobArgs(seq, false), Opts: r.jobOpts(queue, seq)}
		}
		got, err := r.inserts.InsertMany(ctx, batch)
		if err != nil {
			return nil, 0, fmt.Errorf("insert backlog: %w", err)
		}
		ids.add(got)
	}
	rate := float64(n) / time.Since(start).Seconds()
	if err := r.settle(ctx); err != nil {
		return nil, 0, err
	}
	return ids, rate, nil
}

// idRange tracks the IDs a run inserted: their range, and with set non-nil
// each one, for runs where an insert can fail after the store committed it
// (chaos), so that only jobs known to be inserted are checked.
type idRange struct {
	mu       sync.Mutex
	min, max int64
	n        int64
	set      map[int64]struct{}
}

func (r *idRange) add(ids []int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		if r.set != nil {
			r.set[id] = struct{}{}
		}
		if r.n == 0 || id < r.min {
			r.min = id
		}
		if id > r.max {
			r.max = id
		}
		r.n++
	}
}

// measurement is what watching a fleet produced.
type measurement struct {
	windows []stats.Window
	seconds float64
	jobs    int64
	final   workerStats
	// cost is what a job cost over the watch (filled by workOff).
	cost report.Cost
}

// watch samples the fleet until it has written target results since base
// (target > 0) or for duration (duration > 0), printing a progress line as
// it goes; its clock starts at start. backlog reports jobs waiting, from
// the scenario's own accounting. Counting from an explicit base lets a
// second watch (a drain) continue exactly where the first stopped.
//
// A fleet started on a backlog works from the moment its first worker is
// up, before the others are: such a watch counts from a zero base and from
// the fleet's start (burnPoint, workOff), or the results of the first workers
// would be subtracted from the target and the watch would wait for jobs
// that no longer exist.
func (r *runner) watch(ctx context.Context, f fleet, label string, base workerStats, start time.Time, target int64, duration time.Duration, backlog func(written int64) int64) (measurement, error) {
	var m measurement
	sampler := stats.NewSampler(start, r.opts.window)
	// Fine ticks while the point is young time short points (a thousand
	// workflows run in about a tenth of a second) to 10 ms; coarse ones
	// after that keep the watching cheap.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	coarse := false
	lastProgress, lastJobs, lastMove := start, int64(0), start
	relative := func(c workerStats) workerStats {
		c.Stats.Written -= base.Written
		c.Stats.Claims -= base.Claims
		c.Stats.ClaimTime -= base.ClaimTime
		c.Stats.Flushes -= base.Flushes
		c.Stats.FlushTime -= base.FlushTime
		c.Stats.Ran -= base.Ran
		c.Stats.RunTime -= base.RunTime
		return c
	}
	for {
		select {
		case <-ctx.Done():
			return m, ctx.Err()
		case <-tick.C:
		}
		now := time.Now()
		if !coarse && now.Sub(start) >= 2*time.Second {
			tick.Reset(100 * time.Millisecond)
			coarse = true
		}
		c := relative(f.counters())
		bl := backlog(c.Written)
		sampler.Sample(now, c.toCounters(bl))
		if c.Written > lastJobs {
			lastMove = now
		}
		if now.Sub(lastProgress) >= r.opts.progress {
			rate := float64(c.Written-lastJobs) / now.Sub(lastProgress).Seconds()
			p99 := "-"
			if c.P99Ms > 0 {
				p99 = fmt.Sprintf("%.1fms", c.P99Ms)
			}
			fmt.Fprintf(r.out, "%-10s %6.1fs  done %9d  rate %9.0f/s  backlog %9d  pickup p99 %s\n",
				label, now.Sub(start).Seconds(), c.Written, rate, bl, p99)
			lastProgress, lastJobs = now, c.Written
		}
		finished := (target > 0 && c.Written >= target) || (duration > 0 && now.Sub(start) >= duration)
		if finished {
			sampler.Flush(now, c.toCounters(bl))
			m.windows = sampler.Windows()
			m.seconds = now.Sub(start).Seconds()
			m.jobs = c.Written
			m.final = c
			return m, nil
		}
		if now.Sub(lastMove) > 60*time.Second {
			return m, fmt.Errorf("%s: no job finished for 60s (done %d of %d): workers stalled", label, c.Written, target)
		}
	}
}

// verdict is what the store says about a run's jobs.
type verdict struct {
	completed, waiting int64
	duplicates         int64
	// unexplained counts extra runs without an expired lease behind them.
	unexplained    int64
	latency, start stats.Percentiles
}

// verify reads the run's jobs back from the store: how many completed, how
// many still wait, how often any ran more than once, and their latencies
// by the store's own timestamps.
func (r *runner) verify(ctx context.Context, queue string, ids *idRange) (verdict, error) {
	var v verdict
	if ids.n == 0 {
		return v, nil
	}
	lat, startLat := stats.NewLatency(), stats.NewLatency()
	var seen int64 // jobs of the run still in the store
	after := ids.min - 1
	for {
		listed := queue
		if r.opts.queues > 1 {
			listed = "" // every queue: the run's IDs bound the list
		}
		page, err := r.inserts.JobList(ctx, drover.JobListParams{Queue: listed, After: after, Limit: 10_000})
		if err != nil {
			return v, fmt.Errorf("verify from store: %w", err)
		}
		for _, j := range page {
			if j.ID > ids.max {
				break
			}
			if ids.set != nil {
				if _, ok := ids.set[j.ID]; !ok {
					continue
				}
			}
			seen++
			switch {
			case j.State == drovertype.JobStateCompleted:
				v.completed++
				v.duplicates += int64(j.Attempt - 1)
				v.unexplained += int64(max(0, j.Attempt-1-leaseErrors(j)))
				if j.FinalizedAt != nil {
					lat.Record(j.FinalizedAt.Sub(j.CreatedAt))
				}
				if j.AttemptedAt != nil {
					startLat.Record(j.AttemptedAt.Sub(j.CreatedAt))
				}
			case !j.State.Finished():
				v.waiting++
			}
		}
		if len(page) < 10_000 || page[len(page)-1].ID >= ids.max {
			break
		}
		after = page[len(page)-1].ID
	}
	if r.opts.deleteCompleted {
		// Only completions delete a job: every job of the run the store
		// no longer holds completed.
		v.completed += ids.n - seen
	}
	v.latency, v.start = lat.Snapshot(), startLat.Snapshot()
	return v, nil
}

// dbStatser is implemented by drivers that can report database-side
// figures (PostgreSQL).
// Sizes of every raw SQL floor measurement: rows in the scratch table and
// rows per claim.
const floorRows, floorBatch = 200_000, 500

// floorer is implemented by drivers that can measure the raw SQL floor of
// a queue on their store (PostgreSQL).
// references measures, in the same run as the scenario, what the report
// compares Drover against: the store ceiling (ceiling.go) on every store,
// and the raw SQL floor where the store supports it, so that the report
// can say how close Drover comes to its own statements and to bare SQL on
// this database.
func (r *runner) references(ctx context.Context, rep *report.Report) error {
	if !r.opts.floor {
		return nil
	}
	best := rep.SteadyJobsPerSec
	if best == 0 {
		best = rep.JobsPerSec
	}
	c, err := r.ceiling(ctx)
	if err != nil {
		return err
	}
	rep.Ceiling = c
	rep.Notes = append(rep.Notes, fmt.Sprintf("Drover reached %.2f× the store ceiling measured in this run (%.0f jobs/s)", best/c.JobsPerSec, c.JobsPerSec))
	f, ok := pgstore.Of(r.store.Driver)
	if !ok {
		return nil
	}
	const rows, batch, clients = floorRows, floorBatch, 4
	fmt.Fprintf(r.out, "floor      measuring the raw SQL floor (%d rows, batch %d, %d clients)\n", rows, batch, clients)
	var cost costWatch
	rate, err := f.Floor(ctx, rows, batch, clients, false, func() { cost = r.cost.start(ctx, nil) })
	if err != nil {
		return err
	}
	// The floor's scratch table is dropped before Floor returns: a small
	// cost next to its loop's, counted with it.
	rep.Floor = &report.Reference{Name: "raw SQL floor (claim 500 with SKIP LOCKED, delete; 4 clients)",
		JobsPerSec: rate, Command: fmt.Sprintf(pgstore.FloorCommand, clients, batch, rows), Cost: cost.end(ctx, nil, rows)}
	rep.Notes = append(rep.Notes, fmt.Sprintf("Drover reached %.2f× the raw SQL floor measured in this run (%.0f jobs/s); the store ceiling is %.2f× the floor",
		best/rate, rate, c.JobsPerSec/rate))
	// The same loop marking its rows completed instead of deleting them:
	// the floor of a queue that keeps its jobs' history, as Drover does,
	// which the store's CPU per job is held to.
	fmt.Fprintf(r.out, "floor      measuring the claim-and-complete floor (%d rows, batch %d, %d clients)\n", rows, batch, clients)
	rate, err = f.Floor(ctx, rows, batch, clients, true, func() { cost = r.cost.start(ctx, nil) })
	if err != nil {
		return err
	}
	rep.CompleteFloor = &report.Reference{Name: "claim-and-complete floor (claim 500 with SKIP LOCKED, mark completed; 4 clients)",
		JobsPerSec: rate, Command: fmt.Sprintf(pgstore.CompleteFloorCommand, clients, batch, rows), Cost: cost.end(ctx, nil, rows)}
	if s, f := rep.Cost.StoreCPUUsPerJob, rep.CompleteFloor.Cost.StoreCPUUsPerJob; s != nil && f != nil && *f > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("Drover's store CPU per job is %.2f× the claim-and-complete floor's (%.2f against %.2f µs)", *s / *f, *s, *f))
	}
	if rep.Scenario == "scale" {
		return r.floorCurve(ctx, f, rep)
	}
	return nil
}

// floorCurve measures the floor's own curve: K bare clients on the same
// CPUs for each K of the sweep, so that a scale curve can be read against
// what the database itself does with as many claimers. Each K is measured
// once per round, the Ks in turn as the sweep ran them, and the median
// kept: one short loop on shared CPUs is as noisy as one round of the
// sweep.
func (r *runner) floorCurve(ctx context.Context, f *pgstore.Store, rep *report.Report) error {
	var ks []int
	for _, p := range rep.Points {
		if !slices.Contains(ks, p.Processes) {
			ks = append(ks, p.Processes)
		}
	}
	rounds := max(1, r.opts.rounds)
	rates := map[int][]float64{}
	for range rounds {
		for _, k := range ks {
			fmt.Fprintf(r.out, "floor      measuring the raw SQL floor at K = %d (one client per worker process)\n", k)
			v, err := f.Floor(ctx, floorRows, floorBatch, k, false, nil)
			if err != nil {
				return err
			}
			rates[k] = append(rates[k], v)
		}
	}
	for i, p := range rep.Points {
		rep.Points[i].FloorJobsPerSec = stats.Median(rates[p.Processes])
	}
	rep.Notes = append(rep.Notes, fmt.Sprintf("the floor column is the raw SQL floor with K clients (%d rows, batch %d), the median of %d measurement(s) per K after the sweep", floorRows, floorBatch, rounds))
	return nil
}

// settle vacuums the store where that means something, so that a run is
// not billed for the dead rows, stale statistics and checkpoints of the
// runs before it. It happens outside every measured interval.
func (r *runner) settle(ctx context.Context) error {
	if s, ok := pgstore.Of(r.store.Driver); ok {
		return s.Settle(ctx)
	}
	return nil
}

func (r *runner) dbStats(ctx context.Context) map[string]any {
	if s, ok := pgstore.Of(r.store.Driver); ok {
		if m, err := s.DBStats(ctx); err == nil {
			return m
		}
	}
	return nil
}

// dbDelta records before/after figures and the transactions per job.
func dbDelta(before, after map[string]any, jobs int64) map[string]any {
	if before == nil || after == nil {
		return nil
	}
	out := map[string]any{}
	for k, v := range after {
		out[k+"_after"] = v
		out[k+"_before"] = before[k]
	}
	if jobs > 0 {
		b, _ := before["transactions"].(int64)
		a, _ := after["transactions"].(int64)
		out["transactions_per_job"] = math.Round(float64(a-b)/float64(jobs)*1000) / 1000
	}
	return out
}

// producers insert jobs for a while, at a fixed total rate or as fast as
// they can, and count what they inserted.
type producers struct {
	r        *runner
	queue    string
	n        int
	batch    int
	rate     float64
	ids      idRange
	inserted atomic.Int64
	errs     chan error
	seq      atomic.Int64
	// exact tracks every inserted ID (see idRange).
	exact bool
	// tally, when set, makes producers count failed inserts and go on, as
	// a user's producer with retries would, instead of ending the run.
	tally *errorTally
}

// run produces until stop is closed. Inserts run under ctx, not stop, so
// that stopping never abandons an insert halfway and every job that was
// stored is also counted.
func (p *producers) run(ctx context.Context, stop <-chan struct{}) {
	if p.exact && p.ids.set == nil {
		p.ids.set = map[int64]struct{}{}
	}
	var wg sync.WaitGroup
	p.errs = make(chan error, p.n)
	for range p.n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.loop(ctx, stop); err != nil && ctx.Err() == nil {
				p.errs <- err
			}
		}()
	}
	wg.Wait()
	close(p.errs)
}

func (p *producers) loop(ctx context.Context, stop <-chan struct{}) error {
	// Each producer paces its own share of the rate: one batch every
	// interval, on a schedule that does not drift when a batch is slow.
	var interval time.Duration
	if p.rate > 0 {
		interval = time.Duration(float64(time.Second) * float64(p.batch) * float64(p.n) / p.rate)
	}
	next := time.Now()
	for {
		select {
		case <-stop:
			return nil
		case <-ctx.Done():
			return nil
		default:
		}
		if interval > 0 {
			if d := time.Until(next); d > 0 {
				select {
				case <-stop:
					return nil
				case <-ctx.Done():
					return nil
				case <-time.After(d):
				}
			}
			next = next.Add(interval)
		}
		if p.batch == 1 {
			seq := p.seq.Add(1)
			row, err := p.r.inserts.Insert(ctx, p.r.jobArgs(seq, true), p.r.jobOpts(p.queue, seq))
			if err != nil {
				if p.tolerate(err) {
					continue
				}
				return err
			}
			p.ids.add([]int64{row.ID})
		} else {
			batch := make([]drover.InsertManyParams, p.batch)
			for i := range batch {
				seq := p.seq.Add(1)
				batch[i] = drover.InsertManyParams{Args: p.r.jobArgs(seq, true), Opts: p.r.jobOpts(p.queue, seq)}
			}
			got, err := p.r.inserts.InsertMany(ctx, batch)
			if err != nil {
				if p.tolerate(err) {
					continue
				}
				return err
			}
			p.ids.add(got)
		}
		p.inserted.Add(int64(p.batch))
	}
}

// tolerate records a failed insert and pauses briefly when the producers
// are meant to ride out faults; it reports whether to go on.
func (p *producers) tolerate(err error) bool {
	if p.tally == nil {
		return false
	}
	p.tally.add(fmt.Errorf("insert: %w", err))
	time.Sleep(50 * time.Millisecond)
	return true
}

// settings describes a run's knobs for the report.
func (r *runner) settings(extra ...string) string {
	o := r.opts
	parts := []string{
		fmt.Sprintf("concurrency %d per worker", o.concurrency),
		fmt.Sprintf("claim max %d", max(o.claimMax, 500)),
		fmt.Sprintf("work %s, cpu %s", o.work, o.cpu),
		fmt.Sprintf("payload %d B", o.payloadBytes),
		fmt.Sprintf("window %s", o.window),
	}
	if len(o.priorityMix) > 0 {
		parts = append(parts, fmt.Sprintf("priority mix %v", o.priorityMix))
	}
	if r.remote != nil {
		hop := fmt.Sprintf("worker processes behind a Toxiproxy hop adding %s round trip", o.latency)
		if r.remote.netns != "" {
			hop += ", in a network namespace of their own (veth)"
		}
		parts = append(parts, hop)
	}
	if o.globalLimit > 0 {
		parts = append(parts, fmt.Sprintf("global limit %d running", o.globalLimit))
	}
	if o.deleteCompleted {
		parts = append(parts, "completed jobs deleted (Config.DeleteCompleted): the store check counts absent jobs as completed and cannot see duplicates")
	}
	return strings.Join(append(parts, extra...), "; ")
}

func (r *runner) newReport(scenario string) *report.Report {
	rep := report.New(scenario, r.store.Target.Kind)
	return rep
}

// errLost is returned when a run's store check finds lost jobs, so that the
// command fails loudly instead of printing a good-looking rate.
var errLost = errors.New("jobs were lost")
