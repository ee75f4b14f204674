package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover"

	"github.com/droverhq/drover/internal/app/bench/report"
	"github.com/droverhq/drover/internal/app/storeurl"
)

// How bench workers reach the store.
const (
	viaClient     = "client"
	viaHTTP       = "http"
	viaPython     = "python"
	viaTypeScript = "typescript"
)

// NewCommand returns `drover bench` with one subcommand per scenario.
func NewCommand(env func() Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench SCENARIO",
		Short: "Measure throughput, latency and scaling on the configured store",
		Long: "Measure what Drover does on the store the database URL names (the embedded ./" + benchFile + "\n" +
			"when none is given), in a schema of its own (" + benchSchema + ") unless --schema names one, never\n" +
			"the application's. What the bench made is dropped when it ends, on Ctrl-C too, unless --keep.\n" +
			"Scenarios: burndown, steady, latency, scale, streams, runs, dag, keyed, chaos, fanout, assign, sweep.\n" +
			"Every run prints a progress line every 2s, a table at the end, and can write\n" +
			"--json, --markdown and --plot output. Jobs are checked from the store: a run\n" +
			"that loses a job fails.",
		Args: cobra.NoArgs,
	}
	type scenario struct {
		name, short string
		defaults    func(*options)
		run         func(r *runner, ctx context.Context) (*report.Report, error)
	}
	scenarios := []scenario{
		{"burndown", "Insert --jobs jobs with the bulk path, then work them off", func(o *options) {
			// Noop jobs finish in microseconds: a deep buffer keeps claims
			// at their full batch size, as River's bench does with 2,000.
			o.concurrency = 1000
			o.floor = true
		},
			func(r *runner, ctx context.Context) (*report.Report, error) { return r.burndown(ctx) }},
		{"steady", "Produce and work at once for --duration (fixed --rate or as fast as possible)", func(o *options) {
			o.batch = 100
		}, func(r *runner, ctx context.Context) (*report.Report, error) { return r.steady(ctx, "steady") }},
		{"latency", "Produce one job per insert at a fixed --rate below capacity; report latency percentiles", func(o *options) {
			o.rate, o.batch, o.concurrency, o.warmup = 1000, 1, 50, 2*time.Second
		}, func(r *runner, ctx context.Context) (*report.Report, error) { return r.steady(ctx, "latency") }},
		{"scale", "Burn down with K separate worker processes for each K of --processes", func(o *options) {
			o.processes, o.jobs, o.concurrency, o.floor = []int{1, 2, 4, 8}, 0, 50, true
		}, func(r *runner, ctx context.Context) (*report.Report, error) { return r.scale(ctx) }},
		{"streams", "Sweep S producer and S consumer streams over --streams", func(o *options) {
			o.batch, o.concurrency = 1, 10
		}, func(r *runner, ctx context.Context) (*report.Report, error) { return r.streams(ctx) }},
		{"runs", "Insert a batch of --jobs simulation runs with results, work it with each K of --processes, check every result", func(o *options) {
			o.jobs, o.processes, o.concurrency = 500_000, []int{1, 3}, 1000
		}, func(r *runner, ctx context.Context) (*report.Report, error) { return r.runs(ctx) }},
		{"dag", "Work off N workflows of --steps noop steps for each N of --instances; report actions/s per N", func(o *options) {
			o.instances, o.steps, o.concurrency = []int{1000, 10_000, 50_000, 500_000}, 3, 1000
		}, func(r *runner, ctx context.Context) (*report.Report, error) { return r.dag(ctx) }},
		{"keyed", "Burn down --jobs jobs spread over --keys ordering keys (at most --key-limit of a key at once); verify order and limits from the store", func(o *options) {
			o.jobs, o.concurrency, o.keys, o.keyLimit = 100_000, 1000, 1000, 1
		}, func(r *runner, ctx context.Context) (*report.Report, error) { return r.keyed(ctx) }},
		{"chaos", "Run a steady load on worker processes, inject --fault, and prove nothing was lost", func(o *options) {
			o.duration, o.rate, o.batch, o.concurrency, o.lease = 30*time.Second, 2000, 10, 50, 5*time.Second
			o.work, o.processes, o.fault = 5*time.Millisecond, []int{2}, "kill-worker"
		}, func(r *runner, ctx context.Context) (*report.Report, error) { return r.chaos(ctx, r.opts.fault) }},
	}
	for _, sc := range scenarios {
		o := options{
			queue: "bench", via: viaClient, jobs: 200_000, duration: 10 * time.Second, producers: 4, batch: 100,
			concurrency: 200, window: 2 * time.Second, lease: 30 * time.Second, progress: 2 * time.Second, clients: 1,
			streams: []int{4, 8, 16, 64},
		}
		sc.defaults(&o)
		var (
			processes, streams, priorityMix string
			instances                       string
			jsonPath, plotPath, cpuProfile  string
			memProfile                      string
			markdown, keep                  bool
		)
		sub := &cobra.Command{
			Use:   sc.name,
			Short: sc.short,
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				var err error
				if processes != "" {
					if o.processes, err = parseInts("--processes", processes, 0); err != nil {
						return err
					}
				}
				if o.streams, err = parseInts("--streams", streams, 1); err != nil {
					return err
				}
				if instances != "" {
					if o.instances, err = parseCounts("--instances", instances); err != nil {
						return err
					}
				}
				if priorityMix != "" {
					if o.priorityMix, err = parseInts("--priority-mix", priorityMix, -32768); err != nil {
						return err
					}
				}
				if !cmd.Flags().Changed("warmup") {
					// The default warm-up leaves most of a short point.
					o.warmup = min(o.warmup, o.duration/5)
				}
				if err := o.validate(sc.name); err != nil {
					return err
				}
				if err := o.checkSDK(cmd.Context()); err != nil {
					return err
				}
				if err := checkOutputPaths([2]string{"--json", jsonPath}, [2]string{"--plot", plotPath},
					[2]string{"--cpuprofile", cpuProfile}, [2]string{"--memprofile", memProfile}); err != nil {
					return err
				}
				stop, err := startProfiles(cpuProfile, memProfile, cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				defer stop()
				e := env()
				if len(e.DatabaseURLs) > 1 && sc.name == "burndown" {
					if err := o.onFleet(cmd.Flags().Changed("floor")); err != nil {
						return err
					}
					if o.floor {
						o.floor = false
						fmt.Fprintln(e.Stderr, "bench: on a fleet, the store ceiling and the raw SQL floor (one database's) are not measured")
					}
					e.fleetOK = true
				}
				if sc.name == "chaos" && o.fault == "failover" {
					set, err := startHASet(cmd.Context(), &e)
					if err != nil {
						return err
					}
					defer func() {
						if serr := set.Stop(); serr != nil {
							fmt.Fprintf(e.Stderr, "bench: stopping the pg_auto_failover set: %v\n", serr)
						}
					}()
					o.ha = set
				}
				return run(cmd.Context(), e, o, sc.name, func(r *runner, ctx context.Context) (*report.Report, error) {
					return sc.run(r, ctx)
				}, jsonPath, plotPath, markdown, keep)
			},
		}
		f := sub.Flags()
		f.StringVar(&o.queue, "queue", o.queue, "queue name prefix (each run gets a fresh queue under it)")
		f.IntVar(&o.jobs, "jobs", o.jobs, "jobs per burndown (scale: per point; 0 sizes points to --duration)")
		f.DurationVar(&o.duration, "duration", o.duration, "how long steady, latency and streams points run (scale: target length of a point)")
		f.Float64Var(&o.rate, "rate", o.rate, "jobs inserted per second in total (0: as fast as possible)")
		f.IntVar(&o.producers, "producers", o.producers, "producer goroutines (steady, latency)")
		f.IntVar(&o.batch, "batch", o.batch, "jobs per insert call of a producer")
		f.IntVar(&o.concurrency, "concurrency", o.concurrency, "jobs run at once per worker client or process")
		f.IntVar(&o.claimMax, "claim-max", o.claimMax, "cap on jobs per claim statement (0: default)")
		f.BoolVar(&o.deleteCompleted, "delete-completed", o.deleteCompleted, "workers delete plain jobs as they complete (Config.DeleteCompleted); the store check then counts a job it no longer finds as completed")
		f.IntVar(&o.globalLimit, "global-limit", o.globalLimit, "cap on the queue's running jobs across every worker (QueueConfig.GlobalMaxWorkers; 0: none)")
		def := ""
		if len(o.processes) > 0 {
			def = joinInts(o.processes)
		}
		f.StringVar(&processes, "processes", def, "worker processes: a list for scale (1,2,4,8); one number elsewhere (0 or empty: workers in the bench process; for streams, any other number runs each stream's consumer as a process)")
		f.StringVar(&streams, "streams", joinInts(o.streams), "stream counts to sweep (streams)")
		if sc.name == "scale" || sc.name == "streams" {
			f.IntVar(&o.rounds, "rounds", 1, "run the whole sweep this many times in turn and report each point's median round, with every round's rate")
		}
		f.DurationVar(&o.work, "work", o.work, "each job sleeps this long (I/O-bound work; 0: noop)")
		f.DurationVar(&o.cpu, "cpu", o.cpu, "each job spins the CPU this long")
		f.IntVar(&o.payloadBytes, "payload-bytes", o.payloadBytes, "pad each job's args to about this many bytes")
		f.StringVar(&priorityMix, "priority-mix", "", "priorities to cycle through, e.g. 0,0,0,1")
		f.DurationVar(&o.window, "window", o.window, "length of a measurement window (2s-10s)")
		f.DurationVar(&o.lease, "lease", o.lease, "lease of claimed jobs")
		if sc.name != "streams" {
			f.BoolVar(&o.remote, "remote", false, "put worker processes behind a TCP proxy (Toxiproxy) to the database, as on other hosts")
			f.DurationVar(&o.latency, "latency", 0, "round-trip latency the proxy adds between worker processes and the database (implies --remote; ms resolution)")
			f.BoolVar(&o.netns, "netns", false, "also run worker processes in a network namespace of their own, reaching the proxy over a veth pair (implies --remote; needs root)")
		}
		if sc.name == "steady" {
			f.DurationVar(&o.healthEvery, "health-every", 0, "sample the hot table's size and dead tuples this often (PostgreSQL; 0: off)")
		}
		if sc.name == "steady" || sc.name == "latency" {
			f.DurationVar(&o.warmup, "warmup", o.warmup, "start latencies of jobs started in the first this long are reported apart (warmup_start_latency_ms), not in start_latency_ms (latency: 2s, or a fifth of --duration when shorter)")
		}
		if sc.name == "dag" {
			f.StringVar(&instances, "instances", joinInts(o.instances), "workflow counts N to sweep")
			f.IntVar(&o.steps, "steps", o.steps, "steps of each workflow (a chain)")
		}
		if sc.name == "burndown" || sc.name == "steady" || sc.name == "latency" {
			f.StringVar(&o.via, "via", o.via, "how workers reach the store: client (a Go client), http (drover serve's API on loopback), python or typescript (SDK worker processes through that API, --processes of them, default 1; a burndown also works the same backlog with an in-process Go client for comparison)")
			f.StringVar(&o.python, "python", "", "the Python that runs --via python workers, with the SDK installed (pip install ./sdk/python; default $"+pythonEnv+", else python3)")
			f.StringVar(&o.node, "node", "", "the node that runs --via typescript workers (default $"+nodeEnv+", else node)")
			f.StringVar(&o.nodeProject, "node-project", "", "a directory where `npm install ./sdk/typescript` was run, which --via typescript workers import the SDK from (default $"+nodeProjEnv+", else the current directory)")
		}
		if sc.name == "burndown" || sc.name == "steady" {
			f.IntVar(&o.clients, "clients", o.clients, "worker clients in the bench process (without --processes), each of --concurrency")
			f.IntVar(&o.workerTypes, "worker-types", 0, "route the jobs over this many worker types in turn, client i being of type i mod N (0: plain jobs; see docs/routing.md)")
		}
		if sc.name == "keyed" {
			f.IntVar(&o.keys, "keys", o.keys, "ordering keys the jobs are spread over, round robin")
			f.IntVar(&o.keyLimit, "key-limit", o.keyLimit, "jobs of one key active at once (1: strict FIFO per key)")
		}
		if sc.name == "chaos" {
			f.StringVar(&o.fault, "fault", o.fault, "fault to inject: "+faultNames())
			f.StringVar(&o.pgData, "pg-data", "", "data directory of the local PostgreSQL server (pg-restart)")
		}
		f.BoolVar(&o.floor, "floor", o.floor, "also measure the store ceiling (Drover's claim and finish statements with no handlers, 4 clients) and, on PostgreSQL, the raw SQL floor (claim 500 with SKIP LOCKED and delete, 4 clients; for scale also with K clients at each K), and report Drover against both")
		f.StringVar(&jsonPath, "json", "", "write the machine-readable report to this file")
		f.StringVar(&plotPath, "plot", "", "draw the run to this .svg file (throughput and efficiency against K, or rate and p99 over time)")
		f.BoolVar(&markdown, "markdown", false, "print a section ready to paste into docs/benchmarks.md")
		f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the bench process to this file (go tool pprof)")
		f.StringVar(&memProfile, "memprofile", "", "write a profile of the bench process's allocations to this file at the end (go tool pprof -sample_index=alloc_space)")
		f.BoolVar(&keep, "keep", false, "keep the bench's own schema (or ./"+benchFile+") after the run, to inspect its jobs")
		cmd.AddCommand(sub)
	}
	cmd.AddCommand(newFanoutCommand(env)) // topics: fanout.go
	cmd.AddCommand(newAssignCommand(env)) // routing: assign.go
	cmd.AddCommand(newSweepCommand(env))  // cost curves: sweep.go
	cmd.AddCommand(newFanoutConsumerCommand(env))
	cmd.AddCommand(newShardsCommand(env)) // a fleet of local PostgreSQL shards: shards.go
	return cmd
}

