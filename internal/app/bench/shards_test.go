package bench

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/droverhq/drover/internal/testkit/cgroup"
)

// TestShards runs `bench shards` on fleets of one and two local clusters,
// each held to a CPU share, for each scenario, and checks the JSON it
// writes: a point per size with its rate (of jobs, or of deliveries for
// fanout), efficiency, each shard's CPU and the bench process's CPU per
// job, and no job lost or run twice. It needs a writable cgroup cpu
// controller.
func TestShards(t *testing.T) {
	if g, err := cgroup.NewCPU("bench-shards-probe", 0.5); err != nil {
		t.Skipf("no writable cgroup cpu controller: %v", err)
	} else {
		_ = g.Remove()
	}
	for _, c := range []struct {
		scenario string
		args     []string
		jobs     int
	}{
		{"burndown", []string{"--jobs", "3000"}, 3000},
		{"fanout", []string{"--messages", "600", "--topics", "8", "--subscriptions", "5"}, 3000},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "shards.json")
			var out bytes.Buffer
			cmd := newShardsCommand(func() Env {
				return Env{Schema: "drover", Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Stdout: &out, Stderr: io.Discard}
			})
			cmd.SetArgs(append([]string{"--scenario", c.scenario, "--shards", "2,1", "--store-cpu", "0.5", "--json", path}, c.args...))
			if err := cmd.Execute(); err != nil {
				t.Fatalf("bench shards: %v\n%s", err, out.String())
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var rep shardsReport
			if err := json.Unmarshal(b, &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Scenario != c.scenario || rep.Jobs != c.jobs || len(rep.Points) != 2 || rep.Points[0].Shards != 1 || rep.Points[1].Shards != 2 {
				t.Fatalf("report %+v, want %s of %d jobs on 1 and 2 shards in order", rep, c.scenario, c.jobs)
			}
			for _, p := range rep.Points {
				if p.JobsPerSec <= 0 || p.Efficiency <= 0 || len(p.StoreCPUUsPerJob) != p.Shards || p.Lost != 0 || p.Duplicates != 0 ||
					p.ClientCPUUsPerJob == nil || *p.ClientCPUUsPerJob <= 0 {
					t.Errorf("point %+v: want a rate, an efficiency, a CPU figure per shard and the client's, nothing lost or run twice", p)
				}
				if (c.scenario == "fanout") != (p.DeliveriesPerSec == p.JobsPerSec) {
					t.Errorf("%s point: deliveries/s %g, jobs/s %g; want deliveries/s only of a fanout, equal to its jobs/s", c.scenario, p.DeliveriesPerSec, p.JobsPerSec)
				}
				for i, us := range p.StoreCPUUsPerJob {
					if us <= 0 {
						t.Errorf("%d shards: shard %d used no CPU", p.Shards, i)
					}
				}
			}
			if rep.Points[0].Efficiency != 1 || !strings.Contains(rep.Command, "--shards 1,2") || !strings.Contains(rep.Command, "--scenario "+c.scenario) {
				t.Errorf("efficiency of 1 shard %g, command %q", rep.Points[0].Efficiency, rep.Command)
			}
		})
	}
	cmd := newShardsCommand(func() Env { return Env{Stdout: io.Discard, Stderr: io.Discard} })
	cmd.SetArgs([]string{"--scenario", "steady"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "use burndown (noop jobs) or fanout (topics)") {
		t.Errorf("--scenario steady: %v", err)
	}
}
