package bench

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/droverhq/drover"
)

// sweepCases are the sweeps the tests run, each dimension with points small
// enough for a test; pg marks those also run on PostgreSQL.
var sweepCases = []struct {
	dim    string
	args   []string
	points int
	pg     bool
}{
	{"backlog", []string{"--points", "100,600", "--duration", "2s", "--rate", "200"}, 2, true},
	{"payload", []string{"--points", "0,1024", "--jobs", "300", "--duration", "2s", "--rate", "200"}, 2, false},
	{"queues", []string{"--points", "1,20", "--jobs", "300", "--duration", "2s", "--rate", "200"}, 2, false},
	{"keys", []string{"--points", "0,1,30,unique", "--jobs", "200", "--duration", "2s", "--rate", "200"}, 4, false},
	{"topics", []string{"--points", "1,3", "--topic-points", "1,4", "--messages", "200"}, 4, false},
	{"soak", []string{"--duration", "4s", "--sample-every", "1s", "--rate", "200"}, 1, true},
}

// checkSweep checks a sweep's JSON report: its shape, that every point's
// counts add up (every job inserted was done, nothing lost or run twice),
// and that the over flags follow the costs.
func checkSweep(t *testing.T, dim string, rep map[string]any, points int) {
	t.Helper()
	for _, key := range []string{"scenario", "dimension", "driver", "command", "commit", "unit", "cost_basis", "budget", "points"} {
		if _, ok := rep[key]; !ok {
			t.Errorf("report lacks %q", key)
		}
	}
	if rep["scenario"] != "sweep" || rep["dimension"] != dim {
		t.Errorf("scenario %v, dimension %v; want sweep, %s", rep["scenario"], rep["dimension"], dim)
	}
	pts, _ := rep["points"].([]any)
	if len(pts) != points {
		t.Fatalf("%d points, want %d: %v", len(pts), points, rep["points"])
	}
	cheapest := map[string]float64{}
	for _, p := range pts {
		pt := p.(map[string]any)
		for _, key := range []string{"curve", "value", "label", "inserted", "done", "lost", "duplicates", "per_sec",
			"insert_per_sec", "client_cpu_us_per_job", "claim_latency_ms", "cost_us_per_job", "cost_ratio", "over"} {
			if _, ok := pt[key]; !ok {
				t.Errorf("point %v lacks %q", pt["label"], key)
			}
		}
		inserted, done := pt["inserted"].(float64), pt["done"].(float64)
		if inserted <= 0 || done != inserted || pt["lost"].(float64) != 0 || pt["duplicates"].(float64) != 0 {
			t.Errorf("point %v: %v inserted, %v done, %v lost, %v duplicates; want every one done once",
				pt["label"], inserted, done, pt["lost"], pt["duplicates"])
		}
		if dim != "topics" && pt["claim_statement_ms"].(float64) <= 0 {
			t.Errorf("point %v: no claim call timed", pt["label"])
		}
		if lat := pt["claim_latency_ms"].(map[string]any); lat["count"].(float64) <= 0 {
			t.Errorf("point %v: no claim latency recorded: %v", pt["label"], lat)
		}
		if c := pt["cost_us_per_job"].(float64); c > 0 && (cheapest[pt["curve"].(string)] == 0 || c < cheapest[pt["curve"].(string)]) {
			cheapest[pt["curve"].(string)] = c
		}
	}
	for _, p := range pts {
		pt := p.(map[string]any)
		c, floor := pt["cost_us_per_job"].(float64), cheapest[pt["curve"].(string)]
		if want := c > 0 && c > 1.25*floor; pt["over"] != want {
			t.Errorf("point %v: over %v at %.2f µs, cheapest of its curve %.2f µs", pt["label"], pt["over"], c, floor)
		}
		if ratio := pt["cost_ratio"].(float64); floor > 0 && math.Abs(ratio-c/floor) > 0.01 {
			t.Errorf("point %v: cost ratio %v, want %.2f", pt["label"], ratio, c/floor)
		}
	}
}