// writeAllocs writes the allocation profile (every allocation since the
// start, live or not) to path.
func writeAllocs(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// onFleet checks that a burndown on a fleet asks for nothing that needs
// one database: its workers are clients of the fleet in the bench
// process, and the references (the ceiling, the raw SQL floor) and the
// network hops are one server's. floorSet says whether --floor was
// asked for rather than left at its default.
func (o *options) onFleet(floorSet bool) error {
	switch {
	case o.fleetSize() > 0:
		return usagef("--processes: a burndown on a fleet runs its workers in the bench process (worker processes take one database)")
	case o.via != viaClient:
		return usagef("--via %s: a burndown on a fleet runs Go clients (drover serve's workers would take one database)", o.via)
	case o.remote || o.netns || o.latency > 0:
		return usagef("--remote, --latency and --netns: a burndown on a fleet runs its workers in the bench process, with no hop to add")
	case floorSet && o.floor:
		return usagef("--floor: the store ceiling and the raw SQL floor are one database's; measure them against one shard")
	}
	return nil
}

func (o *options) validate(scenario string) error {
	switch {
	case o.jobs < 0:
		return usagef("--jobs %d: must not be negative", o.jobs)
	case o.jobs == 0 && scenario == "burndown":
		return usagef("--jobs 0: a burndown needs jobs")
	case o.duration <= 0:
		return usagef("--duration %s: must be positive", o.duration)
	case o.warmup < 0 || o.warmup >= o.duration:
		return usagef("--warmup %s: must be at least 0 and shorter than --duration %s", o.warmup, o.duration)
	case o.rate < 0:
		return usagef("--rate %g: must not be negative", o.rate)
	case o.producers < 1:
		return usagef("--producers %d: must be at least 1", o.producers)
	case o.batch < 1 || o.batch > 100_000:
		return usagef("--batch %d: must be between 1 and 100000", o.batch)
	case o.concurrency < 1 || o.concurrency > 100_000:
		return usagef("--concurrency %d: must be between 1 and 100000", o.concurrency)
	case o.work < 0 || o.cpu < 0:
		return usagef("--work and --cpu must not be negative")
	case o.payloadBytes < 0 || o.payloadBytes > 1<<20:
		return usagef("--payload-bytes %d: must be between 0 and 1048576", o.payloadBytes)
	case o.window < 2*time.Second || o.window > 10*time.Second:
		return usagef("--window %s: must be between 2s and 10s", o.window)
	case o.globalLimit < 0:
		return usagef("--global-limit %d: must not be negative", o.globalLimit)
	case o.clients < 1 || o.clients > 1024:
		return usagef("--clients %d: must be between 1 and 1024", o.clients)
	case o.workerTypes < 0 || o.workerTypes > o.clients:
		return usagef("--worker-types %d: must be between 0 and --clients (%d): every type needs a client", o.workerTypes, o.clients)
	case o.workerTypes > 0 && (o.via != viaClient || o.fleetSize() > 0):
		return usagef("--worker-types: the routed workers are clients in the bench process (no --via, no --processes)")
	case o.deleteCompleted && (scenario == "chaos" || scenario == "keyed"):
		return usagef("--delete-completed: %s checks every job's history, which deleted jobs no longer have", scenario)
	case o.lease < time.Second:
		return usagef("--lease %s: must be at least 1s", o.lease)
	case (scenario == "scale" || scenario == "streams") && (o.rounds < 1 || o.rounds > 20):
		return usagef("--rounds %d: must be between 1 and 20", o.rounds)
	case scenario == "scale" && len(o.processes) == 0:
		return usagef("--processes: scale needs at least one process count")
	case scenario == "dag" && (o.steps < 1 || o.steps > 100):
		return usagef("--steps %d: must be between 1 and 100", o.steps)
	case scenario == "runs" && (o.jobs < 1 || len(o.processes) == 0):
		return usagef("runs needs --jobs and at least one count in --processes")
	case scenario != "scale" && scenario != "runs" && len(o.processes) > 1:
		return usagef("--processes: only scale takes a list")
	case o.latency < 0 || o.latency > 10*time.Second:
		return usagef("--latency %s: must be between 0 and 10s", o.latency)
	case (o.remote || o.netns || o.latency > 0) && len(o.processes) == 0:
		return usagef("--remote, --latency and --netns apply to worker processes: give --processes")
	case scenario == "chaos" && faults[o.fault] == "":
		return usagef("--fault %q: must be one of %s", o.fault, faultNames())
	case o.via != viaClient && o.via != viaHTTP && o.via != viaPython && o.via != viaTypeScript:
		return usagef("--via %q: use client, http, python or typescript", o.via)
	case o.via == viaHTTP && len(o.processes) > 0 && o.processes[0] > 0:
		return usagef("--via %s starts its own workers: leave --processes out", o.via)
	case o.via != viaClient && (o.remote || o.netns || o.latency > 0):
		return usagef("--via %s: its workers talk to drover serve's API, not to the store: leave --remote, --latency and --netns out", o.via)
	case scenario == "keyed" && (o.keys < 1 || o.keys > 1_000_000):
		return usagef("--keys %d: must be between 1 and 1000000", o.keys)
	case scenario == "keyed" && (o.keyLimit < 1 || o.keyLimit > drover.MaxKeyLimit):
		return usagef("--key-limit %d: must be between 1 and %d", o.keyLimit, drover.MaxKeyLimit)
	}
	return nil
}

// checkSDK makes sure the SDK a --via python or typescript run needs is
// installed where the flags say, before any job is inserted, and fills in
// what runs its workers.
func (o *options) checkSDK(ctx context.Context) error {
	switch o.via {
	case viaPython:
		o.python = pythonFrom(o.python)
		return checkPython(ctx, o.python)
	case viaTypeScript:
		o.node, o.nodeProject = nodeFrom(o.node, o.nodeProject)
		var err error
		o.nodeModule, err = checkNode(ctx, o.node, o.nodeProject)
		return err
	}
	return nil
}

func parseInts(flag, s string, minimum int) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		n, err := strconv.Atoi(part)
		if err != nil {
			return nil, usagef("%s: %q is not a whole number", flag, part)
		}
		if n < minimum || n > 1024 && flag != "--priority-mix" || n > 32767 {
			return nil, usagef("%s: %d is out of range", flag, n)
		}
		out = append(out, n)
	}
	return out, nil
}

