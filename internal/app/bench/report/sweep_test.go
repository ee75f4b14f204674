package report

import (
	"bytes"
	"strings"
	"testing"
)

func ptr(v float64) *float64 { return &v }

// point is a point of curve with the store's and the client's CPU per job.
func point(curve string, store, client *float64) SweepPoint {
	return SweepPoint{Curve: curve, Cost: Cost{StoreCPUUsPerJob: store, ClientCPUUsPerJob: client}}
}

// TestFlagOver checks that each point is held to the cheapest of its own
// curve, on store plus client CPU when every point has the store's figure
// and on the client's alone otherwise.
func TestFlagOver(t *testing.T) {
	cases := []struct {
		name   string
		points []SweepPoint
		basis  string
		costs  []float64
		ratios []float64
		over   []bool
	}{
		{
			name: "store and client",
			points: []SweepPoint{
				point("backlog", ptr(10), ptr(4)),
				point("backlog", ptr(12), ptr(5)),
				point("backlog", ptr(14), ptr(4)),
			},
			basis:  "store_cpu_us_per_job + client_cpu_us_per_job",
			costs:  []float64{14, 17, 18},
			ratios: []float64{1, 1.21, 1.29},
			over:   []bool{false, false, true},
		},
		{
			name: "client alone when a point lacks the store's",
			points: []SweepPoint{
				point("payload", nil, ptr(40)),
				point("payload", ptr(1), ptr(60)),
			},
			basis:  "client_cpu_us_per_job",
			costs:  []float64{40, 60},
			ratios: []float64{1, 1.5},
			over:   []bool{false, true},
		},
		{
			name: "curves apart",
			points: []SweepPoint{
				point("subscriptions", nil, ptr(10)),
				point("subscriptions", nil, ptr(2)),
				point("topics", nil, ptr(10)),
				point("topics", nil, ptr(12)),
			},
			basis:  "client_cpu_us_per_job",
			costs:  []float64{10, 2, 10, 12},
			ratios: []float64{5, 1, 1, 1.2},
			over:   []bool{true, false, false, false},
		},
		{
			name:   "nothing measured",
			points: []SweepPoint{{Curve: "keys"}},
			basis:  "client_cpu_us_per_job",
			costs:  []float64{0},
			ratios: []float64{0},
			over:   []bool{false},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &Sweep{Budget: Budget, Points: tc.points}
			s.FlagOver()
			if !strings.HasPrefix(s.CostBasis, tc.basis) {
				t.Errorf("cost basis %q, want %q", s.CostBasis, tc.basis)
			}
			for i, p := range s.Points {
				if p.CostUsPerJob != tc.costs[i] || p.CostRatio != tc.ratios[i] || p.Over != tc.over[i] {
					t.Errorf("point %d: cost %v ratio %v over %v; want %v, %v, %v", i, p.CostUsPerJob, p.CostRatio, p.Over,
						tc.costs[i], tc.ratios[i], tc.over[i])
				}
			}
		})
	}
}

func TestParseExplain(t *testing.T) {
	for _, tc := range []struct {
		name, raw           string
		planning, execution float64
		jit                 bool
		jitMs               float64
	}{
		{"no JIT", `[{"Plan": {"Node Type": "Limit"}, "Planning Time": 0.5, "Execution Time": 1.25}]`, 0.5, 1.25, false, 0},
		{"JIT", `[{"Plan": {}, "Planning Time": 2, "Execution Time": 480.5, "JIT": {"Functions": 12, "Timing": {"Total": 455.1}}}]`, 2, 480.5, true, 455.1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := MaintenanceStatement{Statement: "JobRouteAbsent"}
			if err := m.ParseExplain([]byte(tc.raw)); err != nil {
				t.Fatal(err)
			}
			if m.PlanningMs != tc.planning || m.ExecutionMs != tc.execution || m.JIT != tc.jit || m.JITMs != tc.jitMs || string(m.Plan) != tc.raw {
				t.Errorf("got %+v", m)
			}
		})
	}
	m := MaintenanceStatement{Statement: "JobRescue"}
	if err := m.ParseExplain([]byte(`{"Plan": {}}`)); err == nil || !strings.Contains(err.Error(), "JobRescue") {
		t.Errorf("a plan that is not EXPLAIN's list: err %v, want one naming the statement", err)
	}
}

// TestSweepOutputs checks that the table, Markdown and chart show every
// point, under its curve's name when there are two, and the points over
// budget.
func TestSweepOutputs(t *testing.T) {
	s := NewSweep("topics", DriverPostgres)
	s.Unit = "deliveries"
	s.Points = []SweepPoint{
		{Curve: "subscriptions", Label: "1", PerSec: 1000, Cost: Cost{ClientCPUUsPerJob: ptr(30)}},
		{Curve: "subscriptions", Label: "50", PerSec: 50000, Cost: Cost{ClientCPUUsPerJob: ptr(2)}},
		{Curve: "topics", Label: "100", PerSec: 900, Cost: Cost{ClientCPUUsPerJob: ptr(31)}},
	}
	s.Maintenance = []MaintenanceStatement{{Pass: "rescue", Statement: "JobRescue", ExecutionMs: 56.2, JIT: true, JITMs: 40}}
	s.FlagOver()
	var table bytes.Buffer
	WriteSweepTable(&table, s)
	md, svg := SweepMarkdown(s), string(SweepSVG(s))
	for name, out := range map[string]string{"table": table.String(), "markdown": md} {
		for _, want := range []string{"subscriptions 1", "subscriptions 50", "topics 100", "JobRescue", "over", "yes, 40.0 ms"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q:\n%s", name, want, out)
			}
		}
	}
	for _, want := range []string{"cost per delivery", "over 1.25× the cheapest: subscriptions 1", "subs CPU (right axis)", "topics (left axis)", "subscriptions, then topics"} {
		if !strings.Contains(svg, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
	if n := strings.Count(svg, "<polyline"); n != 4 {
		t.Errorf("chart has %d curves, want rate and cost of each of 2 curves", n)
	}
}
