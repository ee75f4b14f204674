package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteTable prints a human-readable summary of r: the headline figures,
// then the scaling points and the per-window series when present, so that
// whoever runs the bench can judge warm-up and scaling at a glance without
// opening the JSON. Write errors are ignored, as for any terminal output.
func WriteTable(w io.Writer, r *Report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(label, value string) {
		fmt.Fprintf(tw, "%s\t%s\n", label, value)
	}

	row("scenario", r.Scenario)
	row("system / driver", r.System+" / "+r.Driver)
	if r.Settings != "" {
		row("settings", r.Settings)
	}
	if r.Command != "" {
		row("command", r.Command)
	}
	row("commit", r.Commit)
	row("machine", r.Machine)
	if !r.StartedAt.IsZero() {
		row("started", r.StartedAt.Format("2006-01-02 15:04:05 MST"))
	}
	row("jobs", formatInt(r.Jobs))
	row("seconds", formatFloat(r.Seconds, 2))
	row("jobs/s", formatRate(r.JobsPerSec))
	row("steady jobs/s", formatRate(r.SteadyJobsPerSec))
	row("insert/s", formatRate(r.InsertPerSec))
	row("latency ms p50/p95/p99/max", formatPercentiles(r.LatencyMs))
	row("start latency ms p50/p95/p99/max", formatPercentiles(r.StartLatencyMs))
	if w := r.WarmupStartLatencyMs; w != nil {
		row("warm-up start latency ms p50/p95/p99/max", formatPercentiles(*w))
	}
	row("lost / duplicates", formatInt(r.Lost)+" / "+formatInt(r.Duplicates))
	if c := r.Chaos; c != nil {
		row("fault", fmt.Sprintf("%s at %ss for %ss", c.Fault, formatFloat(c.FaultAtSec, 1), formatFloat(c.FaultSeconds, 1)))
		row("jobs/s before / during / after", formatRate(c.JobsPerSecBefore)+" / "+formatRate(c.JobsPerSecDuring)+" / "+formatRate(c.JobsPerSecAfter))
		recovery := "never"
		if c.RecoverySeconds >= 0 {
			recovery = formatFloat(c.RecoverySeconds, 1)
		}
		row("recovery s (rate back to 90%)", recovery)
		if c.Fault == "failover" {
			row("failover s (kill to a write on the new primary)", formatFloat(c.FailoverSeconds, 1))
		}
		row("unexplained duplicates", formatInt(c.UnexplainedDuplicates))
	}
	for _, c := range r.costRows() {
		row(c[0], c[1])
	}
	for _, ref := range r.references() {
		row(ref.kind+" ("+ref.Name+") jobs/s", formatRate(ref.JobsPerSec))
	}
	for _, v := range r.viaRows() {
		row(v[0], v[1])
	}
	for _, k := range sortedKeys(r.DB) {
		row("db "+k, formatAny(r.DB[k]))
	}
	tw.Flush()

	if len(r.Points) > 0 {
		fmt.Fprintln(w)
		cols := columnsOf(r.Points)
		fmt.Fprintln(tw, strings.ToLower(strings.Join(pointHeaders(kLabel(r.Points), cols), "\t")))
		for _, p := range r.Points {
			fmt.Fprintln(tw, strings.Join(pointCells(p, cols), "\t"))
		}
		tw.Flush()
	}

	if len(r.Windows) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(tw, "start s\tseconds\tjobs\tjobs/s\tclaim ms\tcomplete ms\thandler ms\tbacklog\tp99 ms")
		for _, win := range r.Windows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
				formatFloat(win.StartSec, 1), formatFloat(win.Seconds, 1), formatInt(win.Jobs),
				formatRate(win.Rate), formatMs(win.ClaimMs), formatMs(win.CompleteMs), formatMs(win.HandlerMs),
				formatInt(win.Backlog), formatMs(win.P99Ms))
		}
		tw.Flush()
	}

	if len(r.Health) > 0 {
		fmt.Fprintln(w)
		writeHealth(tw, r.Health)
		tw.Flush()
	}

	if r.SteadyNote != "" || len(r.Notes) > 0 {
		fmt.Fprintln(w)
	}
	if r.SteadyNote != "" {
		fmt.Fprintln(w, r.SteadyNote)
	}
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note: "+n)
	}
}

