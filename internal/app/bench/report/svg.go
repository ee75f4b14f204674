package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/app/bench/stats"
)

// WriteSVG draws r as a standalone SVG chart at path: jobs/s and efficiency
// against K when the report has scaling points, otherwise jobs/s and p99
// latency over time from the windows. Only SVG is written, because a raster
// image would need a font renderer the project does not otherwise depend
// on; a path with another extension, such as .png, is rejected before
// anything is written.
func WriteSVG(path string, r *Report) error { return writeSVGFile(path, SVG(r)) }

// writeSVGFile writes the chart svg to path, which must end in .svg (or
// have no extension), creating its directory.
func writeSVGFile(path string, svg []byte) error {
	if ext := strings.ToLower(filepath.Ext(path)); ext != ".svg" && ext != "" {
		return fmt.Errorf("report: cannot write chart %q: only SVG is supported, use a .svg path", path)
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	if err := os.WriteFile(path, svg, 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// SVG renders the chart that WriteSVG writes, for callers that serve or
// embed it instead of writing a file.
func SVG(r *Report) []byte {
	var c chart
	if len(r.Points) > 0 {
		c = scalingChart(r)
	} else {
		c = timeChart(r)
	}
	return c.render()
}

// Chart geometry in SVG user units. The margins leave room for tick labels
// on both vertical axes, the title above and the legend below.
const (
	chartW      = 760
	chartH      = 460
	plotLeft    = 80
	plotRight   = chartW - 80
	plotTop     = 70
	plotBottom  = chartH - 100
	colorLeft   = "#1f6feb"
	colorRight  = "#d9480f"
	colorMarker = "#6e7781"
)

// series is one line of the chart, drawn against the left axis or, when
// right is set, the right axis.
type series struct {
	name   string
	color  string
	right  bool
	xs, ys []float64
}

// guide is a dashed reference line: horizontal at a y value of the left axis
// (a steady rate or a floor), or vertical at an x value (the end of
// warm-up).
type guide struct {
	label    string
	value    float64
	vertical bool
}

type chart struct {
	title, subtitle         string
	xLabel, yLabel, y2Label string

	// x maps a data x value to [0, 1] across the plot.
	x      func(float64) float64
	xTicks []float64
	xFmt   func(float64) string

	yTop, y2Top     float64
	yTicks, y2Ticks []float64
	yStep, y2Step   float64

	series []series
	guides []guide
	empty  string // message drawn instead of series when there is no data
}

func scalingChart(r *Report) chart {
	steady := useSteadyRates(r.Points)
	rateName := "jobs/s"
	if steady {
		rateName = "steady jobs/s"
	}
	pts := append([]Point(nil), r.Points...)
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].K() < pts[j].K() })

	rate := series{name: rateName, color: colorLeft}
	eff := series{name: "efficiency", color: colorRight, right: true}
	var ks []float64
	yMax, effMax := 0.0, 1.2
	for _, p := range pts {
		k := float64(p.K())
		v := p.JobsPerSec
		if steady {
			v = p.SteadyJobsPerSec
		}
		rate.xs, rate.ys = append(rate.xs, k), append(rate.ys, v)
		eff.xs, eff.ys = append(eff.xs, k), append(eff.ys, p.Efficiency)
		ks = append(ks, k)
		yMax = max(yMax, v)
		effMax = max(effMax, p.Efficiency)
	}

	c := chart{
		title:    fmt.Sprintf("%s: %s by %s", r.Scenario, rateName, kLabel(pts)),
		subtitle: subtitle(r),
		yLabel:   rateName,
		y2Label:  "efficiency (factor / K)",
		series:   []series{rate, eff},
	}
	if floor := floorCurve(pts); len(floor.xs) > 0 {
		c.series = append(c.series, floor)
		for _, v := range floor.ys {
			yMax = max(yMax, v)
		}
	}
	c.xLabel = kLabel(pts)
	if c.xLabel == "K" {
		c.xLabel = "K (processes or streams)"
	}
	c.setKAxis(ks)
	for _, ref := range r.references() {
		if ref.JobsPerSec > 0 {
			c.guides = append(c.guides, guide{label: ref.kind + ": " + ref.Name, value: ref.JobsPerSec})
			yMax = max(yMax, ref.JobsPerSec)
		}
	}
	c.yTicks, c.yTop, c.yStep = niceTicks(yMax, 5)
	if effMax <= 1.2 {
		c.y2Step, c.y2Top = 0.2, 1.2
		c.y2Ticks = []float64{0, 0.2, 0.4, 0.6, 0.8, 1, 1.2}
	} else {
		c.y2Ticks, c.y2Top, c.y2Step = niceTicks(effMax, 6)
	}
	return c
}

