package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/droverhq/drover/internal/app/bench/stats"
)

// Budget is how far a sweep point's cost per job may rise above the sweep's
// cheapest point before the point is flagged over (issue 36's target: cost
// that stays flat as the work grows).
const Budget = 1.25

// Sweep is the result of `drover bench sweep`: one point per value of the
// dimension swept (backlog depth, payload, queues, keys, topics), or for the
// soak dimension the samples of one long run. Its JSON keys are a published
// format, like Report's.
type Sweep struct {
	Scenario  string    `json:"scenario"`
	Dimension string    `json:"dimension"`
	System    string    `json:"system"`
	Driver    string    `json:"driver"`
	Settings  string    `json:"settings"`
	Command   string    `json:"command"`
	Commit    string    `json:"commit"`
	Machine   string    `json:"machine"`
	StartedAt time.Time `json:"started_at"`
	// Unit is what a point counts and its cost is per: "jobs", or
	// "deliveries" for topics.
	Unit string `json:"unit"`
	// CostBasis names the figure that cost_ratio and over compare.
	CostBasis string `json:"cost_basis"`
	// Budget is the ratio to the cheapest point above which a point is
	// over.
	Budget float64      `json:"budget"`
	Points []SweepPoint `json:"points"`
	// Samples are the soak's, one per --sample-every.
	Samples []SoakSample `json:"samples,omitempty"`
	// Maintenance is every maintenance statement run under EXPLAIN
	// ANALYZE after the sweep, on the hot table as the sweep left it
	// (PostgreSQL).
	Maintenance []MaintenanceStatement `json:"maintenance,omitempty"`
	// TopStatements are pg_stat_statements' costliest statements over the
	// sweep, when the extension is loaded.
	TopStatements []TopStatement `json:"top_statements,omitempty"`
	Notes         []string       `json:"notes,omitempty"`
}

// SweepPoint is one measured value of a sweep's dimension.
type SweepPoint struct {
	// Curve is the axis the point lies on: the dimension, or for topics
	// "subscriptions" (per topic) or "topics". Points are compared with
	// the cheapest point of their own curve.
	Curve string `json:"curve"`
	Value int64  `json:"value"`
	Label string `json:"label"`
	// Inserted counts the jobs inserted (messages published, for topics)
	// of the point's measured work, Done the jobs completed (deliveries
	// made); Lost and Duplicates are from the store's check (the
	// delivery ledger). A valid point has Lost 0 and, for jobs, Done ==
	// Inserted.
	Inserted   int64   `json:"inserted"`
	Done       int64   `json:"done"`
	Lost       int64   `json:"lost"`
	Duplicates int64   `json:"duplicates"`
	Seconds    float64 `json:"seconds"`
	// PerSec is Done per second of the measured phase, in Unit.
	PerSec float64 `json:"per_sec"`
	// InsertPerSec is the rate the point's jobs went in: the backlog's
	// bulk insert for backlog points, the producers' otherwise.
	InsertPerSec float64 `json:"insert_per_sec"`
	Cost
	// ClaimLatencyMs is insert to handler start of jobs produced at a
	// fixed rate (publish to handler start, for topics).
	ClaimLatencyMs stats.Percentiles `json:"claim_latency_ms"`
	// ClaimStatementMs is the mean time of one claim call over the
	// measured phase's windows: the claims themselves slowing, apart from
	// the wait before them.
	ClaimStatementMs float64 `json:"claim_statement_ms"`
	// JobsPerClaim is the jobs one claim call took, on average, over the
	// same windows: a claim's statement and commit are paid once per
	// call, so a point whose claims take fewer jobs pays more per job
	// (many queues sharing a client's concurrency, one key at a time).
	JobsPerClaim float64 `json:"jobs_per_claim"`
	// TableBytes and IndexBytes are the hot table's (topic_messages', for
	// topics) at the end of the point; nil when the store cannot tell.
	TableBytes *int64 `json:"table_bytes,omitempty"`
	IndexBytes *int64 `json:"index_bytes,omitempty"`
	// CostUsPerJob is the CostBasis figure, CostRatio it over the
	// cheapest point of the curve, and Over is set when that ratio
	// exceeds the budget.
	CostUsPerJob float64 `json:"cost_us_per_job"`
	CostRatio    float64 `json:"cost_ratio"`
	Over         bool    `json:"over"`
}

