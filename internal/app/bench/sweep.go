package bench

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/bench/pgstore"
	"github.com/droverhq/drover/internal/app/bench/report"
	"github.com/droverhq/drover/internal/app/bench/stats"
	"github.com/droverhq/drover/internal/app/storeurl"
	"github.com/droverhq/drover/internal/engine"
	"github.com/droverhq/drover/internal/stmtplan"
)

// The dimensions `drover bench sweep` measures cost along (issue 36: cost
// that stays flat as the work grows).
const (
	dimBacklog = "backlog"
	dimPayload = "payload"
	dimQueues  = "queues"
	dimKeys    = "keys"
	dimTopics  = "topics"
	dimSoak    = "soak"
)

// sweepDimension is a dimension with its default points and the range a
// point may take.
type sweepDimension struct {
	name, points string
	lo, hi       int64
}

// sweepDimensions are the dimensions with their default points, sized to
// finish in minutes on a two-core machine; --points gives the issue's
// (backlog 100000,1000000,10000000; keys 1,1000,1000000,unique; topics
// --points 1,50,1000 --topic-points 1,100,10000; soak --duration 1h
// --sample-every 1m).
var sweepDimensions = []sweepDimension{
	{dimBacklog, "10000,100000,1000000", 0, 100_000_000},
	{dimPayload, "0,1024,16384", 0, 1 << 20},
	{dimQueues, "1,100,1000", 1, 10_000},
	{dimKeys, "1,1000,100000,unique", 0, 10_000_000},
	{dimTopics, "1,50,200", 1, 10_000},
	{dimSoak, "", 0, 0},
}

// uniquePoint is the keys point whose jobs carry no ordering key and a
// unique key each (InsertOpts.UniqueKey), written "unique" in --points.
const uniquePoint = -1

// sweepOptions are the flags of `drover bench sweep` beyond the runner's.
type sweepOptions struct {
	dimension   string
	points      []int64
	topicPoints []int64
	// messages is what a topics point publishes.
	messages int
	// sampleEvery is the soak's sampling interval.
	sampleEvery time.Duration
}

func newSweepCommand(env func() Env) *cobra.Command {
	o := options{queue: "bench", via: viaClient, jobs: 20_000, producers: 4, batch: 1, concurrency: 1000,
		window: 2 * time.Second, lease: 30 * time.Second, progress: 2 * time.Second, clients: 1, keyLimit: 1}
	so := sweepOptions{messages: 20_000}
	var points, topicPoints, jsonPath, plotPath, cpuProfile string
	var markdown, keep bool
	dims := dimensionNames()
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Measure cost per job along one dimension (" + strings.Join(dims, ", ") + "); flag points over 1.25× the cheapest",
		Long: "Measure, for each value of one dimension, jobs/s, store and client CPU per job, WAL per job\n" +
			"(PostgreSQL), claim latency p50/p99 at a fixed rate, and the hot table's size; flag every\n" +
			"point whose cost per job exceeds 1.25× the cheapest point's. On PostgreSQL, every\n" +
			"maintenance statement then runs under EXPLAIN ANALYZE on the hot table as the sweep left\n" +
			"it, and pg_stat_statements' top statements are read when the extension is loaded.\n" +
			"Dimensions: backlog (jobs waiting in a queue nobody works while fresh jobs at --rate are\n" +
			"worked), payload (bytes of args), queues (active queues, one client serving all), keys\n" +
			"(distinct ordering keys; \"unique\": a unique key on every job), topics (subscriptions per\n" +
			"topic in --points, topics in --topic-points), soak (--duration at --rate or 70% of a\n" +
			"measured peak, sampled every --sample-every).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if so.points, err = parseSweepPoints(so.dimension, "--points", points, cmd.Flags().Changed("points")); err != nil {
				return err
			}
			if so.dimension == dimTopics {
				if so.topicPoints, err = parseSweepPoints(dimTopics, "--topic-points", topicPoints, true); err != nil {
					return err
				}
			} else if cmd.Flags().Changed("topic-points") {
				return usagef("--topic-points: only the topics dimension takes it")
			}
			if !cmd.Flags().Changed("duration") {
				o.duration = 5 * time.Second
				if so.dimension == dimSoak {
					o.duration = 2 * time.Minute
				}
			}
			if !cmd.Flags().Changed("rate") && so.dimension != dimSoak {
				o.rate = 1000
			}
			if err := validateSweep(o, so); err != nil {
				return err
			}
			if err := checkOutputPaths([2]string{"--json", jsonPath}, [2]string{"--plot", plotPath}, [2]string{"--cpuprofile", cpuProfile}); err != nil {
				return err
			}
			stop, err := startProfiles(cpuProfile, "", cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer stop()
			return runSweep(cmd.Context(), env(), o, so, jsonPath, plotPath, markdown, keep)
		},
	}
	f := cmd.Flags()
	f.StringVar(&so.dimension, "dimension", "", "what to sweep: "+strings.Join(dims, ", "))
	f.StringVar(&points, "points", "", "the dimension's values, a list (default per dimension: "+sweepDefaults()+")")
	f.StringVar(&topicPoints, "topic-points", "1,100,1000", "topics: topic counts of the second curve (one subscription each)")
	f.IntVar(&o.jobs, "jobs", o.jobs, "jobs of each burn-down (payload, queues, keys: at least the point's keys); the soak's peak is measured with them")
	f.DurationVar(&o.duration, "duration", 0, "how long fresh jobs are produced at --rate per point (default 5s), or the soak lasts (default 2m)")
	f.Float64Var(&o.rate, "rate", 0, "jobs inserted per second by the fixed-rate phases (default 1000); soak: the rate held (default 70% of a peak measured first)")
	f.DurationVar(&so.sampleEvery, "sample-every", 10*time.Second, "soak: how often to sample rate, latency, table size and dead tuples")
	f.IntVar(&o.concurrency, "concurrency", o.concurrency, "jobs run at once by the worker client")
	f.IntVar(&o.keyLimit, "key-limit", o.keyLimit, "keys: jobs of one key active at once (1: strict FIFO per key)")
	f.IntVar(&so.messages, "messages", so.messages, "topics: messages published per point")
	f.StringVar(&jsonPath, "json", "", "write the points (points[]), soak samples and maintenance plans to this file")
	f.StringVar(&plotPath, "plot", "", "draw rate and cost per job by point (soak: rate and p99 over time) to this .svg file")
	f.BoolVar(&markdown, "markdown", false, "print a section ready to paste into docs/benchmarks.md")
	f.BoolVar(&keep, "keep", false, "keep the bench's own schema (or ./"+benchFile+") after the run")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the bench process to this file (go tool pprof): on SQLite the store's work too, to find what grows")
	return cmd
}

