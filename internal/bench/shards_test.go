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

	"github.com/droverhq/drover/internal/cgroup"
)

// TestShards runs `bench shards` on fleets of one and two local clusters,
// each held to a CPU share, and checks the JSON it writes: a point per
// size with its rate, efficiency, each shard's CPU per job, and no job
// lost or run twice. It needs a writable cgroup cpu controller.
func TestShards(t *testing.T) {
	if g, err := cgroup.NewCPU("bench-shards-probe", 0.5); err != nil {
		t.Skipf("no writable cgroup cpu controller: %v", err)
	} else {
		_ = g.Remove()
	}
	path := filepath.Join(t.TempDir(), "shards.json")
	var out bytes.Buffer
	cmd := newShardsCommand(func() Env {
		return Env{Schema: "drover", Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Stdout: &out, Stderr: io.Discard}
	})
	cmd.SetArgs([]string{"--shards", "2,1", "--jobs", "3000", "--store-cpu", "0.5", "--json", path})
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
	if len(rep.Points) != 2 || rep.Points[0].Shards != 1 || rep.Points[1].Shards != 2 {
		t.Fatalf("points %+v, want 1 and 2 shards in order", rep.Points)
	}
	for _, p := range rep.Points {
		if p.JobsPerSec <= 0 || p.Efficiency <= 0 || len(p.StoreCPUUsPerJob) != p.Shards || p.Lost != 0 || p.Duplicates != 0 {
			t.Errorf("point %+v: want a rate, an efficiency, a CPU figure per shard, nothing lost or run twice", p)
		}
		for i, us := range p.StoreCPUUsPerJob {
			if us <= 0 {
				t.Errorf("%d shards: shard %d used no CPU", p.Shards, i)
			}
		}
	}
	if rep.Points[0].Efficiency != 1 || !strings.Contains(rep.Command, "--shards 1,2") {
		t.Errorf("efficiency of 1 shard %g, command %q", rep.Points[0].Efficiency, rep.Command)
	}
	// A fleet cannot run topics yet: the fanout scenario says so.
	cmd = newShardsCommand(func() Env { return Env{Stdout: io.Discard, Stderr: io.Discard} })
	cmd.SetArgs([]string{"--scenario", "fanout"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "only burndown is built") {
		t.Errorf("--scenario fanout: %v", err)
	}
}