// SoakSample is one interval of a soak run.
type SoakSample struct {
	AtSec float64 `json:"at_sec"`
	// Jobs started in the interval, and their rate.
	Jobs int64   `json:"jobs"`
	Rate float64 `json:"rate"`
	// LatencyMs is insert to handler start of the jobs started in it.
	LatencyMs  stats.Percentiles `json:"latency_ms"`
	TableBytes *int64            `json:"table_bytes,omitempty"`
	IndexBytes *int64            `json:"index_bytes,omitempty"`
	// DeadTuples is the hot table's n_dead_tup (PostgreSQL).
	DeadTuples *int64 `json:"dead_tuples,omitempty"`
}

// MaintenanceStatement is one maintenance statement as EXPLAIN (ANALYZE,
// FORMAT JSON) ran it: its times, whether JIT compiled it, and the plan.
type MaintenanceStatement struct {
	// Table is the state of the hot table the statement ran on.
	Table       string  `json:"table"`
	Pass        string  `json:"pass"`
	Statement   string  `json:"statement"`
	WallMs      float64 `json:"wall_ms"`
	PlanningMs  float64 `json:"planning_ms"`
	ExecutionMs float64 `json:"execution_ms"`
	JIT         bool    `json:"jit"`
	// JITMs is the JIT's own time (generation, inlining, optimisation,
	// emission), part of ExecutionMs.
	JITMs float64         `json:"jit_ms,omitempty"`
	Plan  json.RawMessage `json:"plan"`
}

// ParseExplain fills the times and JIT of s from PostgreSQL's EXPLAIN
// (ANALYZE, FORMAT JSON) output raw, which it keeps as the plan.
func (s *MaintenanceStatement) ParseExplain(raw []byte) error {
	var plans []struct {
		Planning  float64 `json:"Planning Time"`
		Execution float64 `json:"Execution Time"`
		JIT       *struct {
			Timing struct {
				Total float64 `json:"Total"`
			} `json:"Timing"`
		} `json:"JIT"`
	}
	if err := json.Unmarshal(raw, &plans); err != nil || len(plans) != 1 {
		return fmt.Errorf("EXPLAIN output of %s: want one plan (%v)", s.Statement, err)
	}
	p := plans[0]
	s.PlanningMs, s.ExecutionMs, s.Plan = p.Planning, p.Execution, raw
	if p.JIT != nil {
		s.JIT, s.JITMs = true, p.JIT.Timing.Total
	}
	return nil
}

// TopStatement is one row of pg_stat_statements over the sweep.
type TopStatement struct {
	Query    string  `json:"query"`
	Calls    int64   `json:"calls"`
	TotalMs  float64 `json:"total_ms"`
	MeanMs   float64 `json:"mean_ms"`
	Rows     int64   `json:"rows"`
	WALBytes int64   `json:"wal_bytes"`
}

// NewSweep returns a sweep of dimension on driver with the environment
// filled in, as New does for a Report.
func NewSweep(dimension, driver string) *Sweep {
	r := New("sweep", driver)
	return &Sweep{Scenario: r.Scenario, Dimension: dimension, System: r.System, Driver: driver,
		Commit: r.Commit, Machine: r.Machine, StartedAt: r.StartedAt, Unit: "jobs", Budget: Budget}
}

// FlagOver sets every point's CostUsPerJob from its cost (store and client
// CPU where the store's is measured, the client's alone where it is not,
// as on SQLite, whose CPU is inside the client's), its CostRatio to the
// cheapest point of its curve, and Over past the budget.
func (s *Sweep) FlagOver() {
	store := true
	for _, p := range s.Points {
		if p.StoreCPUUsPerJob == nil {
			store = false
		}
	}
	s.CostBasis = "client_cpu_us_per_job (the store's CPU is inside the client's, or not measured)"
	if store && len(s.Points) > 0 {
		s.CostBasis = "store_cpu_us_per_job + client_cpu_us_per_job"
	}
	cheapest := map[string]float64{}
	for i := range s.Points {
		p := &s.Points[i]
		p.CostUsPerJob = 0
		if p.ClientCPUUsPerJob != nil {
			p.CostUsPerJob = *p.ClientCPUUsPerJob
		}
		if store {
			p.CostUsPerJob = round2(p.CostUsPerJob + *p.StoreCPUUsPerJob)
		}
		if c, ok := cheapest[p.Curve]; p.CostUsPerJob > 0 && (!ok || p.CostUsPerJob < c) {
			cheapest[p.Curve] = p.CostUsPerJob
		}
	}
	for i := range s.Points {
		p := &s.Points[i]
		p.CostRatio, p.Over = 0, false
		if c := cheapest[p.Curve]; c > 0 && p.CostUsPerJob > 0 {
			p.CostRatio = round2(p.CostUsPerJob / c)
			p.Over = p.CostUsPerJob > c*s.Budget
		}
	}
}