func dimensionNames() []string {
	var out []string
	for _, d := range sweepDimensions {
		out = append(out, d.name)
	}
	return out
}

// sweepDefaults lists the dimensions' default points, for the help.
func sweepDefaults() string {
	var out []string
	for _, d := range sweepDimensions {
		if d.points != "" {
			out = append(out, d.name+" "+d.points)
		}
	}
	return strings.Join(out, "; ")
}

// parseSweepPoints parses a dimension's list of values; without given,
// the dimension's defaults.
func parseSweepPoints(dim, flag, s string, given bool) ([]int64, error) {
	i := slices.IndexFunc(sweepDimensions, func(d sweepDimension) bool { return d.name == dim })
	if i < 0 {
		return nil, usagef("--dimension %q: must be one of %s", dim, strings.Join(dimensionNames(), ", "))
	}
	d := sweepDimensions[i]
	if flag == "--topic-points" {
		d.lo, d.hi = 1, 100_000
	}
	if dim == dimSoak {
		if given {
			return nil, usagef("--points: the soak has none; it runs --duration at --rate")
		}
		return nil, nil
	}
	if !given {
		s = d.points
	}
	var out []int64
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if part == "unique" && dim == dimKeys {
			out = append(out, uniquePoint)
			continue
		}
		n, err := strconv.ParseInt(part, 10, 64)
		if err != nil || n < d.lo || n > d.hi {
			return nil, usagef("%s: %q is not a value of %s between %d and %d", flag, part, dim, d.lo, d.hi)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, usagef("%s: no values", flag)
	}
	if dim == dimBacklog && !slices.IsSorted(out) {
		return nil, usagef("%s: backlog depths must rise (the backlog grows from one point to the next)", flag)
	}
	return out, nil
}

