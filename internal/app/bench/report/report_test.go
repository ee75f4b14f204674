package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/app/bench/stats"
)

// sampleReport returns a report with every field set; scaling adds points.
func sampleReport(scaling bool) *Report {
	r := &Report{
		Scenario:         "throughput",
		System:           System,
		Driver:           DriverPostgres,
		Settings:         "workers=16 batch=50",
		Command:          "drover bench throughput --driver postgres --jobs 100000",
		Commit:           "abc1234",
		Machine:          "linux/amd64, 2 CPUs (Test CPU), 24 GiB RAM, go1.26.8",
		StartedAt:        time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC),
		Jobs:             100000,
		Seconds:          12.5,
		JobsPerSec:       8000,
		SteadyJobsPerSec: 8512.4,
		InsertPerSec:     45000,
		LatencyMs:        stats.Percentiles{P50: 1.25, P95: 4.5, P99: 9.75, Max: 120, Count: 100000},
		StartLatencyMs:   stats.Percentiles{P50: 0.8, P95: 3, P99: 7, Max: 100, Count: 100000},
		Windows: []stats.Window{
			{StartSec: 0, Seconds: 5, Jobs: 30000, Rate: 6000, ClaimMs: 2, CompleteMs: 1, HandlerMs: 0.1, Backlog: 70000, P99Ms: 12},
			{StartSec: 5, Seconds: 5, Jobs: 42500, Rate: 8500, ClaimMs: 1.5, CompleteMs: 0.9, HandlerMs: 0.1, Backlog: 27500, P99Ms: 9},
			{StartSec: 10, Seconds: 5, Jobs: 42600, Rate: 8520, ClaimMs: 1.5, CompleteMs: 0.9, HandlerMs: 0.1, Backlog: 100, P99Ms: 8},
			{StartSec: 15, Seconds: 2.5, Jobs: 100, Rate: 40, Backlog: 0, P99Ms: 2},
		},
		DB:      map[string]any{"xact_commit": 123456, "wal_bytes": 9.5e8},
		Floor:   &Reference{Name: "bare SKIP LOCKED", JobsPerSec: 11000, Command: "drover bench floor --driver postgres"},
		Ceiling: &Reference{Name: "own statements", JobsPerSec: 9500, Command: "drover statements, no handlers"},
		Notes:   []string{"first note", "second note"},
	}
	r.SteadyNote = SteadyNote(r.Windows)
	if scaling {
		r.Points = []Point{
			{Processes: 1, Jobs: 50000, Seconds: 10, JobsPerSec: 5000, SteadyJobsPerSec: 5100},
			{Processes: 2, Jobs: 50000, Seconds: 5.5, JobsPerSec: 9090, SteadyJobsPerSec: 9690},
			{Processes: 4, Jobs: 50000, Seconds: 3.2, JobsPerSec: 15625, SteadyJobsPerSec: 16320,
				LatencyMs: stats.Percentiles{P50: 2, P95: 5, P99: 11, Max: 40, Count: 50000}},
		}
		r.ApplyScaling()
	}
	return r
}

func topLevelKeys(t *testing.T, b []byte) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("output is not a JSON object: %v", err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func TestWriteJSON(t *testing.T) {
	required := []string{
		"scenario", "system", "driver", "settings", "command", "commit", "machine", "started_at",
		"jobs", "seconds", "jobs_per_sec", "steady_jobs_per_sec", "steady_note", "insert_per_sec",
		"latency_ms", "start_latency_ms", "lost", "duplicates", "windows",
	}
	optional := []string{"points", "db", "floor", "ceiling", "notes"}
	minimal := sampleReport(false)
	minimal.DB, minimal.Floor, minimal.Ceiling, minimal.Notes = nil, nil, nil, nil

	tests := []struct {
		name string
		r    *Report
		want []string
	}{
		{"every field", sampleReport(true), append(append([]string(nil), required...), optional...)},
		{"optional fields omitted", minimal, required},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "results", "report.json")
			if err := WriteJSON(path, tt.r); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want := append([]string(nil), tt.want...)
			sort.Strings(want)
			if got := topLevelKeys(t, b); !reflect.DeepEqual(got, want) {
				t.Errorf("top-level keys = %v\nwant %v", got, want)
			}

			var back Report
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			// JSON turns the DB map's numbers into float64, so compare it
			// separately from the typed fields.
			wantDB := tt.r.DB
			back.DB, tt.r.DB = nil, nil
			if !reflect.DeepEqual(&back, tt.r) {
				t.Errorf("round trip changed the report:\n got %+v\nwant %+v", back, *tt.r)
			}
			tt.r.DB = wantDB
		})
	}
}

func TestPointJSONKeys(t *testing.T) {
	tests := []struct {
		name string
		p    Point
		want []string
	}{
		{"processes", Point{Processes: 2}, []string{"processes"}},
		{"streams", Point{Streams: 3}, []string{"streams"}},
		{"rounds", Point{Processes: 2, Rounds: []float64{1, 2}}, []string{"processes", "rounds"}},
	}
	common := []string{"duplicates", "efficiency", "factor", "jobs", "jobs_per_sec", "latency_ms", "lost", "seconds", "start_latency_ms", "steady_jobs_per_sec"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.p)
			if err != nil {
				t.Fatal(err)
			}
			want := append(append([]string(nil), common...), tt.want...)
			sort.Strings(want)
			if got := topLevelKeys(t, b); !reflect.DeepEqual(got, want) {
				t.Errorf("keys = %v, want %v", got, want)
			}
		})
	}
}