// TestSweepOnSQLite runs every dimension. Its subtests run one at a time:
// the handlers of a bench process record start latency into one recorder
// (pickup), which a point in parallel would swap out from under another.
func TestSweepOnSQLite(t *testing.T) {
	for _, tc := range sweepCases {
		t.Run(tc.dim, func(t *testing.T) {
			runCmd, dir := setup(t)
			rep, out, err := runCmd(append([]string{"sweep", "--dimension", tc.dim}, tc.args...)...)
			if err != nil {
				t.Fatalf("sweep %s: %v\n%s", tc.dim, err, out)
			}
			checkSweep(t, tc.dim, rep, tc.points)
			checkSweepExtras(t, tc.dim, rep, tc.args)
			if _, ok := rep["maintenance"]; ok {
				t.Error("SQLite reported maintenance plans, which only PostgreSQL has")
			}
			if !strings.Contains(out, "### Sweep: "+tc.dim) {
				t.Errorf("--markdown printed no section:\n%s", out)
			}
			if svg, err := os.ReadFile(filepath.Join(dir, "plot.svg")); err != nil || !strings.Contains(string(svg), "<polyline") {
				t.Errorf("--plot drew no curve (%v)", err)
			}
		})
	}
}

// checkSweepExtras checks what only some dimensions report.
func checkSweepExtras(t *testing.T, dim string, rep map[string]any, args []string) {
	t.Helper()
	pts := rep["points"].([]any)
	switch dim {
	case "topics":
		// Every (message, subscription) pair is one delivery: 200
		// messages to 1 and 3 subscriptions, then over 1 and 4 topics of
		// one subscription each.
		var got []float64
		for _, p := range pts {
			got = append(got, p.(map[string]any)["inserted"].(float64))
		}
		if want := []float64{200, 600, 200, 200}; !slices.Equal(got, want) {
			t.Errorf("deliveries expected per point %v, want %v", got, want)
		}
		if rep["unit"] != "deliveries" {
			t.Errorf("unit %v, want deliveries", rep["unit"])
		}
	case "soak":
		samples, _ := rep["samples"].([]any)
		if len(samples) < 2 {
			t.Fatalf("%d soak samples over 4s every 1s, want several", len(samples))
		}
		var jobs float64
		for _, s := range samples {
			smp := s.(map[string]any)
			for _, key := range []string{"at_sec", "jobs", "rate", "latency_ms", "table_bytes"} {
				if _, ok := smp[key]; !ok {
					t.Errorf("sample lacks %q: %v", key, smp)
				}
			}
			jobs += smp["jobs"].(float64)
		}
		// The samples cover the run from its first job started; the
		// point's latency counts every job.
		if done := pts[0].(map[string]any)["done"].(float64); jobs > done {
			t.Errorf("samples count %v jobs started, more than the %v done", jobs, done)
		}
	case "payload", "queues", "keys":
		for _, p := range pts {
			if ins := p.(map[string]any)["inserted"].(float64); ins < 200 {
				t.Errorf("point %v: %v jobs inserted, fewer than the burn-down's", p.(map[string]any)["label"], ins)
			}
		}
	}
	if dim == "keys" {
		var labels []string
		for _, p := range pts {
			labels = append(labels, p.(map[string]any)["label"].(string))
		}
		if want := []string{"none", "1", "30", "unique"}; !slices.Equal(labels, want) {
			t.Errorf("keys points %v, want %v", labels, want)
		}
		if last := pts[3].(map[string]any); last["value"].(float64) != uniquePoint {
			t.Errorf("the unique point's value is %v, want %d", last["value"], uniquePoint)
		}
	}
}