func validateSweep(o options, so sweepOptions) error {
	switch {
	case o.jobs < 1:
		return usagef("--jobs %d: must be at least 1", o.jobs)
	case o.duration <= 0:
		return usagef("--duration %s: must be positive", o.duration)
	case o.rate < 0:
		return usagef("--rate %g: must not be negative", o.rate)
	case o.concurrency < 1 || o.concurrency > 100_000:
		return usagef("--concurrency %d: must be between 1 and 100000", o.concurrency)
	case o.keyLimit < 1 || o.keyLimit > drover.MaxKeyLimit:
		return usagef("--key-limit %d: must be between 1 and %d", o.keyLimit, drover.MaxKeyLimit)
	case so.messages < 1:
		return usagef("--messages %d: must be at least 1", so.messages)
	case so.sampleEvery < time.Second:
		return usagef("--sample-every %s: must be at least 1s", so.sampleEvery)
	}
	return nil
}

// runSweep opens the store, measures every point of the dimension, then on
// PostgreSQL the maintenance statements and pg_stat_statements, and writes
// the outputs.
func runSweep(ctx context.Context, env Env, o options, so sweepOptions, jsonPath, plotPath string, markdown, keep bool) error {
	r, target, done, err := openRunner(ctx, env, o, keep)
	if err != nil {
		return err
	}
	defer done()
	sw := report.NewSweep(so.dimension, r.store.Target.Kind)
	sw.Command = commandLine(target)
	statements := r.readStatements(ctx, sw)
	err = r.sweepDimension(ctx, sw, so)
	if err == nil && sw.Maintenance == nil {
		err = r.maintenancePlans(ctx, sw, "as the sweep left it")
	}
	if err == nil && statements != nil {
		r.topStatements(ctx, sw, statements)
	}
	sw.FlagOver()
	sw.Notes = append(sw.Notes, r.cost.notes...)
	fmt.Fprintln(r.out)
	report.WriteSweepTable(r.out, sw)
	if markdown {
		fmt.Fprintln(r.out)
		fmt.Fprint(r.out, report.SweepMarkdown(sw))
	}
	if jsonPath != "" {
		if werr := report.WriteSweepJSON(jsonPath, sw); werr != nil && err == nil {
			err = werr
		}
	}
	if plotPath != "" {
		if werr := report.WriteSweepSVG(plotPath, sw); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return err
	}
	for _, p := range sw.Points {
		if p.Lost != 0 || (sw.Unit == "jobs" && p.Done != p.Inserted) {
			return fmt.Errorf("%w: point %s %s: %d inserted, %d done, %d lost", errLost, p.Curve, p.Label, p.Inserted, p.Done, p.Lost)
		}
	}
	return nil
}

// sweepDimension measures the points of so.dimension into sw.
func (r *runner) sweepDimension(ctx context.Context, sw *report.Sweep, so sweepOptions) error {
	o := r.opts
	defer func() { r.opts, r.payload = o, "" }()
	rate := fmt.Sprintf("fresh jobs at %.0f/s for %s by %d producers, one job per insert", o.rate, o.duration, o.producers)
	workers := fmt.Sprintf("one client in the bench process, concurrency %d", o.concurrency)
	switch so.dimension {
	case dimBacklog:
		sw.Settings = "each point: the backlog (jobs waiting in a queue no worker serves) grown to the point's depth, then " +
			rate + ", worked by " + workers + "; insert_per_sec is the backlog's bulk insert"
		return r.sweepBacklog(ctx, sw, so.points)
	case dimPayload, dimQueues, dimKeys:
		sw.Settings = fmt.Sprintf("each point: a burn-down of %d jobs (per_sec, cost, sizes), then %s (claim latency); workers: %s",
			o.jobs, rate, workers)
		if so.dimension == dimKeys {
			sw.Settings += fmt.Sprintf("; jobs spread round robin over the keys (at least one job per key), key limit %d", o.keyLimit)
		}
		if so.dimension == dimQueues {
			sw.Settings += "; jobs spread round robin over the queues, the concurrency shared among them (at least 1 each)"
		}
		for _, v := range so.points {
			if err := r.sweepJobPoint(ctx, sw, so.dimension, v); err != nil {
				return err
			}
		}
		return nil
	case dimTopics:
		return r.sweepTopics(ctx, sw, so)
	case dimSoak:
		return r.soak(ctx, sw, so)
	}
	return usagef("--dimension %q: must be one of %s", so.dimension, strings.Join(dimensionNames(), ", "))
}

// countJobs is what the store holds, in every queue: jobs in all, and
// completed ones. The difference of two counts around a point is that
// point's, as points run one after another.
func (r *runner) countJobs(ctx context.Context) (all, completed int64, err error) {
	byState, err := r.inserts.JobCountByState(ctx, "")
	if err != nil {
		return 0, 0, fmt.Errorf("count jobs: %w", err)
	}
	for state, n := range byState {
		all += n
		if state == drovertype.JobStateCompleted {
			completed += n
		}
	}
	return all, completed, nil
}