// parseCounts parses a list of positive counts too large for parseInts
// (workflow instances).
func parseCounts(flag, s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		n, err := strconv.Atoi(part)
		if err != nil || n < 1 || n > 10_000_000 {
			return nil, usagef("%s: %q is not a count between 1 and 10000000", flag, part)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, usagef("%s: no counts", flag)
	}
	return out, nil
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// Where the bench writes unless told otherwise: its own schema, so that
// it never mixes its jobs (hundreds of thousands, and workers that claim
// them) with an application's, and on the embedded store its own file.
const (
	benchSchema = "drover_bench"
	benchFile   = "drover-bench.db"
)

// benchTarget is where a bench run writes and what it owns there.
type benchTarget struct {
	storeurl.Target
	schema string
	// ownFile is set when the store is the bench's own SQLite file, which
	// it removes at the end; ownSchema when the schema is the bench's own,
	// which it drops. A schema or file the user named is left alone.
	ownFile, ownSchema bool
}

// resolveTarget applies the bench's defaults to the user's store and
// schema, and rewrites env so that worker processes find the same ones.
func resolveTarget(env *Env) (benchTarget, error) {
	target, err := env.target()
	if err != nil {
		return benchTarget{}, err
	}
	bt := benchTarget{Target: target, schema: env.Schema}
	if !env.SchemaSet {
		bt.schema, bt.ownSchema = benchSchema, true
	}
	if target.Default {
		bt.URL, bt.Default, bt.ownFile = benchFile, false, true
		env.DatabaseURL = "sqlite:" + benchFile
	}
	env.Schema = bt.schema
	return bt, nil
}

// describe says where the bench writes and what becomes of it.
func (bt benchTarget) describe(keep bool) string {
	var where, what string
	switch {
	case bt.ownFile:
		where, what = fmt.Sprintf("the SQLite file ./%s (tables %s_*)", bt.URL, bt.schema), "removed"
	case bt.Kind == storeurl.SQLite:
		where, what = fmt.Sprintf("the tables %s_* of the SQLite file %s", bt.schema, bt.URL), "dropped"
	case len(bt.Shards) > 1:
		where, what = fmt.Sprintf("the schema %q of each of the %d shards of a fleet (shard 0: %s)", bt.schema, len(bt.Shards), bt.Redacted()), "dropped"
	default:
		where, what = fmt.Sprintf("the schema %q of %s", bt.schema, bt.Redacted()), "dropped"
	}
	switch {
	case !bt.ownFile && !bt.ownSchema:
		return "bench: writing to " + where + "; it is yours (--schema), so it stays"
	case keep:
		return "bench: writing to " + where + "; --keep: it stays after the run"
	}
	return "bench: writing to " + where + "; " + what + " when the bench ends (--keep keeps it)"
}

// cleanup removes what the bench owns after the store is closed. It runs
// on every way out, an interrupted run included, under a context of its
// own: the run's is cancelled by then.
func (bt benchTarget) cleanup(ctx context.Context, store *storeurl.Store, keep bool, stderr io.Writer) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	var err error
	if bt.ownSchema && !bt.ownFile && !keep {
		err = store.DropSchema(ctx)
	}
	store.Close()
	if bt.ownFile && !keep {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			if rerr := os.Remove(bt.URL + suffix); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
				err = rerr
			}
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench: cleaning up %s: %v\n", bt.URL, err)
	}
}

