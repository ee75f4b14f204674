package report

import "fmt"

// LagSample is one reading of a fan-out run's subscriptions: the largest
// lag (messages published and not yet acknowledged) of any of them,
// Seconds after publishing started.
type LagSample struct {
	Seconds float64 `json:"seconds"`
	MaxLag  int64   `json:"max_lag"`
}

// LagRun is the lag over time of one run (one point of `bench fanout`).
type LagRun struct {
	Name    string
	Samples []LagSample
}

// MaxLag is the largest lag of the samples, 0 without any.
func MaxLag(samples []LagSample) int64 {
	var m int64
	for _, s := range samples {
		m = max(m, s.MaxLag)
	}
	return m
}

// lagColors tell the runs apart; past the last one they repeat.
var lagColors = []string{colorLeft, colorRight, "#2da44e", "#8250df", "#bf8700", "#cf222e"}

// LagSVG draws the largest subscription lag over time, one line per run,
// drawn like WriteSVG's charts. A lag that keeps growing means the
// consumers fall behind the publishers; a plateau that returns to zero is
// a backlog drained.
func LagSVG(title, subtitle string, runs []LagRun) []byte {
	c := chart{title: title, subtitle: subtitle, xLabel: "time since publishing started (s)", yLabel: "largest subscription lag (messages)"}
	end, yMax, drawn := 0.0, 0.0, false
	for i, r := range runs {
		s := series{name: r.Name, color: lagColors[i%len(lagColors)]}
		for _, p := range r.Samples {
			s.xs, s.ys = append(s.xs, p.Seconds), append(s.ys, float64(p.MaxLag))
			end, yMax = max(end, p.Seconds), max(yMax, float64(p.MaxLag))
		}
		if len(s.xs) > 0 {
			c.series = append(c.series, s)
			drawn = true
			if m := MaxLag(r.Samples); m > 0 {
				c.guides = append(c.guides, guide{label: fmt.Sprintf("%s: max %d", r.Name, m), value: float64(m)})
			}
		}
	}
	if !drawn {
		c.empty = "no lag samples"
	}
	var xStep, xTop float64
	c.xTicks, xTop, xStep = niceTicks(end, 8)
	c.x = func(v float64) float64 { return v / xTop }
	c.xFmt = func(v float64) string { return tickLabel(v, xStep) }
	c.yTicks, c.yTop, c.yStep = niceTicks(yMax, 5)
	c.y2Top = 1
	return c.render()
}