// floorCurve is the raw SQL floor measured with K clients at the points
// that have it, drawn against the left axis beside Drover's rate.
func floorCurve(pts []Point) series {
	s := series{name: "SQL floor, K clients", color: colorMarker}
	for _, p := range pts {
		if p.FloorJobsPerSec > 0 {
			s.xs, s.ys = append(s.xs, float64(p.K())), append(s.ys, p.FloorJobsPerSec)
		}
	}
	return s
}

// setKAxis chooses a linear axis from 0, or a log2 axis when K spans more
// than a factor of 16, where a linear axis would crowd the small K values
// that matter most into its first few pixels. Ticks sit on the measured K
// values when there are few enough to label.
func (c *chart) setKAxis(ks []float64) {
	distinct := uniqueSorted(ks)
	lo, hi := distinct[0], distinct[len(distinct)-1]
	c.xFmt = func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	if lo >= 1 && hi/lo > 16 {
		c.xLabel += " (log scale)"
		// Half a doubling of padding keeps the end markers off the axes.
		l0, l1 := math.Log2(lo)-0.5, math.Log2(hi)+0.5
		c.x = func(v float64) float64 { return (math.Log2(v) - l0) / (l1 - l0) }
		if len(distinct) <= 12 {
			c.xTicks = distinct
		} else {
			for p := math.Exp2(math.Ceil(math.Log2(lo))); p <= hi; p *= 2 {
				c.xTicks = append(c.xTicks, p)
			}
		}
		return
	}
	if len(distinct) <= 12 {
		// The axis ends a little past the largest K so that its marker
		// does not sit on the right-hand axis line.
		top := max(hi*1.08, 1)
		c.x = func(v float64) float64 { return v / top }
		c.xTicks = uniqueSorted(append([]float64{0}, distinct...))
		return
	}
	ticks, top, step := niceTicks(hi*1.04, 8)
	c.x = func(v float64) float64 { return v / top }
	c.xTicks = ticks
	c.xFmt = func(v float64) string { return tickLabel(v, step) }
}

func timeChart(r *Report) chart {
	c := chart{
		title:    r.Scenario + ": throughput and p99 latency over time",
		subtitle: subtitle(r),
		xLabel:   "time since start (s)",
		yLabel:   "jobs/s",
		y2Label:  "p99 latency (ms)",
	}
	rate := series{name: "jobs/s", color: colorLeft}
	p99 := series{name: "p99 ms", color: colorRight, right: true}
	end, yMax, y2Max := 0.0, 0.0, 0.0
	for _, w := range r.Windows {
		mid := w.StartSec + w.Seconds/2
		rate.xs, rate.ys = append(rate.xs, mid), append(rate.ys, w.Rate)
		p99.xs, p99.ys = append(p99.xs, mid), append(p99.ys, w.P99Ms)
		end = max(end, w.StartSec+w.Seconds)
		yMax = max(yMax, w.Rate)
		y2Max = max(y2Max, w.P99Ms)
	}
	if len(r.Windows) == 0 {
		c.empty = "no windows recorded"
	} else {
		c.series = []series{rate, p99}
		if first, _ := stats.SteadyState(r.Windows); first > 0 {
			c.guides = append(c.guides, guide{label: "warm-up ends", value: r.Windows[first].StartSec, vertical: true})
		}
	}
	if r.SteadyJobsPerSec > 0 {
		c.guides = append(c.guides, guide{label: "steady " + formatRate(r.SteadyJobsPerSec) + " jobs/s", value: r.SteadyJobsPerSec})
		yMax = max(yMax, r.SteadyJobsPerSec)
	}
	c.setTimeAxes(end, yMax, y2Max)
	return c
}