// WriteSweepJSON writes s as indented JSON to path.
func WriteSweepJSON(path string, s *Sweep) error { return writeJSONFile(path, s) }

// WriteSweepSVG draws s to path: per point, the rate against the left axis
// and the cost per job against the right; for a soak, rate and p99 over
// time.
func WriteSweepSVG(path string, s *Sweep) error { return writeSVGFile(path, SweepSVG(s)) }

// Colours of a sweep's second curve (topics), beside colorLeft and
// colorRight for the first.
const (
	colorLeft2  = "#1a7f37"
	colorRight2 = "#8250df"
)

// SweepSVG renders the chart WriteSweepSVG writes. Points sit at even steps
// of the x axis in the order measured, labelled with their values, since
// dimensions mix scales (0 B to 16 KB, 1 to 10⁶ keys, a unique-keys point).
func SweepSVG(s *Sweep) []byte {
	if len(s.Samples) > 0 {
		c := soakChart(s)
		return c.render()
	}
	c := chart{
		title:    fmt.Sprintf("sweep %s: %s/s and cost per %s", s.Dimension, s.Unit, s.one()),
		subtitle: sweepSubtitle(s),
		xLabel:   s.Dimension,
		yLabel:   s.Unit + "/s",
		y2Label:  "CPU µs per " + s.one(),
	}
	n := float64(max(len(s.Points), 1))
	c.x = func(v float64) float64 { return (v + 0.5) / n }
	c.xFmt = func(v float64) string {
		// The bare value: a curve's name would crowd the axis, and the
		// legend and the axis label tell the curves apart.
		if i := int(v); i >= 0 && i < len(s.Points) {
			return s.Points[i].Label
		}
		return ""
	}
	var curves []string
	byCurve := map[string][2]*series{}
	yMax, y2Max := 0.0, 0.0
	for i, p := range s.Points {
		pair, ok := byCurve[p.Curve]
		if !ok {
			left, right := colorLeft, colorRight
			if len(curves) > 0 {
				left, right = colorLeft2, colorRight2
			}
			pair = [2]*series{{name: s.Unit + "/s", color: left}, {name: "CPU µs", color: right, right: true}}
			if s.pointLabel(p) != p.Label {
				// Two curves make four entries in the one-line legend:
				// the curve's name alone, short, fits them in.
				short := strings.Replace(p.Curve, "subscriptions", "subs", 1)
				pair[0].name, pair[1].name = short, short+" CPU"
			}
			byCurve[p.Curve] = pair
			curves = append(curves, p.Curve)
		}
		x := float64(i)
		pair[0].xs, pair[0].ys = append(pair[0].xs, x), append(pair[0].ys, p.PerSec)
		pair[1].xs, pair[1].ys = append(pair[1].xs, x), append(pair[1].ys, p.CostUsPerJob)
		c.xTicks = append(c.xTicks, x)
		yMax, y2Max = max(yMax, p.PerSec), max(y2Max, p.CostUsPerJob)
	}
	for _, curve := range curves {
		c.series = append(c.series, *byCurve[curve][0], *byCurve[curve][1])
	}
	if len(curves) > 1 {
		c.xLabel = strings.Join(curves, ", then ")
	}
	if len(s.Points) == 0 {
		c.empty = "no points measured"
	}
	c.yTicks, c.yTop, c.yStep = niceTicks(yMax, 5)
	c.y2Ticks, c.y2Top, c.y2Step = niceTicks(y2Max, 5)
	return c.render()
}