// checkOutputPath fails unless a file can be written at path: its
// directory exists and takes new files, and path is not a directory.
// checkOutputPaths checks the output paths of a run ({flag, path}), before any
// work, so that a typo does not cost a run of many minutes.
func checkOutputPaths(paths ...[2]string) error {
	for _, p := range paths {
		if err := checkOutputPath(p[0], p[1]); err != nil {
			return err
		}
	}
	return nil
}

// startProfiles starts the CPU profile a run asked for and arranges the
// allocation profile; stop ends both and writes them. An empty path asks
// for none.
func startProfiles(cpuProfile, memProfile string, stderr io.Writer) (stop func(), err error) {
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, err
		}
		stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
	}
	if memProfile != "" {
		// Every allocation is sampled once per 64 KiB instead of 512 KiB,
		// so that a run's allocations per job can be read from the
		// profile with some precision.
		runtime.MemProfileRate = 64 << 10
		stops = append(stops, func() {
			if err := writeAllocs(memProfile); err != nil {
				fmt.Fprintf(stderr, "bench: --memprofile: %v\n", err)
			}
		})
	}
	return stop, nil
}

func checkOutputPath(flag, path string) error {
	if path == "" {
		return nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return usagef("%s %s: is a directory", flag, path)
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return usagef("%s %s: directory %s does not exist", flag, path, dir)
	case err != nil:
		return usagef("%s %s: %v", flag, path, err)
	case !st.IsDir():
		return usagef("%s %s: %s is not a directory", flag, path, dir)
	}
	f, err := os.CreateTemp(dir, ".drover-bench-check-*")
	if err != nil {
		return usagef("%s %s: directory %s is not writable", flag, path, dir)
	}
	f.Close()
	return os.Remove(f.Name())
}