// pointCounter counts a point's jobs from the store: begin before it,
// end after.
type pointCounter struct{ all, completed int64 }

func (r *runner) beginCount(ctx context.Context) (pointCounter, error) {
	all, completed, err := r.countJobs(ctx)
	return pointCounter{all, completed}, err
}

// end fills sp's Inserted and Done.
func (c pointCounter) end(ctx context.Context, r *runner, sp *report.SweepPoint) error {
	all, completed, err := r.countJobs(ctx)
	sp.Inserted, sp.Done = all-c.all, completed-c.completed
	return err
}

// sweepBacklog grows a backlog in a queue nobody works to each depth in
// turn, and at each measures fresh jobs produced at the fixed rate and
// worked off beside it: the claims and inserts of a queue must not slow as
// another part of the hot table fills.
func (r *runner) sweepBacklog(ctx context.Context, sw *report.Sweep, depths []int64) error {
	backlogQueue := r.queueName("backlog")
	have := int64(0)
	for _, n := range depths {
		sp := report.SweepPoint{Curve: dimBacklog, Value: n, Label: countLabel(n)}
		if n > have {
			fmt.Fprintf(r.out, "backlog    growing the backlog from %d to %d jobs\n", have, n)
			_, rate, err := r.insertBacklog(ctx, backlogQueue, int(n-have))
			if err != nil {
				return err
			}
			sp.InsertPerSec, have = rate, n
		}
		c, err := r.beginCount(ctx)
		if err != nil {
			return err
		}
		pt, err := r.steadyPoint(ctx, r.queueName("b"+strconv.FormatInt(n, 10)), 0, 1, r.opts.producers, "backlog "+sp.Label)
		if err != nil {
			return err
		}
		if err := c.end(ctx, r, &sp); err != nil {
			return err
		}
		sp.Seconds, sp.PerSec, sp.Cost, sp.ClaimLatencyMs = pt.Seconds, pt.JobsPerSec, pt.Cost, pt.StartLatencyMs
		sp.ClaimStatementMs, sp.JobsPerClaim = meanClaimMs(pt.windows), jobsPerClaim(pt.windows)
		sp.Lost, sp.Duplicates = pt.Lost, pt.Duplicates
		sp.TableBytes, sp.IndexBytes = r.tableSizes(ctx, "jobs")
		sw.Points = append(sw.Points, sp)
	}
	return r.emptiedPlans(ctx, sw, backlogQueue)
}

// sweepJobPoint measures one point of payload, queues or keys: a burn-down
// for the rate and cost, then jobs at the fixed rate for the claim latency,
// both shaped by the point's value.
func (r *runner) sweepJobPoint(ctx context.Context, sw *report.Sweep, dim string, v int64) error {
	base := r.opts
	defer func() { r.opts, r.payload = base, "" }()
	sp := report.SweepPoint{Curve: dim, Value: v, Label: strconv.FormatInt(v, 10)}
	jobs := base.jobs
	switch dim {
	case dimPayload:
		r.opts.payloadBytes, r.payload = int(v), strings.Repeat("x", int(v))
		sp.Label = sizeLabel(v)
	case dimQueues:
		r.opts.queues = int(v)
	case dimKeys:
		switch v {
		case uniquePoint:
			r.opts.uniqueKeys, sp.Label = true, "unique"
		case 0:
			sp.Label = "none" // plain jobs, the baseline of the keyed points
		default:
			r.opts.keys, sp.Label = int(v), countLabel(v)
			jobs = max(jobs, int(v))
		}
	}
	name := fmt.Sprintf("%s%d", dim, max(v, 0))
	if v == uniquePoint {
		name = "unique"
	}
	c, err := r.beginCount(ctx)
	if err != nil {
		return err
	}
	pt, err := r.burnPoint(ctx, r.queueName(name), 0, jobs, dim+" "+sp.Label)
	if err != nil {
		return err
	}
	sp.TableBytes, sp.IndexBytes = r.tableSizes(ctx, "jobs")
	lat, err := r.steadyPoint(ctx, r.queueName(name+"_lat"), 0, 1, r.opts.producers, dim+" "+sp.Label+" latency")
	if err != nil {
		return err
	}
	if err := c.end(ctx, r, &sp); err != nil {
		return err
	}
	sp.Seconds, sp.PerSec, sp.InsertPerSec, sp.Cost = pt.Seconds, pt.JobsPerSec, pt.insertPerSec, pt.Cost
	sp.ClaimLatencyMs, sp.ClaimStatementMs, sp.JobsPerClaim = lat.StartLatencyMs, meanClaimMs(pt.windows), jobsPerClaim(pt.windows)
	sp.Lost, sp.Duplicates = pt.Lost+lat.Lost, pt.Duplicates+lat.Duplicates
	sw.Points = append(sw.Points, sp)
	return nil
}