// TestSweepOnPostgres runs the backlog and the soak, one at a time as on
// SQLite, and checks what only PostgreSQL reports.
func TestSweepOnPostgres(t *testing.T) {
	for _, tc := range sweepCases {
		if !tc.pg {
			continue
		}
		t.Run(tc.dim, func(t *testing.T) {
			runCmd, _ := setupPG(t)
			rep, out, err := runCmd(append([]string{"sweep", "--dimension", tc.dim}, tc.args...)...)
			if err != nil {
				t.Fatalf("sweep %s: %v\n%s", tc.dim, err, out)
			}
			checkSweep(t, tc.dim, rep, tc.points)
			checkSweepExtras(t, tc.dim, rep, tc.args)
			for _, p := range rep["points"].([]any) {
				pt := p.(map[string]any)
				for _, key := range []string{"wal_bytes_per_job", "table_bytes", "index_bytes"} {
					if _, ok := pt[key]; !ok {
						t.Errorf("PostgreSQL point %v lacks %q", pt["label"], key)
					}
				}
				if tc.dim == "backlog" && pt["table_bytes"].(float64) <= 0 {
					t.Errorf("point %v: hot table of %v bytes", pt["label"], pt["table_bytes"])
				}
			}
			if tc.dim == "soak" {
				for _, s := range rep["samples"].([]any) {
					if _, ok := s.(map[string]any)["dead_tuples"]; !ok {
						t.Errorf("PostgreSQL soak sample lacks dead_tuples: %v", s)
					}
				}
			}
			tables := []string{"as the sweep left it"}
			if tc.dim == "backlog" {
				tables = []string{"with the backlog waiting", "backlog cancelled, before vacuum"}
			}
			checkMaintenance(t, rep, tables)
		})
	}
}

// checkMaintenance checks that every maintenance pass's statements were
// planned on each state of the hot table in tables, with times and the JIT
// verdict, and that pg_stat_statements was read or its absence explained.
func checkMaintenance(t *testing.T, rep map[string]any, tables []string) {
	t.Helper()
	passes := map[string]bool{}
	for _, m := range rep["maintenance"].([]any) {
		st := m.(map[string]any)
		if !slices.Contains(tables, st["table"].(string)) {
			t.Errorf("maintenance %v ran on the table %q, want one of %q", st["statement"], st["table"], tables)
		}
		passes[st["table"].(string)+": "+st["pass"].(string)] = true
		for _, key := range []string{"statement", "wall_ms", "planning_ms", "execution_ms", "jit", "plan"} {
			if _, ok := st[key]; !ok {
				t.Errorf("maintenance %v lacks %q", st["statement"], key)
			}
		}
		if plans, _ := st["plan"].([]any); len(plans) != 1 {
			t.Errorf("maintenance %v: plan %v, want EXPLAIN's one plan", st["statement"], st["plan"])
		}
	}
	for _, table := range tables {
		for _, pass := range []string{"rescue", "promotion sweep", "absent-worker pass", "pruning", "topic retention"} {
			if !passes[table+": "+pass] {
				t.Errorf("no statement of the %s planned %s: %v", pass, table, passes)
			}
		}
	}
	notes := strings.Join(toStrings(rep["notes"]), "\n")
	if _, ok := rep["top_statements"]; !ok && !strings.Contains(notes, "pg_stat_statements skipped") {
		t.Errorf("neither top statements nor a note on pg_stat_statements: %s", notes)
	}
}

func toStrings(v any) []string {
	var out []string
	xs, _ := v.([]any)
	for _, x := range xs {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// TestSweepRefusesBadInput checks that every bad flag fails before any
// work, with an error naming it.
func TestSweepRefusesBadInput(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--dimension", "depth"}, `--dimension "depth"`},
		{[]string{}, `--dimension ""`},
		{[]string{"--dimension", "soak", "--points", "1,2"}, "--points"},
		{[]string{"--dimension", "backlog", "--points", "1000,10"}, "must rise"},
		{[]string{"--dimension", "payload", "--points", "unique"}, `"unique"`},
		{[]string{"--dimension", "queues", "--points", "0"}, `"0"`},
		{[]string{"--dimension", "payload", "--topic-points", "1"}, "--topic-points"},
		{[]string{"--dimension", "topics", "--topic-points", "x"}, "--topic-points"},
		{[]string{"--dimension", "keys", "--key-limit", "0"}, "--key-limit"},
		{[]string{"--dimension", "soak", "--sample-every", "10ms"}, "--sample-every"},
		{[]string{"--dimension", "payload", "--jobs", "0"}, "--jobs"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			runCmd, dir := setup(t)
			_, out, err := runCmd(append([]string{"sweep"}, tc.args...)...)
			if !errors.Is(err, drover.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want a usage error naming %s\n%s", err, tc.want, out)
			}
			if _, serr := os.Stat(filepath.Join(dir, "bench.db")); serr == nil {
				t.Error("a refused sweep opened the store")
			}
		})
	}
}
