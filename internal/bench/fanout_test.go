package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/droverhq/drover/internal/bench/report"
)

// TestFanoutLosesNothing runs bench fanout on SQLite with consumers as
// processes (one killed half way and replaced) and in the bench process:
// the ledgers account for every (message, subscription) pair.
func TestFanoutLosesNothing(t *testing.T) {
	for _, args := range [][]string{
		{"--processes", "1,2", "--fault", "kill-worker", "--lease", "1s"},
		{"--processes", "2", "--in-process"},
	} {
		t.Run(args[len(args)-1], func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			jsonPath, plotPath := filepath.Join(dir, "fanout.json"), filepath.Join(dir, "lag.svg")
			var out bytes.Buffer
			cmd := NewCommand(func() Env {
				return Env{DatabaseURL: "sqlite://" + filepath.Join(dir, "bench.db"), Schema: "drover", SchemaSet: true,
					Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Stdout: &out, Stderr: &out}
			})
			cmd.SetArgs(append([]string{"fanout", "--messages", "2000", "--topics", "4", "--subscriptions", "5", "--publishers", "4",
				"--json", jsonPath, "--plot", plotPath, "--lag-every", "20ms"}, args...))
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			if err := cmd.ExecuteContext(context.Background()); err != nil {
				t.Fatalf("fanout: %v\n%s", err, out.String())
			}
			b, err := os.ReadFile(jsonPath)
			if err != nil {
				t.Fatal(err)
			}
			var rep FanoutReport
			if err := json.Unmarshal(b, &rep); err != nil {
				t.Fatal(err)
			}
			if svg, err := os.ReadFile(plotPath); err != nil || !bytes.Contains(svg, []byte("largest subscription lag")) {
				t.Fatalf("lag plot: %v\n%s", err, svg)
			}
			for _, pt := range rep.Points {
				if pt.MaxLag != report.MaxLag(pt.Lag) {
					t.Errorf("%d consumers: max_lag %d, samples say %d", pt.Clients, pt.MaxLag, report.MaxLag(pt.Lag))
				}
				if pt.Lost != 0 || pt.Deliveries < 2000*5 {
					t.Fatalf("%d consumers: lost %d, %d deliveries of %d\n%s", pt.Clients, pt.Lost, pt.Deliveries, 2000*5, out.String())
				}
			}
		})
	}
}