// jobsPerClaim is the jobs the windows completed per claim call they made
// (0 without claims).
func jobsPerClaim(ws []stats.Window) float64 {
	var jobs, claims int64
	for _, w := range ws {
		jobs, claims = jobs+w.Jobs, claims+w.Claims
	}
	if claims == 0 {
		return 0
	}
	return float64(jobs) / float64(claims)
}

// meanClaimMs is the mean of the windows' mean claim call times, over the
// windows that made a claim.
func meanClaimMs(ws []stats.Window) float64 {
	var sum float64
	var n int
	for _, w := range ws {
		if w.ClaimMs > 0 {
			sum, n = sum+w.ClaimMs, n+1
		}
	}
	if n == 0 {
		return 0
	}
	return round2(sum / float64(n))
}

// sweepTopics runs bench fanout's point for each subscription count (on
// one topic) and each topic count (one subscription each): cost per
// delivery as fan-out widens and as topics multiply.
func (r *runner) sweepTopics(ctx context.Context, sw *report.Sweep, so sweepOptions) error {
	sw.Unit = "deliveries"
	base := fanoutOptions{messages: so.messages, publishers: 50, consumers: 1, batchSize: 500, lanes: 4,
		processes: []int{1}, inProcess: true, lease: 5 * time.Second}
	sw.Settings = fmt.Sprintf("each point: bench fanout's run of %d messages, %d publishers, %d lanes per topic, one consumer client in the bench process; "+
		"the subscriptions curve on one topic, the topics curve with one subscription each; per_sec counts deliveries; "+
		"claim latency is publish to handler with publishing as fast as possible, so it includes the lag that builds; "+
		"with --messages fixed, more topics also means fewer messages per publish and per delivered batch",
		so.messages, base.publishers, base.lanes)
	sw.Notes = append(sw.Notes, "subscriptions curve: one message serves every subscription of its topic, so cost per delivery falls as they grow; "+
		"a point over budget at the narrow end is that sharing, not a cost that grows")
	pub, err := storeurl.NewClient[topicClient](r.store, &drover.Config{Logger: discardLogger()})
	if err != nil {
		return err
	}
	type curve struct {
		name   string
		values []int64
	}
	for _, cv := range []curve{{"subscriptions", so.points}, {"topics", so.topicPoints}} {
		for _, v := range cv.values {
			fo := base
			fo.topics, fo.subscriptions = 1, int(v)
			if cv.name == "topics" {
				fo.topics, fo.subscriptions = int(v), 1
			}
			// A publish carries one topic's messages: batches no larger
			// than a topic's share, so that every topic gets messages.
			fo.batch = min(100, max(1, fo.messages/fo.topics))
			if err := r.settle(ctx); err != nil {
				return err
			}
			fmt.Fprintf(r.out, "topics     %s %d: %d topics × %d subscriptions, %d messages\n", cv.name, v, fo.topics, fo.subscriptions, fo.messages)
			fp, err := fanoutPoint(ctx, r.env, r.store, pub, r.cost, fo, 1)
			if err != nil {
				return err
			}
			sp := report.SweepPoint{Curve: cv.name, Value: v, Label: countLabel(v),
				Inserted: int64(fo.messages) * int64(fo.subscriptions), Done: fp.Deliveries - fp.Duplicates,
				Lost: fp.Lost, Duplicates: fp.Duplicates, Seconds: fp.Seconds, PerSec: fp.DeliveriesPerSec,
				InsertPerSec: fp.PublishedPerSec, ClaimLatencyMs: fp.LatencyMs,
				Cost: report.Cost{StoreCPUUsPerJob: fp.StoreCPUUsPerDelivery, ClientCPUUsPerJob: fp.ClientCPUUsPerDelivery,
					WALBytesPerJob: fp.WALBytesPerDelivery}}
			sp.TableBytes, sp.IndexBytes = r.tableSizes(ctx, "topic_messages")
			sw.Points = append(sw.Points, sp)
		}
	}
	return nil
}