func TestMedianRound(t *testing.T) {
	round := func(rate float64, lost, dup int64) Point {
		return Point{Processes: 4, SteadyJobsPerSec: rate, Jobs: int64(rate), Lost: lost, Duplicates: dup}
	}
	tests := []struct {
		name     string
		rounds   []Point
		wantRate float64 // the round whose figures the point keeps
		wantAt   int     // its index
		wantLost int64
		wantDup  int64
	}{
		{"one round", []Point{round(500, 0, 0)}, 500, 0, 0, 0},
		{"odd count: the middle", []Point{round(700, 0, 0), round(500, 0, 0), round(600, 0, 0)}, 600, 2, 0, 0},
		{"even count: the lower middle", []Point{round(800, 0, 0), round(500, 0, 0), round(600, 0, 0), round(700, 0, 0)}, 600, 2, 0, 0},
		{"losses and duplicates of every round count", []Point{round(500, 1, 0), round(600, 0, 2), round(700, 3, 4)}, 600, 1, 4, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, at := MedianRound(tt.rounds)
			if got.SteadyJobsPerSec != tt.wantRate || got.Jobs != int64(tt.wantRate) || at != tt.wantAt {
				t.Errorf("kept round %d of %v jobs/s (%d jobs), want round %d of %v", at, got.SteadyJobsPerSec, got.Jobs, tt.wantAt, tt.wantRate)
			}
			if got.Lost != tt.wantLost || got.Duplicates != tt.wantDup {
				t.Errorf("lost/duplicates = %d/%d, want %d/%d", got.Lost, got.Duplicates, tt.wantLost, tt.wantDup)
			}
			var want []float64
			for _, r := range tt.rounds {
				want = append(want, r.SteadyJobsPerSec)
			}
			if !reflect.DeepEqual(got.Rounds, want) {
				t.Errorf("rounds = %v, want %v (in run order)", got.Rounds, want)
			}
		})
	}
}

func TestApplyScaling(t *testing.T) {
	tests := []struct {
		name     string
		points   []Point
		wantFact []float64
		wantEff  []float64
	}{
		{
			name: "steady rates when all points have one",
			points: []Point{
				{Processes: 2, JobsPerSec: 1, SteadyJobsPerSec: 180},
				{Processes: 1, JobsPerSec: 1, SteadyJobsPerSec: 100},
			},
			wantFact: []float64{1.8, 1},
			wantEff:  []float64{0.9, 1},
		},
		{
			name: "whole-run rates when one steady rate is missing",
			points: []Point{
				{Streams: 1, JobsPerSec: 100, SteadyJobsPerSec: 120},
				{Streams: 4, JobsPerSec: 300},
			},
			wantFact: []float64{1, 3},
			wantEff:  []float64{1, 0.75},
		},
		{
			name: "point without K gets zero factors",
			points: []Point{
				{JobsPerSec: 50},
				{Processes: 1, JobsPerSec: 100},
			},
			wantFact: []float64{0, 1},
			wantEff:  []float64{0, 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Report{Points: tt.points}
			r.ApplyScaling()
			for i, p := range r.Points {
				if !approxEqual(p.Factor, tt.wantFact[i]) || !approxEqual(p.Efficiency, tt.wantEff[i]) {
					t.Errorf("point %d: factor %v efficiency %v, want %v and %v", i, p.Factor, p.Efficiency, tt.wantFact[i], tt.wantEff[i])
				}
			}
		})
	}
}

func approxEqual(a, b float64) bool {
	d := a - b
	return d < 1e-9 && d > -1e-9
}

func TestSteadyNote(t *testing.T) {
	w := func(rate float64, backlog int64) stats.Window {
		return stats.Window{Seconds: 5, Jobs: int64(rate * 5), Rate: rate, Backlog: backlog}
	}
	tests := []struct {
		name string
		ws   []stats.Window
		want []string
	}{
		{"no windows", nil, []string{"No windows were recorded."}},
		{"too few", []stats.Window{w(10, 1)}, []string{"all 1 window(s)", "too few windows"}},
		{"flat", []stats.Window{w(10, 1), w(10, 1), w(10, 1)}, []string{"all 3 window(s) (15.0 s)", "equals the whole-run rate."}},
		{
			"warm-up and drained tail",
			[]stats.Window{w(1, 9), w(10, 9), w(10, 9), w(10, 9), w(3, 0)},
			[]string{"windows 2–4 of 5 (15.0 s) are steady", "1 warm-up window(s) excluded", "final partial window excluded"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SteadyNote(tt.ws)
			if !strings.HasPrefix(got, stats.SteadyRule) {
				t.Errorf("note does not start with the rule: %q", got)
			}
			for _, s := range tt.want {
				if !strings.Contains(got, s) {
					t.Errorf("note %q lacks %q", got, s)
				}
			}
		})
	}
}

func TestNew(t *testing.T) {
	r := New("latency", DriverSQLite)
	if r.System != System || r.Driver != DriverSQLite || r.Scenario != "latency" {
		t.Errorf("New = %+v", r)
	}
	if r.Commit == "" || r.Machine == "" || r.StartedAt.IsZero() {
		t.Errorf("New left the environment empty: commit %q machine %q started %v", r.Commit, r.Machine, r.StartedAt)
	}
}
