package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/app/storeurl"
	"github.com/droverhq/drover/internal/testkit/cgroup"
	"github.com/droverhq/drover/internal/testkit/pgcluster"
)

// shardsReport is what `drover bench shards --json` writes: one point per
// fleet size, each run on that many local PostgreSQL clusters held to the
// same CPU share: a burndown of noop jobs, or a fanout of a backlog of
// topic messages.
type shardsReport struct {
	Scenario string  `json:"scenario"`
	StoreCPU float64 `json:"store_cpu"`
	// Jobs is the burndown's jobs per point, or the fanout's deliveries
	// (messages × subscriptions).
	Jobs    int           `json:"jobs"`
	Points  []shardsPoint `json:"points"`
	Command string        `json:"command"`
	Notes   []string      `json:"notes"`
}

// shardsPoint is one fleet size. Of a fanout, a job is one delivery (a
// message to one subscription): JobsPerSec is DeliveriesPerSec, and the
// costs are per delivery.
type shardsPoint struct {
	Shards     int     `json:"shards"`
	JobsPerSec float64 `json:"jobs_per_sec"`
	// DeliveriesPerSec is set by a fanout.
	DeliveriesPerSec float64 `json:"deliveries_per_sec,omitempty"`
	// Efficiency is rate(N) / (N × rate(1)): 1 when every shard adds a
	// whole shard's rate.
	Efficiency float64 `json:"efficiency"`
	// StoreCPUUsPerJob is, per shard, the CPU its server's cgroup used
	// per job the fleet ran.
	StoreCPUUsPerJob []float64 `json:"store_cpu_us_per_job"`
	// ClientCPUUsPerJob is the bench process's CPU (its workers or
	// consumers, which run in it) per job, over the measured run.
	ClientCPUUsPerJob *float64 `json:"client_cpu_us_per_job,omitempty"`
	// Throttled is, per shard, the share of its accounting periods in
	// which the server used its whole quota: near 1, the shard was held
	// back by its CPU share, as a store-bound run should be.
	Throttled  []float64 `json:"throttled"`
	Lost       int64     `json:"lost"`
	Duplicates int64     `json:"duplicates"`
	Seconds    float64   `json:"seconds"`
}

