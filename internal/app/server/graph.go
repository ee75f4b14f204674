package server

import (
	"cmp"
	"fmt"
	"html/template"
	"slices"
	"strings"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
)

// The workflow page draws a workflow as an SVG made here, on the server,
// so that it needs no script and no library: steps in columns by depth
// (each one column right of its deepest parent), ordered in each column to
// sit near their parents, with an edge from each parent to each child and
// every step coloured by its state.

// Graph geometry, in SVG user units.
const (
	nodeW, nodeH = 176, 46
	colGap       = 64
	rowGap       = 18
	margin       = 16
)

// graphNode is one step as drawn.
type graphNode struct {
	drovertype.JobResult
	X, Y  int
	Depth int
	// Focus marks the job the page was opened for.
	Focus bool
}

// graphEdge is one dependency as drawn: a cubic curve from the parent's
// right side to the child's left side.
type graphEdge struct {
	Parent, Child int64
	Path          string
}

// graphLayout is a workflow laid out for the page.
type graphLayout struct {
	Nodes         []graphNode
	Edges         []graphEdge
	Width, Height int
}

// layoutGraph places the jobs of g in columns by depth from the steps
// that wait for nothing, each column ordered by the mean row of its
// parents (the barycentre, which keeps most edges short and uncrossed),
// then by ID.
func layoutGraph(g *drover.WorkflowGraph, focus int64) graphLayout {
	parents := map[int64][]int64{}
	children := map[int64][]int64{}
	for _, e := range g.Edges {
		parents[e.Child] = append(parents[e.Child], e.Parent)
		children[e.Parent] = append(children[e.Parent], e.Child)
	}
	// Depths in topological order (Kahn): the graph has no cycle, since
	// a step can only wait for steps stored before it.
	depth := map[int64]int{}
	waiting := map[int64]int{}
	var queue []int64
	for _, j := range g.Jobs {
		waiting[j.ID] = len(parents[j.ID])
		if waiting[j.ID] == 0 {
			queue = append(queue, j.ID)
		}
	}
	slices.Sort(queue)
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		for _, c := range children[id] {
			depth[c] = max(depth[c], depth[id]+1)
			if waiting[c]--; waiting[c] == 0 {
				queue = append(queue, c)
			}
		}
	}
	columns := map[int][]drovertype.JobResult{}
	maxDepth := 0
	for _, j := range g.Jobs {
		d := depth[j.ID]
		columns[d] = append(columns[d], j)
		maxDepth = max(maxDepth, d)
	}
	row := map[int64]float64{}
	out := graphLayout{}
	pos := map[int64]graphNode{}
	tallest := 0
	for d := 0; d <= maxDepth; d++ {
		col := columns[d]
		bary := func(j drovertype.JobResult) float64 {
			ps := parents[j.ID]
			if len(ps) == 0 {
				return float64(j.ID)
			}
			var sum float64
			for _, p := range ps {
				sum += row[p]
			}
			return sum / float64(len(ps))
		}
		slices.SortStableFunc(col, func(a, b drovertype.JobResult) int {
			return cmp.Or(cmp.Compare(bary(a), bary(b)), cmp.Compare(a.ID, b.ID))
		})
		for i, j := range col {
			row[j.ID] = float64(i)
			n := graphNode{JobResult: j, Depth: d, Focus: j.ID == focus,
				X: margin + d*(nodeW+colGap), Y: margin + i*(nodeH+rowGap)}
			pos[j.ID] = n
			out.Nodes = append(out.Nodes, n)
		}
		tallest = max(tallest, len(col))
	}
	for _, e := range g.Edges {
		p, c := pos[e.Parent], pos[e.Child]
		x1, y1 := p.X+nodeW, p.Y+nodeH/2
		x2, y2 := c.X, c.Y+nodeH/2
		mid := (x1 + x2) / 2
		out.Edges = append(out.Edges, graphEdge{Parent: e.Parent, Child: e.Child,
			Path: fmt.Sprintf("M%d,%d C%d,%d %d,%d %d,%d", x1, y1, mid, y1, mid, y2, x2-4, y2)})
	}
	out.Width = 2*margin + (maxDepth+1)*nodeW + maxDepth*colGap
	out.Height = 2*margin + tallest*nodeH + max(tallest-1, 0)*rowGap
	return out
}

// svg renders the layout. Every value it writes is a number the layout
// computed, a state (one of drovertype.JobStates) or text escaped here.
func (l graphLayout) svg() template.HTML {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="graph" id="workflow-graph" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="workflow graph">`,
		l.Width, l.Height, l.Width, l.Height)
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="8" markerHeight="8" orient="auto">` +
		`<path d="M0,0 L8,4 L0,8 z" class="arrow"/></marker></defs>`)
	for _, e := range l.Edges {
		fmt.Fprintf(&b, `<path class="edge" d="%s" marker-end="url(#arrow)" data-parent="%d" data-child="%d"/>`, e.Path, e.Parent, e.Child)
	}
	for _, n := range l.Nodes {
		focus := ""
		if n.Focus {
			focus = " focus"
		}
		fmt.Fprintf(&b, `<a href="/ui/jobs/%d"><g class="node %s%s" data-id="%d" data-state="%s"><title>job %d %s: %s</title>`,
			n.ID, n.State, focus, n.ID, n.State, n.ID, template.HTMLEscapeString(n.Kind), n.State)
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" rx="6"/>`, n.X, n.Y, nodeW, nodeH)
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="label">#%d %s</text>`, n.X+10, n.Y+19, n.ID, template.HTMLEscapeString(ellipsis(n.Kind, 18)))
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="sub">%s</text></g></a>`, n.X+10, n.Y+36, n.State)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// ellipsis cuts s to n runes, marking the cut.
func ellipsis(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