// soakChart draws a soak's samples: rate and p99 over time.
func soakChart(s *Sweep) chart {
	c := chart{
		title:    "sweep soak: rate and p99 start latency over time",
		subtitle: sweepSubtitle(s),
		xLabel:   "time since start (s)",
		yLabel:   "jobs/s",
		y2Label:  "p99 start latency (ms)",
	}
	rate := series{name: "jobs/s", color: colorLeft}
	p99 := series{name: "p99 ms", color: colorRight, right: true}
	end, yMax, y2Max := 0.0, 0.0, 0.0
	for _, smp := range s.Samples {
		rate.xs, rate.ys = append(rate.xs, smp.AtSec), append(rate.ys, smp.Rate)
		p99.xs, p99.ys = append(p99.xs, smp.AtSec), append(p99.ys, smp.LatencyMs.P99)
		end, yMax, y2Max = max(end, smp.AtSec), max(yMax, smp.Rate), max(y2Max, smp.LatencyMs.P99)
	}
	c.series = []series{rate, p99}
	c.setTimeAxes(end, yMax, y2Max)
	return c
}

// sweepSubtitle names the system, driver, commit and date, and the points
// over budget.
func sweepSubtitle(s *Sweep) string {
	sub := subtitle(&Report{System: s.System, Driver: s.Driver, Commit: s.Commit, StartedAt: s.StartedAt})
	var over []string
	for _, p := range s.Points {
		if p.Over {
			over = append(over, s.pointLabel(p))
		}
	}
	if len(over) > 0 {
		sub += fmt.Sprintf(" · over %.2f× the cheapest: %s", s.Budget, strings.Join(over, ", "))
	}
	return sub
}

// one is the thing Unit counts, in the singular.
func (s *Sweep) one() string {
	if s.Unit == "deliveries" {
		return "delivery"
	}
	return "job"
}

// pointLabel is p's label, after its curve's name when the sweep has
// more than one curve (topics: subscriptions and topics).
func (s *Sweep) pointLabel(p SweepPoint) string {
	for _, q := range s.Points {
		if q.Curve != p.Curve {
			return p.Curve + " " + p.Label
		}
	}
	return p.Label
}

// sweepRows are the points as table cells, with a header row first.
func sweepRows(s *Sweep) [][]string {
	rows := [][]string{{s.Dimension, s.Unit + "/s", "insert/s", "store CPU µs", "client CPU µs", "WAL B",
		"claim p50 / p99 ms", "claim call ms · jobs", "table / index", "done / inserted", "cost ×", "over"}}
	size := func(v *int64) string {
		if v == nil {
			return "-"
		}
		return formatBytes(*v)
	}
	for _, p := range s.Points {
		label := s.pointLabel(p)
		cost := costCells(p.Cost)
		over := ""
		if p.Over {
			over = "over"
		}
		rows = append(rows, []string{label, formatRate(p.PerSec), formatRate(p.InsertPerSec), cost[0], cost[1], cost[2],
			formatMs(p.ClaimLatencyMs.P50) + " / " + formatMs(p.ClaimLatencyMs.P99), formatMs(p.ClaimStatementMs) + " · " + formatRate(p.JobsPerClaim), size(p.TableBytes) + " / " + size(p.IndexBytes),
			formatInt(p.Done) + " / " + formatInt(p.Inserted), formatRatio(p.CostRatio), over})
	}
	return rows
}

// soakRows are the soak's samples as table cells, with a header row first.
func soakRows(s *Sweep) [][]string {
	rows := [][]string{{"at s", "jobs/s", "p50 / p99 ms", "table / index", "dead tuples"}}
	for _, smp := range s.Samples {
		size, idx, dead := "-", "-", "-"
		if smp.TableBytes != nil {
			size = formatBytes(*smp.TableBytes)
		}
		if smp.IndexBytes != nil {
			idx = formatBytes(*smp.IndexBytes)
		}
		if smp.DeadTuples != nil {
			dead = formatInt(*smp.DeadTuples)
		}
		rows = append(rows, []string{formatFloat(smp.AtSec, 0), formatRate(smp.Rate),
			formatMs(smp.LatencyMs.P50) + " / " + formatMs(smp.LatencyMs.P99), size + " / " + idx, dead})
	}
	return rows
}