// run opens the store, runs one scenario and writes its outputs.
func run(ctx context.Context, env Env, o options, scenario string,
	fn func(*runner, context.Context) (*report.Report, error), jsonPath, plotPath string, markdown, keep bool) error {
	r, target, done, err := openRunner(ctx, env, o, keep)
	if err != nil {
		return err
	}
	defer done()
	env = r.env
	rep, err := fn(r, ctx)
	if rep == nil {
		return err
	}
	if err == nil {
		err = r.references(ctx, rep)
	}
	if rep.Cost.Measured() || slices.ContainsFunc(rep.Points, func(p report.Point) bool { return p.Cost.Measured() }) {
		rep.Notes = append(rep.Notes, r.cost.notes...)
	}
	if o.ha != nil {
		// The bench ran on a set it started: the command alone repeats
		// the run, and the set's URL is gone with it.
		target = storeurl.Target{}
	}
	rep.Command = commandLine(target)
	fmt.Fprintln(env.Stdout)
	report.WriteTable(env.Stdout, rep)
	if markdown {
		fmt.Fprintln(env.Stdout)
		fmt.Fprint(env.Stdout, report.Markdown(rep))
	}
	if jsonPath != "" {
		if werr := report.WriteJSON(jsonPath, rep); werr != nil {
			return werr
		}
	}
	if plotPath != "" {
		if werr := report.WriteSVG(plotPath, rep); werr != nil {
			return werr
		}
	}
	return err
}

