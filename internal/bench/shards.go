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
	"github.com/droverhq/drover/internal/cgroup"
	"github.com/droverhq/drover/internal/pgcluster"
	"github.com/droverhq/drover/internal/storeurl"
)

// shardsReport is what `drover bench shards --json` writes: one point per
// fleet size, each burned down on that many local PostgreSQL clusters
// held to the same CPU share.
type shardsReport struct {
	Scenario string        `json:"scenario"`
	StoreCPU float64       `json:"store_cpu"`
	Jobs     int           `json:"jobs"`
	Points   []shardsPoint `json:"points"`
	Command  string        `json:"command"`
	Notes    []string      `json:"notes"`
}

// shardsPoint is one fleet size.
type shardsPoint struct {
	Shards     int     `json:"shards"`
	JobsPerSec float64 `json:"jobs_per_sec"`
	// Efficiency is rate(N) / (N × rate(1)): 1 when every shard adds a
	// whole shard's rate.
	Efficiency float64 `json:"efficiency"`
	// StoreCPUUsPerJob is, per shard, the CPU its server's cgroup used
	// per job the fleet ran.
	StoreCPUUsPerJob []float64 `json:"store_cpu_us_per_job"`
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
		shards, scenario, jsonPath string
		share                      float64
		o                          = options{queue: "bench", jobs: 200_000, producers: 4, batch: 100, concurrency: 1000,
			window: 2 * time.Second, lease: 30 * time.Second, progress: 2 * time.Second, clients: 1}
	)
	cmd := &cobra.Command{
		Use:   "shards",
		Short: "Burn down noop jobs on fleets of 1, 2, 3… local PostgreSQL shards, each held to --store-cpu of a CPU",
		Long: `shards starts one throwaway PostgreSQL cluster per shard on this machine, each in a
cgroup that holds it to --store-cpu of one CPU (cgroup v2 cpu.max or v1 CFS quota), so that
every shard behaves like a server of its own, and burns down --jobs noop jobs on a fleet of
each size of --shards. It reports the rate per size, its efficiency (rate(N) / (N × rate(1))),
each shard's CPU per job, and lost and duplicated jobs. It needs root (or a delegated cgroup)
and the PostgreSQL server binaries; it never touches --database-url.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sizes, err := parseInts("--shards", shards, 1)
			if err != nil {
				return err
			}
			slices.Sort(sizes)
			sizes = slices.Compact(sizes)
			if scenario != "burndown" {
				return usagef("--scenario %s: only burndown is built (topics are not spread over shards yet)", scenario)
			}
			if err := checkOutputPaths([2]string{"--json", jsonPath}); err != nil {
				return err
			}
			e := env()
			if e.DatabaseURL != "" {
				return usagef("bench shards starts its own clusters on this machine: leave --database-url and DATABASE_URL out")
			}
			rep, err := runShards(cmd.Context(), e, o, sizes, share)
			if rep == nil {
				return err
			}
			rep.Command = "drover bench shards --shards " + joinInts(sizes) + fmt.Sprintf(" --store-cpu %g --jobs %d", share, o.jobs)
			for _, p := range rep.Points {
				fmt.Fprintf(e.Stdout, "shards %d: %.0f jobs/s, efficiency %.2f, store CPU µs/job per shard %v, lost %d, duplicates %d\n",
					p.Shards, p.JobsPerSec, p.Efficiency, roundAll(p.StoreCPUUsPerJob), p.Lost, p.Duplicates)
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
	f.Float64Var(&share, "store-cpu", 0.4, "CPU share of each shard's server, in CPUs")
	f.StringVar(&scenario, "scenario", "burndown", "what to run on each fleet: burndown (noop jobs)")
	f.IntVar(&o.jobs, "jobs", o.jobs, "jobs per burndown")
	f.IntVar(&o.concurrency, "concurrency", o.concurrency, "jobs run at once by the bench's worker client")
	f.StringVar(&jsonPath, "json", "", "write the machine-readable report to this file")
	return cmd
}

func roundAll(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(int(x*10+0.5)) / 10
	}
	return out
}

// runShards measures each fleet size in turn, each on clusters of its own.
func runShards(ctx context.Context, env Env, o options, sizes []int, share float64) (*shardsReport, error) {
	rep := &shardsReport{Scenario: "burndown", StoreCPU: share, Jobs: o.jobs,
		Notes: []string{"each shard is a local PostgreSQL cluster (fsync off) in a cgroup of its own, held to store_cpu of one CPU; the bench's worker client runs unconstrained on the same machine"}}
	var base float64
	for _, n := range sizes {
		p, err := shardsPointOf(ctx, env, o, n, share)
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
			return rep, fmt.Errorf("%w: %d jobs on %d shards", errLost, p.Lost, n)
		}
	}
	if sizes[0] != 1 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("efficiency is against %d shards' rate per shard: 1 was not measured", sizes[0]))
	}
	return rep, nil
}

// shardsPointOf starts n clusters, burns the jobs down on their fleet and
// stops them.
func shardsPointOf(ctx context.Context, env Env, o options, n int, share float64) (p shardsPoint, err error) {
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
	fmt.Fprintf(env.Stderr, "bench: starting %d PostgreSQL cluster(s), each held to %g CPU\n", n, share)
	for i := range n {
		g, gerr := cgroup.NewCPU(fmt.Sprintf("bench-shard-%s-%d", runID, i), share)
		if gerr != nil {
			return p, fmt.Errorf("bench shards: holding each shard to --store-cpu %g needs a writable cgroup cpu controller (v2 cpu.max or v1 CFS quota; run as root or in a delegated group): %w", share, gerr)
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
	inserts, err := storeurl.NewClient[inserter](store, &drover.Config{Logger: discardLogger()})
	if err != nil {
		return p, err
	}
	r := &runner{env: env, opts: o, store: store, inserts: inserts, out: env.Stdout, runID: runID}
	r.cost = newCostMeter(ctx, storeurl.Target{}) // per shard from the cgroups instead
	defer r.cost.close()
	before := make([]cgroup.Stat, n)
	for i, g := range groups {
		if before[i], err = g.Stat(); err != nil {
			return p, err
		}
	}
	pt, err := r.burnPoint(ctx, r.queueName(""), 0, o.jobs, fmt.Sprintf("%d shards", n))
	if err != nil {
		return p, err
	}
	p.JobsPerSec, p.Lost, p.Duplicates, p.Seconds = pt.JobsPerSec, pt.Lost, pt.Duplicates, pt.Seconds
	for i, g := range groups {
		after, serr := g.Stat()
		if serr != nil {
			return p, serr
		}
		used := after.Usage - before[i].Usage
		p.StoreCPUUsPerJob = append(p.StoreCPUUsPerJob, float64(used.Microseconds())/float64(max(pt.Jobs, 1)))
		if periods := after.Periods - before[i].Periods; periods > 0 {
			p.Throttled = append(p.Throttled, float64(after.Throttled-before[i].Throttled)/float64(periods))
		} else {
			p.Throttled = append(p.Throttled, 0)
		}
	}
	return p, nil
}