// soak holds a rate for the duration (--rate, or 70% of the rate a steady
// run as fast as possible reached first) and samples it every
// so.sampleEvery: rate, start latency, the hot table's size and, on
// PostgreSQL, its dead tuples, which must all stay flat.
func (r *runner) soak(ctx context.Context, sw *report.Sweep, so sweepOptions) error {
	base := r.opts
	defer func() { r.opts = base }()
	rate := base.rate
	if rate == 0 {
		r.opts.rate, r.opts.batch, r.opts.duration = 0, 100, min(base.duration, 5*time.Second)
		pt, err := r.steadyPoint(ctx, r.queueName("peak"), 0, 1, r.opts.producers, "peak")
		if err != nil {
			return err
		}
		if err := checkLost(pt); err != nil {
			return err
		}
		rate = 0.7 * pt.JobsPerSec
		sw.Notes = append(sw.Notes, fmt.Sprintf("peak measured first: %.0f jobs/s produced and worked at once for %s (batches of 100); the soak holds 70%%", pt.JobsPerSec, r.opts.duration))
	}
	// Batches grow with the rate, so that four producers reach it with
	// each a few dozen inserts a second at most, as the peak's did.
	r.opts.rate, r.opts.duration, r.opts.batch = rate, base.duration, max(1, min(100, int(rate/100)))
	sw.Settings = fmt.Sprintf("%.0f jobs/s for %s by %d producers in batches of %d, worked by one client in the bench process (concurrency %d); sampled every %s",
		rate, base.duration, r.opts.producers, r.opts.batch, base.concurrency, so.sampleEvery)
	sp := report.SweepPoint{Curve: dimSoak, Value: int64(math.Round(rate)), Label: fmt.Sprintf("%.0f/s", rate)}
	c, err := r.beginCount(ctx)
	if err != nil {
		return err
	}
	sampler := r.startSoakSampler(ctx, so.sampleEvery)
	pt, err := r.steadyPoint(ctx, r.queueName("soak"), 0, 1, r.opts.producers, "soak")
	samples, total := sampler.stop()
	if err != nil {
		return err
	}
	if err := c.end(ctx, r, &sp); err != nil {
		return err
	}
	sp.Seconds, sp.PerSec, sp.InsertPerSec, sp.Cost = pt.Seconds, pt.JobsPerSec, pt.insertPerSec, pt.Cost
	sp.ClaimLatencyMs, sp.Lost, sp.Duplicates = total, pt.Lost, pt.Duplicates
	sp.ClaimStatementMs, sp.JobsPerClaim = meanClaimMs(pt.windows), jobsPerClaim(pt.windows)
	sp.TableBytes, sp.IndexBytes = r.tableSizes(ctx, "jobs")
	sw.Points, sw.Samples = append(sw.Points, sp), samples
	return nil
}

// soakSampler takes the soak's samples in a goroutine of its own.
type soakSampler struct {
	cancel  context.CancelFunc
	done    chan struct{}
	samples []report.SoakSample
	total   *stats.Latency
}

// startSoakSampler starts sampling once the first job of the run has
// started (the run settles the store first), then every interval. Each
// sample swaps the in-process handlers' start latency recorder for a fresh
// one, so that a sample holds its interval's jobs alone.
func (r *runner) startSoakSampler(ctx context.Context, every time.Duration) *soakSampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &soakSampler{cancel: cancel, done: make(chan struct{}), total: stats.NewLatency()}
	health, _ := pgstore.Of(r.store.Driver)
	go func() {
		defer close(s.done)
		poll := time.NewTicker(50 * time.Millisecond)
		defer poll.Stop()
		for pickup.Load().Snapshot().Count == 0 {
			select {
			case <-ctx.Done():
				return
			case <-poll.C:
			}
		}
		start, last := time.Now(), time.Now()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			lat := pickup.Swap(stats.NewLatency())
			now := time.Now()
			snap := lat.Snapshot()
			s.total.Merge(lat)
			smp := report.SoakSample{AtSec: now.Sub(start).Seconds(), Jobs: snap.Count,
				Rate: float64(snap.Count) / now.Sub(last).Seconds(), LatencyMs: snap}
			smp.TableBytes, smp.IndexBytes = r.tableSizes(ctx, "jobs")
			if health != nil {
				if h, err := health.Health(ctx); err == nil {
					smp.DeadTuples = &h.DeadTuples
				}
			}
			last = now
			s.samples = append(s.samples, smp)
		}
	}()
	return s
}