// setTimeAxes sets an x axis of seconds from 0 to end, and both y axes
// from 0 to their largest values.
func (c *chart) setTimeAxes(end, yMax, y2Max float64) {
	var xStep, xTop float64
	c.xTicks, xTop, xStep = niceTicks(end, 8)
	c.x = func(v float64) float64 { return v / xTop }
	c.xFmt = func(v float64) string { return tickLabel(v, xStep) }
	c.yTicks, c.yTop, c.yStep = niceTicks(yMax, 5)
	c.y2Ticks, c.y2Top, c.y2Step = niceTicks(y2Max, 5)
}

func subtitle(r *Report) string {
	parts := []string{r.System, r.Driver}
	if r.Commit != "" {
		parts = append(parts, "commit "+r.Commit)
	}
	if !r.StartedAt.IsZero() {
		parts = append(parts, r.StartedAt.Format("2006-01-02"))
	}
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, " · ")
}

func (c *chart) px(x float64) float64 {
	return plotLeft + c.x(x)*(plotRight-plotLeft)
}

func (c *chart) py(y float64, right bool) float64 {
	top := c.yTop
	if right {
		top = c.y2Top
	}
	return plotBottom - y/top*(plotBottom-plotTop)
}

func (c *chart) render() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" font-family="Helvetica, Arial, sans-serif" font-size="12">`+"\n",
		chartW, chartH, chartW, chartH)
	fmt.Fprintf(&b, `<title>%s</title>`+"\n", esc(c.title))
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", chartW, chartH)
	text(&b, chartW/2, 28, "middle", `font-size="16" font-weight="bold"`, c.title)
	text(&b, chartW/2, 48, "middle", `fill="#57606a"`, c.subtitle)

	// Horizontal grid lines and left tick labels.
	for _, t := range c.yTicks {
		y := c.py(t, false)
		fmt.Fprintf(&b, `<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#e6e6e6"/>`+"\n", plotLeft, num(y), plotRight, num(y))
		text(&b, plotLeft-8, y+4, "end", "", tickLabel(t, c.yStep))
	}
	for _, t := range c.y2Ticks {
		text(&b, plotRight+8, c.py(t, true)+4, "start", "", tickLabel(t, c.y2Step))
	}
	for _, t := range c.xTicks {
		x := c.px(t)
		fmt.Fprintf(&b, `<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#333333"/>`+"\n", num(x), plotBottom, num(x), plotBottom+5)
		text(&b, x, plotBottom+20, "middle", "", c.xFmt(t))
	}

	// Axes.
	fmt.Fprintf(&b, `<path d="M%d %d V%d H%d V%d" fill="none" stroke="#333333"/>`+"\n", plotLeft, plotTop, plotBottom, plotRight, plotTop)
	text(&b, chartW/2, plotBottom+45, "middle", "", c.xLabel)
	vtext(&b, 22, (plotTop+plotBottom)/2, colorLeft, c.yLabel)
	vtext(&b, chartW-18, (plotTop+plotBottom)/2, colorRight, c.y2Label)

	for _, g := range c.guides {
		if g.vertical {
			x := c.px(g.value)
			fmt.Fprintf(&b, `<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="%s" stroke-dasharray="4 4"/>`+"\n", num(x), plotTop, num(x), plotBottom, colorMarker)
			text(&b, x+4, plotTop+12, "start", `fill="`+colorMarker+`"`, g.label)
			continue
		}
		y := c.py(g.value, false)
		fmt.Fprintf(&b, `<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="%s" stroke-dasharray="6 4"/>`+"\n", plotLeft, num(y), plotRight, num(y), colorMarker)
		text(&b, plotRight-4, y-5, "end", `fill="`+colorMarker+`"`, g.label)
	}

	if c.empty != "" {
		text(&b, (plotLeft+plotRight)/2, (plotTop+plotBottom)/2, "middle", `fill="#57606a"`, c.empty)
	}
	for _, s := range c.series {
		var pts []string
		for i := range s.xs {
			pts = append(pts, num(c.px(s.xs[i]))+","+num(c.py(s.ys[i], s.right)))
		}
		fmt.Fprintf(&b, `<polyline class="series" data-series="%s" points="%s" fill="none" stroke="%s" stroke-width="2" stroke-linejoin="round"/>`+"\n",
			esc(s.name), strings.Join(pts, " "), s.color)
		for i := range s.xs {
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`+"\n", num(c.px(s.xs[i])), num(c.py(s.ys[i], s.right)), s.color)
		}
	}

	// Legend, centred below the x-axis label. Entry widths are estimated
	// from the label length, as SVG cannot measure text before layout.
	if len(c.series) > 0 {
		labels := make([]string, len(c.series))
		widths := make([]float64, len(c.series))
		total := 0.0
		for i, s := range c.series {
			labels[i] = s.name + " (left axis)"
			if s.right {
				labels[i] = s.name + " (right axis)"
			}
			widths[i] = 30 + 6.5*float64(len([]rune(labels[i]))) + 30
			total += widths[i]
		}
		x := float64(chartW)/2 - total/2
		y := float64(chartH - 25)
		for i, s := range c.series {
			fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2"/>`+"\n", num(x), num(y), num(x+24), num(y), s.color)
			text(&b, x+30, y+4, "start", "", labels[i])
			x += widths[i]
		}
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