// openRunner opens the store env names (the bench's own unless told
// otherwise) and returns a runner on it, the store's target, and done,
// which closes what the runner holds and removes what the bench made
// (unless keep). On error nothing is left open.
func openRunner(ctx context.Context, env Env, o options, keep bool) (r *runner, target storeurl.Target, done func(), err error) {
	bt, err := resolveTarget(&env)
	if err != nil {
		return nil, target, nil, err
	}
	target = bt.Target
	// Progress lines, fault notices and the worker processes' stderr are
	// written from several goroutines: one lock keeps lines whole.
	var mu sync.Mutex
	env.Stdout = &lockedWriter{mu: &mu, w: env.Stdout}
	env.Stderr = &lockedWriter{mu: &mu, w: env.Stderr}
	maxConns := 0
	if target.Kind == storeurl.Postgres {
		// Producers and consumers share one pool (and one listening
		// connection outside it). Sized so that the streams sweep's 64
		// clients each find a connection for a claim, within a default
		// max_connections of 100.
		maxConns = max(8, o.producers+4, maxOf(o.streams)+8)
	}
	fmt.Fprintln(env.Stderr, bt.describe(keep))
	store, err := storeurl.Open(ctx, target, storeurl.Options{Schema: env.Schema, AutoMigrate: true, MaxConns: maxConns,
		Logf: func(f string, a ...any) { fmt.Fprintf(env.Stderr, f+"\n", a...) }})
	if err != nil {
		return nil, target, nil, err
	}
	var closers []func()
	done = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	closers = append(closers, func() { bt.cleanup(ctx, store, keep, env.Stderr) })
	inserts, err := storeurl.NewClient[inserter](store, &drover.Config{Logger: discardLogger()})
	if err != nil {
		done()
		return nil, target, nil, err
	}
	id := make([]byte, 3)
	_, _ = rand.Read(id)
	r = &runner{env: env, opts: o, store: store, inserts: inserts, out: env.Stdout,
		payload: strings.Repeat("x", o.payloadBytes), runID: hex.EncodeToString(id)}
	r.cost = newCostMeter(ctx, target)
	closers = append(closers, r.cost.close)
	if o.remote || o.netns || o.latency > 0 {
		if target.Kind != storeurl.Postgres {
			done()
			return nil, target, nil, usagef("--remote, --latency and --netns need PostgreSQL: SQLite workers share a file, not a network")
		}
		ns := ""
		if o.netns {
			ns = "drover-bench-" + r.runID
		}
		if r.remote, err = startRemote(ctx, target.URL, o.latency, ns); err != nil {
			done()
			return nil, target, nil, err
		}
		closers = append(closers, r.remote.close)
	}
	return r, target, done, nil
}

func maxOf(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// commandLine reproduces the command as run, with the binary called drover
// and any password in a URL flag hidden.
func commandLine(t storeurl.Target) string {
	args := append([]string{"drover"}, os.Args[1:]...)
	if base := filepath.Base(os.Args[0]); base != "drover" && !strings.HasSuffix(base, ".test") {
		args[0] = "drover"
	}
	for i, a := range args {
		if strings.Contains(a, "://") {
			args[i] = storeurl.Redact(a)
		}
	}
	line := strings.Join(args, " ")
	switch {
	case strings.Contains(line, "--database-url"):
	case len(t.Shards) > 1:
		shards := make([]string, len(t.Shards))
		for i, raw := range t.Shards {
			shards[i] = storeurl.Redact(raw)
		}
		line = "DROVER_DATABASE_URLS='" + strings.Join(shards, " ") + "' " + line
	case t.Kind == storeurl.Postgres:
		line = "DATABASE_URL=" + t.Redacted() + " " + line
	}
	return line
}

// usagef builds a usage error: the CLI exits 2 for it and prints only the
// message.
func usagef(format string, a ...any) error {
	return fmt.Errorf("%w: %s", drover.ErrInvalid, fmt.Sprintf(format, a...))
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