// stop ends the sampling and returns the samples and the start latency
// of every job started since sampling began.
func (s *soakSampler) stop() ([]report.SoakSample, stats.Percentiles) {
	s.cancel()
	<-s.done
	s.total.Merge(pickup.Load())
	return s.samples, s.total.Snapshot()
}

// tableSizes reads the size of table and of its indexes, partitions
// included, nil where the store cannot tell (SQLite built without the
// dbstat table).
func (r *runner) tableSizes(ctx context.Context, table string) (tableBytes, indexBytes *int64) {
	var t, i int64
	var err error
	switch d := r.store.Driver.(type) {
	case interface {
		Pool() *pgxpool.Pool
		Schema() string
	}:
		// pg_partition_tree lists a partitioned table's partitions, and
		// nothing for a plain table.
		err = d.Pool().QueryRow(ctx, `
			WITH t AS (SELECT to_regclass(quote_ident($1) || '.' || quote_ident($2)) AS relid),
			rels AS (SELECT relid FROM pg_partition_tree((SELECT relid FROM t)) UNION SELECT relid FROM t)
			SELECT coalesce(sum(pg_table_size(relid)), 0)::bigint, coalesce(sum(pg_indexes_size(relid)), 0)::bigint FROM rels`,
			d.Schema(), table).Scan(&t, &i)
	case interface {
		DB() *sql.DB
		Schema() string
	}:
		name := d.Schema() + "_" + table
		err = d.DB().QueryRowContext(ctx, `
			SELECT (SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name = ?1),
				(SELECT coalesce(sum(s.pgsize), 0) FROM dbstat AS s JOIN sqlite_master AS m ON m.name = s.name
				 WHERE m.type = 'index' AND m.tbl_name = ?1)`, name).Scan(&t, &i)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, nil
	}
	return &t, &i
}

// maintenanceBatch is the batch of one maintenance statement, as the
// leader's passes send it (internal/maintenance).
const maintenanceBatch = 10_000

// maintenancePlans runs every maintenance statement under EXPLAIN ANALYZE
// with the defaults a client's leader would give it, on the hot table as
// it is now, which table names for the report.
func (r *runner) maintenancePlans(ctx context.Context, sw *report.Sweep, table string) error {
	x, ok := r.store.Driver.Executor().(stmtplan.Explainer)
	if !ok {
		sw.Notes = append(sw.Notes, "maintenance statements are planned on PostgreSQL only")
		return nil
	}
	now := time.Now()
	plans, err := x.ExplainMaintenance(ctx, stmtplan.MaintenanceParams{
		Prune: droverdriver.PruneParams{Now: now, Limit: maintenanceBatch, CompletedRetention: drover.CompletedRetentionDefault,
			CancelledRetention: drover.CancelledRetentionDefault, DiscardedRetention: drover.DiscardedRetentionDefault},
		WorkerForgetBefore: now.Add(-engine.WorkerForgetAfter),
	})
	if err != nil {
		return err
	}
	for _, p := range plans {
		m := report.MaintenanceStatement{Table: table, Pass: p.Pass, Statement: p.Statement, WallMs: ms(p.Wall)}
		if err := m.ParseExplain(p.Explain); err != nil {
			return err
		}
		sw.Maintenance = append(sw.Maintenance, m)
	}
	if len(sw.Maintenance) == len(plans) {
		sw.Notes = append(sw.Notes, "maintenance: each statement ran once under EXPLAIN (ANALYZE, FORMAT JSON) after the sweep, in a transaction rolled back, with the default retentions and a batch of 10,000")
	}
	return nil
}

// emptiedPlans plans the maintenance statements again after cancelling the
// backlog, before vacuum comes by: the hot table grown and emptied again,
// its statistics still those of the full table, as after a burst. The
// statements must not cost more on it than on the table in use.
func (r *runner) emptiedPlans(ctx context.Context, sw *report.Sweep, backlogQueue string) error {
	if _, ok := r.store.Driver.Executor().(stmtplan.Explainer); !ok {
		return nil
	}
	if err := r.maintenancePlans(ctx, sw, "with the backlog waiting"); err != nil {
		return err
	}
	fmt.Fprintf(r.out, "backlog    cancelling the backlog, to plan the maintenance statements on the emptied table\n")
	if _, err := r.inserts.JobBulk(ctx, drover.BulkCancel, drover.JobListParams{Queue: backlogQueue}, nil); err != nil {
		return fmt.Errorf("cancel the backlog: %w", err)
	}
	return r.maintenancePlans(ctx, sw, "backlog cancelled, before vacuum")
}

