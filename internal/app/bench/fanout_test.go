package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/app/bench/report"
	"github.com/droverhq/drover/internal/testkit/testdb"
)

// runFanoutCmd runs `drover bench fanout` with args (beside --json) on the
// store url and schema, and returns its report and output.
func runFanoutCmd(t *testing.T, url, schema string, args ...string) (FanoutReport, string) {
	t.Helper()
	jsonPath := filepath.Join(t.TempDir(), "fanout.json")
	var out bytes.Buffer
	cmd := NewCommand(func() Env {
		return Env{DatabaseURL: url, Schema: schema, SchemaSet: true,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Stdout: &out, Stderr: &out}
	})
	cmd.SetArgs(append([]string{"fanout", "--json", jsonPath}, args...))
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
	return rep, out.String()
}

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
			plotPath := filepath.Join(dir, "lag.svg")
			rep, out := runFanoutCmd(t, "sqlite://"+filepath.Join(dir, "bench.db"), "drover", append([]string{"--messages", "2000", "--topics", "4",
				"--subscriptions", "5", "--publishers", "4", "--plot", plotPath, "--lag-every", "20ms"}, args...)...)
			if svg, err := os.ReadFile(plotPath); err != nil || !bytes.Contains(svg, []byte("largest subscription lag")) {
				t.Fatalf("lag plot: %v\n%s", err, svg)
			}
			for _, pt := range rep.Points {
				if pt.Killed == 0 && pt.Duplicates != 0 {
					t.Errorf("%d consumers, none killed: %d duplicates", pt.Clients, pt.Duplicates)
				}
				// SQLite runs inside the client: its CPU is the client's,
				// and there is no store figure.
				if pt.ClientCPUUsPerDelivery == nil || *pt.ClientCPUUsPerDelivery <= 0 || pt.ClientCPUUsPerMessage == nil ||
					pt.StoreCPUUsPerDelivery != nil || pt.WALBytesPerDelivery != nil {
					t.Errorf("%d consumers: cost %+v, want the client's CPU only", pt.Clients, pt.FanoutCost)
				}
				if pt.MaxLag != report.MaxLag(pt.Lag) {
					t.Errorf("%d consumers: max_lag %d, samples say %d", pt.Clients, pt.MaxLag, report.MaxLag(pt.Lag))
				}
				if pt.Lost != 0 || pt.Deliveries < 2000*5 {
					t.Fatalf("%d consumers: lost %d, %d deliveries of %d\n%s", pt.Clients, pt.Lost, pt.Deliveries, 2000*5, out)
				}
			}
		})
	}
}

// TestFanoutCost: the readings around a run become costs per delivery and
// per message, and the rows each table wrote over the run.
func TestFanoutCost(t *testing.T) {
	d := func(v time.Duration) *time.Duration { return &v }
	n := func(v int64) *int64 { return &v }
	before := costSample{client: time.Second, store: d(2 * time.Second), wal: n(1000)}
	after := costSample{client: 3 * time.Second, store: d(7 * time.Second), wal: n(501_000)}
	c := fanoutCost(before, after, map[string]int64{"topic_lanes": 4000, "topics": 20}, map[string]int64{"topic_lanes": 14000, "topic_messages": 10_000, "topics": 20},
		1_000_000, 20_000)
	got := fmt.Sprintf("%v %v %v | %v %v %v | %v %v", *c.StoreCPUUsPerDelivery, *c.ClientCPUUsPerDelivery, *c.WALBytesPerDelivery,
		*c.StoreCPUUsPerMessage, *c.ClientCPUUsPerMessage, *c.WALBytesPerMessage, c.RowsWritten, *c.RowsPerDelivery)
	if want := "5 2 0.5 | 250 100 25 | map[topic_lanes:10000 topic_messages:10000] 0.02"; got != want {
		t.Fatalf("cost %s, want %s", got, want)
	}
	if c := fanoutCost(costSample{client: 0}, costSample{client: time.Second}, nil, nil, 1000, 10); c.RowsWritten != nil || c.StoreCPUUsPerDelivery != nil ||
		*c.ClientCPUUsPerDelivery != 1000 {
		t.Fatalf("SQLite-like readings gave %s", c)
	}
}

// TestFanoutOnPostgres runs bench fanout on PostgreSQL: nothing lost or
// delivered twice, and the store's own statistics show that delivering
// wrote no row per delivery (one per message published, and one lane
// update per batch: with 5 subscriptions, a row per delivery would make
// it more than 1.2).
func TestFanoutOnPostgres(t *testing.T) {
	rep, out := runFanoutCmd(t, testdb.URL(t), testdb.NewSchema(t), "--messages", "2000", "--topics", "4", "--subscriptions", "5", "--publishers", "4")
	if rep.Lost != 0 || rep.Duplicates != 0 || rep.Deliveries != 2000*5 {
		t.Fatalf("lost %d, duplicates %d, deliveries %d\n%s", rep.Lost, rep.Duplicates, rep.Deliveries, out)
	}
	c := rep.FanoutCost
	if c.RowsWritten["topic_messages"] == 0 || c.RowsPerDelivery == nil || *c.RowsPerDelivery <= 0 || *c.RowsPerDelivery >= 0.5 {
		t.Fatalf("rows written %v, %v per delivery; want the messages' and under 0.5 a delivery\n%s", c.RowsWritten, c.RowsPerDelivery, out)
	}
	for name, v := range map[string]*float64{"store CPU": c.StoreCPUUsPerDelivery, "client CPU": c.ClientCPUUsPerDelivery,
		"WAL": c.WALBytesPerDelivery, "WAL per message": c.WALBytesPerMessage} {
		if v == nil || *v <= 0 {
			t.Errorf("%s per delivery %v, want a measured figure", name, v)
		}
	}
}
