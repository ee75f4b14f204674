package report

import "strings"

// costFigure is one resource of Cost: its label in the outputs, how to
// read it from a Cost and how many decimals it shows.
type costFigure struct {
	label string
	get   func(Cost) *float64
	dec   int
}

var costFigures = []costFigure{
	{"store CPU µs/job", func(c Cost) *float64 { return c.StoreCPUUsPerJob }, 2},
	{"client CPU µs/job", func(c Cost) *float64 { return c.ClientCPUUsPerJob }, 2},
	{"WAL bytes/job", func(c Cost) *float64 { return c.WALBytesPerJob }, 0},
}

// costRows renders the run's cost per job beside that of its references
// (the store ceiling and the raw SQL floor, measured in the same run), one
// row per resource any of them measured: "14.03 (ceiling 15.71, floor
// 12.48)".
func (r *Report) costRows() [][2]string {
	var rows [][2]string
	for _, f := range costFigures {
		value, any := "-", false
		if v := f.get(r.Cost); v != nil {
			value, any = formatFloat(*v, f.dec), true
		}
		var beside []string
		for _, ref := range r.references() {
			if v := f.get(ref.Cost); v != nil {
				beside = append(beside, ref.kind+" "+formatFloat(*v, f.dec))
				any = true
			}
		}
		if !any {
			continue
		}
		if len(beside) > 0 {
			value += " (" + strings.Join(beside, ", ") + ")"
		}
		rows = append(rows, [2]string{f.label, value})
	}
	return rows
}

// costCells are a point's cost cells, "-" where not measured.
func costCells(c Cost) []string {
	out := make([]string, len(costFigures))
	for i, f := range costFigures {
		out[i] = "-"
		if v := f.get(c); v != nil {
			out[i] = formatFloat(*v, f.dec)
		}
	}
	return out
}
