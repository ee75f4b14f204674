package report

import (
	"fmt"
	"strings"
)

// Markdown renders r as a section ready to paste into docs/benchmarks.md: a
// heading with the scenario and date, the machine, commit and exact command
// (so that anyone can reproduce the run), a table of the headline figures,
// a table of the scaling points when present, and the steady-state note.
func Markdown(r *Report) string {
	var b strings.Builder

	date := "undated"
	if !r.StartedAt.IsZero() {
		date = r.StartedAt.Format("2006-01-02")
	}
	fmt.Fprintf(&b, "### %s — %s\n\n", oneLine(r.Scenario), date)

	machine := r.Machine
	if machine == "" {
		machine = Machine()
	}
	commit := r.Commit
	if commit == "" {
		commit = "unknown"
	}
	system := r.System
	if system == "" {
		system = System
	}
	fmt.Fprintf(&b, "- Machine: %s\n", oneLine(machine))
	fmt.Fprintf(&b, "- Commit: `%s`\n", commit)
	fmt.Fprintf(&b, "- System: %s, driver: %s\n", oneLine(system), oneLine(r.Driver))
	if r.Settings != "" {
		fmt.Fprintf(&b, "- Settings: %s\n", oneLine(r.Settings))
	}
	if !r.StartedAt.IsZero() {
		fmt.Fprintf(&b, "- Started: %s\n", r.StartedAt.Format("2006-01-02 15:04:05 MST"))
	}
	b.WriteString("\n")

	if r.Command != "" {
		fence := codeFence(r.Command)
		fmt.Fprintf(&b, "%ssh\n%s\n%s\n\n", fence, r.Command, fence)
	}

	b.WriteString("| Figure | Value |\n|---|---:|\n")
	row := func(label, value string) {
		fmt.Fprintf(&b, "| %s | %s |\n", cell(label), cell(value))
	}
	row("Jobs", formatInt(r.Jobs))
	row("Duration", formatFloat(r.Seconds, 2)+" s")
	row("Throughput, whole run", formatRate(r.JobsPerSec)+" jobs/s")
	row("Throughput, steady state", formatRate(r.SteadyJobsPerSec)+" jobs/s")
	row("Insert rate", formatRate(r.InsertPerSec)+" jobs/s")
	row("Latency p50 / p95 / p99 / max", formatPercentiles(r.LatencyMs)+" ms")
	row("Start latency (insert→start) p50 / p95 / p99 / max", formatPercentiles(r.StartLatencyMs)+" ms")
	row("Lost / duplicates", formatInt(r.Lost)+" / "+formatInt(r.Duplicates))
	for _, c := range r.costRows() {
		row(capitalise(c[0]), c[1])
	}
	for _, ref := range r.references() {
		v := formatRate(ref.JobsPerSec) + " jobs/s"
		if ref.Command != "" {
			v += " (`" + ref.Command + "`)"
		}
		row(strings.ToUpper(ref.kind[:1])+ref.kind[1:]+": "+ref.Name, v)
	}
	for _, v := range r.viaRows() {
		row(capitalise(v[0]), v[1])
	}
	for _, k := range sortedKeys(r.DB) {
		row("Database: "+k, formatAny(r.DB[k]))
	}

	if len(r.Points) > 0 {
		cols := columnsOf(r.Points)
		headers := pointHeaders(kLabel(r.Points), cols)
		fmt.Fprintf(&b, "\n| %s |\n", strings.Join(headers, " | "))
		b.WriteString(strings.Repeat("|---:", len(headers)) + "|\n")
		for _, p := range r.Points {
			fmt.Fprintf(&b, "| %s |\n", strings.Join(pointCells(p, cols), " | "))
		}
	}

	if len(r.Health) > 0 {
		var tsv strings.Builder
		writeHealth(&tsv, r.Health)
		b.WriteString("\n")
		for i, line := range strings.Split(strings.TrimSpace(tsv.String()), "\n") {
			cols := strings.Split(line, "\t")
			fmt.Fprintf(&b, "| %s |\n", strings.Join(cols, " | "))
			if i == 0 {
				b.WriteString(strings.Repeat("|---:", len(cols)) + "|\n")
			}
		}
	}

	if r.SteadyNote != "" {
		fmt.Fprintf(&b, "\n%s\n", oneLine(r.SteadyNote))
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", oneLine(n))
		}
	}
	return b.String()
}

// cell makes s safe inside a Markdown table cell: a pipe would end the cell
// and a newline the row.
func cell(s string) string {
	return strings.ReplaceAll(oneLine(s), "|", `\|`)
}

// oneLine folds line breaks into spaces so that free-text fields cannot
// break the Markdown structure around them.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// codeFence returns a backtick fence longer than any backtick run in s, as
// CommonMark requires for the block not to end early.
func codeFence(s string) string {
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