func text(b *bytes.Buffer, x, y float64, anchor, attrs, s string) {
	if attrs != "" {
		attrs = " " + attrs
	}
	fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="%s"%s>%s</text>`+"\n", num(x), num(y), anchor, attrs, esc(s))
}

// vtext draws an axis label rotated to run along a vertical axis.
func vtext(b *bytes.Buffer, x, y float64, color, s string) {
	fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle" fill="%s" transform="rotate(-90 %s %s)">%s</text>`+"\n",
		num(x), num(y), color, num(x), num(y), esc(s))
}

func esc(s string) string {
	var b strings.Builder
	// EscapeText only fails when the writer does.
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// num prints a coordinate with at most two decimals, which is finer than any
// screen and keeps the file small.
func num(v float64) string {
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

// niceTicks returns ticks from 0 to top, where top ≥ maxV, spaced by a step
// of 1, 2, 2.5 or 5 times a power of ten so that labels read as round
// numbers. About n intervals are produced; a non-positive maxV gives the
// axis 0–1.
func niceTicks(maxV float64, n int) (ticks []float64, top, step float64) {
	if !(maxV > 0) || math.IsInf(maxV, 0) {
		maxV = 1
	}
	raw := maxV / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	switch f := raw / mag; {
	case f <= 1:
		step = mag
	case f <= 2:
		step = 2 * mag
	case f <= 2.5:
		step = 2.5 * mag
	case f <= 5:
		step = 5 * mag
	default:
		step = 10 * mag
	}
	count := int(math.Ceil(maxV/step - 1e-9))
	for i := 0; i <= count; i++ {
		ticks = append(ticks, float64(i)*step)
	}
	return ticks, float64(count) * step, step
}

// tickLabel formats a tick with no more decimals than its step needs, and
// thousands as "k" once the step is at least 1000, so that labels stay
// short enough not to collide.
func tickLabel(v, step float64) string {
	if v == 0 {
		return "0"
	}
	suffix := ""
	if step >= 1000 {
		v, step, suffix = v/1000, step/1000, "k"
	}
	p := math.Pow(10, float64(decimals(step)))
	return strconv.FormatFloat(math.Round(v*p)/p, 'f', -1, 64) + suffix
}

// decimals returns how many decimals it takes to write multiples of step
// exactly, at most six.
func decimals(step float64) int {
	d := 0
	for ; d < 6; d++ {
		scaled := step * math.Pow(10, float64(d))
		if math.Abs(scaled-math.Round(scaled)) < 1e-9*math.Max(1, scaled) {
			break
		}
	}
	return d
}

func uniqueSorted(xs []float64) []float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