// maintenanceRows are the maintenance statements as table cells.
func maintenanceRows(s *Sweep) [][]string {
	rows := [][]string{{"hot table", "pass", "statement", "wall ms", "planning ms", "execution ms", "JIT"}}
	for _, m := range s.Maintenance {
		jit := "no"
		if m.JIT {
			jit = "yes, " + formatMs(m.JITMs) + " ms"
		}
		rows = append(rows, []string{m.Table, m.Pass, m.Statement, formatMs(m.WallMs), formatMs(m.PlanningMs), formatMs(m.ExecutionMs), jit})
	}
	return rows
}

// topStatementRows are pg_stat_statements' top statements as table cells,
// each statement cut to its first 90 characters.
func topStatementRows(s *Sweep) [][]string {
	rows := [][]string{{"statement", "calls", "total ms", "mean ms", "rows", "WAL B"}}
	for _, t := range s.TopStatements {
		q := []rune(oneLine(t.Query))
		if len(q) > 90 {
			q = append(q[:89], '…')
		}
		rows = append(rows, []string{string(q), formatInt(t.Calls), formatFloat(t.TotalMs, 0), formatMs(t.MeanMs),
			formatInt(t.Rows), formatInt(t.WALBytes)})
	}
	return rows
}

// WriteSweepTable prints s for a terminal: settings, the points (or soak
// samples), the maintenance statements and the notes.
func WriteSweepTable(w io.Writer, s *Sweep) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "sweep\t%s (%s)\n", s.Dimension, s.Driver)
	fmt.Fprintf(tw, "settings\t%s\n", s.Settings)
	fmt.Fprintf(tw, "command\t%s\n", s.Command)
	fmt.Fprintf(tw, "commit\t%s\n", s.Commit)
	fmt.Fprintf(tw, "machine\t%s\n", s.Machine)
	fmt.Fprintf(tw, "cost basis\t%s; over: above %.2f× the curve's cheapest point\n", s.CostBasis, s.Budget)
	tw.Flush()
	for _, table := range [][][]string{sweepRows(s), soakRows(s), maintenanceRows(s), topStatementRows(s)} {
		if len(table) < 2 {
			continue
		}
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, row := range table {
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		tw.Flush()
	}
	for _, n := range s.Notes {
		fmt.Fprintln(w, "note:", n)
	}
}

// SweepMarkdown renders s as a section for docs/benchmarks.md: what ran
// where, then the same tables as WriteSweepTable.
func SweepMarkdown(s *Sweep) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Sweep: %s — %s\n\n", oneLine(s.Dimension), s.StartedAt.Format("2006-01-02"))
	fmt.Fprintf(&b, "- Machine: %s\n- Commit: `%s`\n- Driver: %s\n- Settings: %s\n- Cost basis: %s; over: above %.2f× the curve's cheapest point\n\n",
		oneLine(s.Machine), s.Commit, s.Driver, oneLine(s.Settings), s.CostBasis, s.Budget)
	fence := codeFence(s.Command)
	fmt.Fprintf(&b, "%s\n%s\n%s\n", fence, s.Command, fence)
	for _, table := range [][][]string{sweepRows(s), soakRows(s), maintenanceRows(s), topStatementRows(s)} {
		if len(table) < 2 {
			continue
		}
		b.WriteString("\n")
		for i, row := range table {
			cells := make([]string, len(row))
			for j, c := range row {
				cells[j] = cell(c)
			}
			fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
			if i == 0 {
				fmt.Fprintf(&b, "|%s\n", strings.Repeat("---|", len(row)))
			}
		}
	}
	for _, n := range s.Notes {
		fmt.Fprintf(&b, "\n- %s", oneLine(n))
	}
	if len(s.Notes) > 0 {
		b.WriteString("\n")
	}
	return b.String()
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// formatBytes prints a size in B, KB, MB or GB (powers of 1024).
func formatBytes(n int64) string {
	v, unit := float64(n), "B"
	for _, u := range []string{"KB", "MB", "GB"} {
		if math.Abs(v) < 1024 {
			break
		}
		v, unit = v/1024, u
	}
	if unit == "B" {
		return formatInt(n) + " B"
	}
	return formatFloat(v, 1) + " " + unit
}