// newShardsCommand is `drover bench shards`.
func newShardsCommand(env func() Env) *cobra.Command {
	var (
		shards, jsonPath string
		run              = shardsRun{scenario: "burndown", share: 0.4,
			o: options{queue: "bench", jobs: 200_000, producers: 4, batch: 100, concurrency: 1000,
				window: 2 * time.Second, lease: 30 * time.Second, progress: 2 * time.Second, clients: 1},
			fo: fanoutOptions{messages: 20_000, topics: 24, subscriptions: 20, publishers: 8, batch: 100,
				consumers: 1, batchSize: 500, lanes: 4, lease: 30 * time.Second, inProcess: true, backlog: true}}
	)
	cmd := &cobra.Command{
		Use:   "shards",
		Short: "Burn down noop jobs, or consume a backlog of topic messages, on fleets of 1, 2, 3… local PostgreSQL shards, each held to --store-cpu of a CPU",
		Long: `shards starts one throwaway PostgreSQL cluster per shard on this machine, each in a
cgroup that holds it to --store-cpu of one CPU (cgroup v2 cpu.max or v1 CFS quota), so that
every shard behaves like a server of its own, and runs --scenario on a fleet of each size of
--shards: burndown burns down --jobs noop jobs; fanout publishes --messages over --topics
topics (spread over the shards by name) of --subscriptions subscriptions each, then consumes
that backlog with subscriptions in the bench process (batch acks). It reports the rate per
size (jobs, or deliveries, per second), its efficiency (rate(N) / (N × rate(1))), each shard's
CPU and the bench process's CPU per job (or delivery), and lost and duplicated jobs (or
deliveries). It needs root (or a delegated cgroup) and the PostgreSQL server binaries; it never
touches --database-url.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sizes, err := parseInts("--shards", shards, 1)
			if err != nil {
				return err
			}
			slices.Sort(sizes)
			sizes = slices.Compact(sizes)
			switch run.scenario {
			case "burndown":
				if run.o.jobs < 1 {
					return usagef("--jobs %d: a burndown needs jobs", run.o.jobs)
				}
			case "fanout":
				if fo := run.fo; fo.messages < 1 || fo.topics < 1 || fo.subscriptions < 1 {
					return usagef("--messages, --topics and --subscriptions must be positive")
				}
			default:
				return usagef("--scenario %s: use burndown (noop jobs) or fanout (topics)", run.scenario)
			}
			if err := checkOutputPaths([2]string{"--json", jsonPath}); err != nil {
				return err
			}
			e := env()
			if e.DatabaseURL != "" {
				return usagef("bench shards starts its own clusters on this machine: leave --database-url and DATABASE_URL out")
			}
			rep, err := runShards(cmd.Context(), e, run, sizes)
			if rep == nil {
				return err
			}
			rep.Command = "drover bench shards --shards " + joinInts(sizes) + fmt.Sprintf(" --store-cpu %g --scenario %s", run.share, run.scenario)
			unit, one := "jobs", "job"
			if run.scenario == "fanout" {
				unit, one = "deliveries", "delivery"
				rep.Command += fmt.Sprintf(" --messages %d --topics %d --subscriptions %d", run.fo.messages, run.fo.topics, run.fo.subscriptions)
			} else {
				rep.Command += fmt.Sprintf(" --jobs %d", run.o.jobs)
			}
			for _, p := range rep.Points {
				client := "-"
				if p.ClientCPUUsPerJob != nil {
					client = fmt.Sprintf("%.1f", *p.ClientCPUUsPerJob)
				}
				fmt.Fprintf(e.Stdout, "shards %d: %.0f %s/s, efficiency %.2f, store CPU µs per %s per shard %v, client CPU µs %s, lost %d, duplicates %d\n",
					p.Shards, p.JobsPerSec, unit, p.Efficiency, one, roundAll(p.StoreCPUUsPerJob), client, p.Lost, p.Duplicates)
			}
			if jsonPath != "" {
				b, jerr := json.MarshalIndent(rep, "", "  ")
				if jerr == nil {
					jerr = os.WriteFile(jsonPath, append(b, '\n'), 0o644)
				}
				if jerr != nil {
					return jerr
				}
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&shards, "shards", "1,2,3", "fleet sizes to measure")
	f.Float64Var(&run.share, "store-cpu", run.share, "CPU share of each shard's server, in CPUs")
	f.StringVar(&run.scenario, "scenario", run.scenario, "what to run on each fleet: burndown (noop jobs) or fanout (a backlog of topic messages)")
	f.IntVar(&run.o.jobs, "jobs", run.o.jobs, "burndown: jobs per point")
	f.IntVar(&run.o.concurrency, "concurrency", run.o.concurrency, "burndown: jobs run at once by the bench's worker client")
	f.IntVar(&run.fo.messages, "messages", run.fo.messages, "fanout: messages published per point")
	f.IntVar(&run.fo.topics, "topics", run.fo.topics, "fanout: topics the messages are spread over (the topics spread over the shards by name)")
	f.IntVar(&run.fo.subscriptions, "subscriptions", run.fo.subscriptions, "fanout: subscriptions of each topic")
	f.StringVar(&jsonPath, "json", "", "write the machine-readable report to this file")
	return cmd
}

// shardsRun is what `drover bench shards` runs on each fleet.
type shardsRun struct {
	scenario string
	share    float64
	o        options       // burndown's
	fo       fanoutOptions // fanout's
}

func roundAll(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(int(x*10+0.5)) / 10
	}
	return out
}

// runShards measures each fleet size in turn, each on clusters of its own.
func runShards(ctx context.Context, env Env, run shardsRun, sizes []int) (*shardsReport, error) {
	rep := &shardsReport{Scenario: run.scenario, StoreCPU: run.share, Jobs: run.o.jobs,
		Notes: []string{"each shard is a local PostgreSQL cluster (fsync off) in a cgroup of its own, held to store_cpu of one CPU; the bench's workers run unconstrained in the bench process on the same machine",
			"store_cpu_us_per_job covers the whole point, inserting (or publishing) included; client_cpu_us_per_job the bench process from the workers' start to the last job's end"}}
	if run.scenario == "fanout" {
		rep.Jobs = run.fo.messages * run.fo.subscriptions
		rep.Notes = append(rep.Notes, fmt.Sprintf("fanout: %d messages over %d topics (spread over the shards by name) × %d subscriptions, published as a backlog, then consumed by one client in the bench process with batch acks; a job is one delivery, and jobs_per_sec equals deliveries_per_sec",
			run.fo.messages, run.fo.topics, run.fo.subscriptions))
	}
	var base float64
	for _, n := range sizes {
		p, err := shardsPointOf(ctx, env, run, n)
		if err != nil {
			return rep, err
		}
		if base == 0 && n == sizes[0] {
			base = p.JobsPerSec / float64(n)
		}
		if base > 0 {
			p.Efficiency = p.JobsPerSec / (float64(n) * base)
		}
		rep.Points = append(rep.Points, p)
		if p.Lost != 0 {
			return rep, fmt.Errorf("%w: %d on %d shards", errLost, p.Lost, n)
		}
	}
	if sizes[0] != 1 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("efficiency is against %d shards' rate per shard: 1 was not measured", sizes[0]))
	}
	return rep, nil
}

// shardsPointOf starts n clusters, runs the scenario on their fleet and
// stops them.
func shardsPointOf(ctx context.Context, env Env, run shardsRun, n int) (p shardsPoint, err error) {
	p.Shards = n
	id := make([]byte, 3)
	_, _ = rand.Read(id)
	runID := hex.EncodeToString(id)
	var groups []*cgroup.CPU
	var clusters []*pgcluster.Cluster
	defer func() {
		for _, c := range clusters {
			if serr := c.Stop(); serr != nil && err == nil {
				err = serr
			}
		}
		for _, g := range groups {
			_ = g.Remove()
		}
	}()
	var urls []string
	fmt.Fprintf(env.Stderr, "bench: starting %d PostgreSQL cluster(s), each held to %g CPU\n", n, run.share)
	for i := range n {
		g, gerr := cgroup.NewCPU(fmt.Sprintf("bench-shard-%s-%d", runID, i), run.share)
		if gerr != nil {
			return p, fmt.Errorf("bench shards: holding each shard to --store-cpu %g needs a writable cgroup cpu controller (v2 cpu.max or v1 CFS quota; run as root or in a delegated group): %w", run.share, gerr)
		}
		groups = append(groups, g)
		c, cerr := pgcluster.Start(ctx, pgcluster.Options{CPU: g, Settings: map[string]string{"fsync": "off", "max_connections": "200"}})
		if cerr != nil {
			return p, cerr
		}
		clusters = append(clusters, c)
		urls = append(urls, c.URL())
	}
	target, err := storeurl.ParseAll(urls, "shards")
	if err != nil {
		return p, err
	}
	store, err := storeurl.Open(ctx, target, storeurl.Options{Schema: benchSchema, AutoMigrate: true, MaxConns: 16})
	if err != nil {
		return p, err
	}
	defer store.Close()
	before := make([]cgroup.Stat, n)
	for i, g := range groups {
		if before[i], err = g.Stat(); err != nil {
			return p, err
		}
	}
	var jobs int64
	if run.scenario == "fanout" {
		jobs, err = shardsFanout(ctx, env, run.fo, store, n, &p)
	} else {
		jobs, err = shardsBurn(ctx, env, run.o, store, runID, n, &p)
	}
	if err != nil {
		return p, err
	}
	for i, g := range groups {
		after, serr := g.Stat()
		if serr != nil {
			return p, serr
		}
		used := after.Usage - before[i].Usage
		p.StoreCPUUsPerJob = append(p.StoreCPUUsPerJob, float64(used.Microseconds())/float64(max(jobs, 1)))
		if periods := after.Periods - before[i].Periods; periods > 0 {
			p.Throttled = append(p.Throttled, float64(after.Throttled-before[i].Throttled)/float64(periods))
		} else {
			p.Throttled = append(p.Throttled, 0)
		}
	}
	return p, nil
}

// shardsBurn burns o.jobs noop jobs down on the fleet, its worker client
// in the bench process, into p; it returns the jobs run.
func shardsBurn(ctx context.Context, env Env, o options, store *storeurl.Store, runID string, n int, p *shardsPoint) (int64, error) {
	inserts, err := storeurl.NewClient[inserter](store, &drover.Config{Logger: discardLogger()})
	if err != nil {
		return 0, err
	}
	r := &runner{env: env, opts: o, store: store, inserts: inserts, out: env.Stdout, runID: runID}
	r.cost = newCostMeter(ctx, storeurl.Target{}) // the bench process's; each shard's from its cgroup
	defer r.cost.close()
	pt, err := r.burnPoint(ctx, r.queueName(""), 0, o.jobs, fmt.Sprintf("%d shards", n))
	if err != nil {
		return 0, err
	}
	p.JobsPerSec, p.Lost, p.Duplicates, p.Seconds = pt.JobsPerSec, pt.Lost, pt.Duplicates, pt.Seconds
	p.ClientCPUUsPerJob = pt.Cost.ClientCPUUsPerJob
	return pt.Jobs, nil
}

// shardsFanout publishes a backlog of o.messages over the fleet's topics
// and consumes it with subscriptions of one client in the bench process,
// into p; it returns the deliveries.
func shardsFanout(ctx context.Context, env Env, o fanoutOptions, store *storeurl.Store, n int, p *shardsPoint) (int64, error) {
	pub, err := storeurl.NewClient[topicClient](store, &drover.Config{Logger: discardLogger()})
	if err != nil {
		return 0, err
	}
	meter := newCostMeter(ctx, storeurl.Target{}) // the bench process's; each shard's from its cgroup
	defer meter.close()
	pt, err := fanoutPoint(ctx, env, store, pub, meter, o, 1)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(env.Stdout, "%d shards: %d deliveries in %.1f s (published at %.0f/s first), lost %d, duplicates %d\n",
		n, pt.Deliveries, pt.Seconds, pt.PublishedPerSec, pt.Lost, pt.Duplicates)
	p.JobsPerSec, p.DeliveriesPerSec, p.Lost, p.Duplicates, p.Seconds = pt.DeliveriesPerSec, pt.DeliveriesPerSec, pt.Lost, pt.Duplicates, pt.Seconds
	p.ClientCPUUsPerJob = pt.ClientCPUUsPerDelivery
	return pt.Deliveries, nil
}