// pointColumns says which optional columns the points table has: every
// round's rate (--rounds) and the raw SQL floor at the point's number of
// clients (scale with --floor on PostgreSQL).
type pointColumns struct {
	rounds, floor, cost bool
}

func columnsOf(points []Point) pointColumns {
	return pointColumns{
		rounds: hasRounds(points),
		floor:  slices.ContainsFunc(points, func(p Point) bool { return p.FloorJobsPerSec > 0 }),
		cost:   slices.ContainsFunc(points, func(p Point) bool { return p.Cost.Measured() }),
	}
}

// pointHeaders are the column names of the points table as the Markdown
// section writes them, label naming K; the terminal table lowercases them.
// pointCells are one point's cells, the same in both.
func pointHeaders(label string, cols pointColumns) []string {
	h := []string{capitalise(label), "Jobs", "Seconds", "Jobs/s", "Steady jobs/s", "Factor", "Efficiency",
		"p50 ms", "p99 ms", "Start p99 ms", "Lost", "Duplicates"}
	if cols.floor {
		h = append(h, "Floor jobs/s (K clients)", "× floor")
	}
	if cols.cost {
		for _, f := range costFigures {
			h = append(h, capitalise(f.label))
		}
	}
	if cols.rounds {
		h = append(h, "Steady jobs/s of each round")
	}
	return h
}

func pointCells(p Point, cols pointColumns) []string {
	c := []string{strconv.Itoa(p.K()), formatInt(p.Jobs), formatFloat(p.Seconds, 2),
		formatRate(p.JobsPerSec), formatRate(p.SteadyJobsPerSec),
		formatRatio(p.Factor), formatRatio(p.Efficiency),
		formatMs(p.LatencyMs.P50), formatMs(p.LatencyMs.P99), formatMs(p.StartLatencyMs.P99),
		formatInt(p.Lost), formatInt(p.Duplicates)}
	if cols.floor {
		if p.FloorJobsPerSec > 0 {
			c = append(c, formatRate(p.FloorJobsPerSec), formatRatio(p.SteadyJobsPerSec/p.FloorJobsPerSec))
		} else {
			c = append(c, "-", "-")
		}
	}
	if cols.cost {
		c = append(c, costCells(p.Cost)...)
	}
	if cols.rounds {
		each := make([]string, len(p.Rounds))
		for i, v := range p.Rounds {
			each[i] = formatRate(v)
		}
		c = append(c, strings.Join(each, " · "))
	}
	return c
}

// kLabel names the parallelism column after what the points vary, so that a
// reader does not have to guess whether K counts processes or streams.
func kLabel(points []Point) string {
	var procs, streams, instances bool
	for _, p := range points {
		procs = procs || p.Processes != 0
		streams = streams || (p.Processes == 0 && p.Streams != 0)
		instances = instances || p.Instances != 0
	}
	switch {
	case instances:
		return "instances"
	case procs && !streams:
		return "processes"
	case streams && !procs:
		return "streams"
	default:
		return "K"
	}
}

// writeHealth prints one line per health sample, tab-separated for w (a
// tabwriter or a Markdown table writer alike).
func writeHealth(w io.Writer, hs []HealthSample) {
	fmt.Fprintln(w, "at s\tlive rows\tdead rows\ttable KiB\tindex KiB\tdead %\tfree %\tautovacuums\tfinished MiB")
	for _, h := range hs {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			formatFloat(h.AtSec, 0), formatInt(h.LiveTuples), formatInt(h.DeadTuples),
			formatInt(h.TableBytes/1024), formatInt(h.IndexBytes/1024),
			formatFloat(h.DeadPercent, 1), formatFloat(h.FreePercent, 1),
			formatInt(h.AutovacuumCount), formatInt(h.FinishedBytes>>20))
	}
}