// readStatements reads pg_stat_statements' figures of this database, per
// statement. It returns nil, with a note saying why, where there are none
// to read: SQLite, a server that does not load the library (nothing is
// created then), a role that may not create the extension. The sweep
// reads them before and after and reports the difference, so that the
// statistics of other work are neither reset nor counted.
func (r *runner) readStatements(ctx context.Context, sw *report.Sweep) map[int64]report.TopStatement {
	conn := r.cost.conn
	if conn == nil {
		return nil
	}
	var preloaded bool
	if err := conn.QueryRow(ctx, "SELECT 'pg_stat_statements' = ANY(string_to_array(replace(current_setting('shared_preload_libraries'), ' ', ''), ','))").Scan(&preloaded); err != nil || !preloaded {
		sw.Notes = append(sw.Notes, "pg_stat_statements skipped: the server does not load it (shared_preload_libraries)")
		return nil
	}
	if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
		sw.Notes = append(sw.Notes, "pg_stat_statements skipped: "+firstLine(err.Error()))
		return nil
	}
	rows, err := conn.Query(ctx, `
		SELECT queryid, min(query), sum(calls)::bigint, sum(total_exec_time), sum(rows)::bigint, sum(wal_bytes)::bigint
		FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND queryid IS NOT NULL
		GROUP BY queryid`)
	if err != nil {
		sw.Notes = append(sw.Notes, "pg_stat_statements skipped: "+firstLine(err.Error()))
		return nil
	}
	defer rows.Close()
	out := map[int64]report.TopStatement{}
	for rows.Next() {
		var id int64
		var t report.TopStatement
		if err := rows.Scan(&id, &t.Query, &t.Calls, &t.TotalMs, &t.Rows, &t.WALBytes); err != nil {
			sw.Notes = append(sw.Notes, "pg_stat_statements skipped: "+firstLine(err.Error()))
			return nil
		}
		out[id] = t
	}
	if err := rows.Err(); err != nil {
		sw.Notes = append(sw.Notes, "pg_stat_statements skipped: "+firstLine(err.Error()))
		return nil
	}
	return out
}

// topStatements sets sw's top statements: the ten of this database that
// took the most time since before was read.
func (r *runner) topStatements(ctx context.Context, sw *report.Sweep, before map[int64]report.TopStatement) {
	after := r.readStatements(ctx, sw)
	var top []report.TopStatement
	for id, t := range after {
		b := before[id]
		t.Calls, t.TotalMs, t.Rows, t.WALBytes = t.Calls-b.Calls, t.TotalMs-b.TotalMs, t.Rows-b.Rows, t.WALBytes-b.WALBytes
		if t.Calls > 0 {
			t.MeanMs = t.TotalMs / float64(t.Calls)
			top = append(top, t)
		}
	}
	slices.SortFunc(top, func(a, b report.TopStatement) int { return cmp.Compare(b.TotalMs, a.TotalMs) })
	sw.TopStatements = top[:min(10, len(top))]
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// spreadQueue is the queue of the seq-th job of a run over n queues
// (options.queues), queue itself when n is 0 or 1.
func spreadQueue(queue string, seq int64, n int) string {
	if n <= 1 {
		return queue
	}
	return fmt.Sprintf("%s_q%d", queue, seq%int64(n))
}

// spreadQueues are the n queues spreadQueue uses.
func spreadQueues(queue string, n int) []string {
	if n <= 1 {
		return []string{queue}
	}
	out := make([]string, n)
	for i := range n {
		out[i] = spreadQueue(queue, int64(i), n)
	}
	return out
}

// countLabel writes a count the way the docs do: 1000 as 1k, 1000000 as 1M.
func countLabel(n int64) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return strconv.FormatInt(n/1_000_000, 10) + "M"
	case n >= 1000 && n%1000 == 0:
		return strconv.FormatInt(n/1000, 10) + "k"
	}
	return strconv.FormatInt(n, 10)
}

// sizeLabel writes a payload size: 0 B, 1 KB, 16 KB.
func sizeLabel(n int64) string {
	if n >= 1024 && n%1024 == 0 {
		return strconv.FormatInt(n/1024, 10) + " KB"
	}
	return strconv.FormatInt(n, 10) + " B"
}
