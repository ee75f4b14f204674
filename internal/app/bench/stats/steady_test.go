package stats

import (
	"math"
	"testing"
)

// curve builds windows of the given length from per-window rates, with a
// backlog that stays positive so that no window looks drained.
func curve(seconds float64, rates ...float64) []Window {
	ws := make([]Window, len(rates))
	for i, r := range rates {
		jobs := int64(math.Round(r * seconds))
		ws[i] = Window{
			StartSec: float64(i) * seconds,
			Seconds:  seconds,
			Jobs:     jobs,
			Rate:     float64(jobs) / seconds,
			Backlog:  1000,
		}
	}
	return ws
}

// withTail appends a final window of the given length, rate and backlog.
func withTail(ws []Window, seconds, rate float64, backlog int64) []Window {
	start := 0.0
	if n := len(ws); n > 0 {
		start = ws[n-1].StartSec + ws[n-1].Seconds
	}
	jobs := int64(math.Round(rate * seconds))
	return append(ws, Window{StartSec: start, Seconds: seconds, Jobs: jobs, Rate: float64(jobs) / seconds, Backlog: backlog})
}

func TestSteadyState(t *testing.T) {
	tests := []struct {
		name      string
		ws        []Window
		wantFirst int
		wantEnd   int
		wantRate  float64
	}{
		{
			name:      "empty",
			ws:        nil,
			wantFirst: 0, wantEnd: 0, wantRate: 0,
		},
		{
			name:      "one window falls back to the whole run",
			ws:        curve(5, 100),
			wantFirst: 0, wantEnd: 1, wantRate: 100,
		},
		{
			name:      "two windows fall back to the whole run",
			ws:        curve(5, 100, 300),
			wantFirst: 0, wantEnd: 2, wantRate: 200,
		},
		{
			name: "three windows minus a short tail fall back to the whole run",
			ws:   withTail(curve(5, 100, 300), 1, 50, 1000),
			// (500 + 1500 + 50) jobs / 11 s
			wantFirst: 0, wantEnd: 3, wantRate: 2050.0 / 11,
		},
		{
			name:      "flat",
			ws:        curve(5, 1000, 1000, 1000, 1000, 1000, 1000),
			wantFirst: 0, wantEnd: 6, wantRate: 1000,
		},
		{
			name:      "ramp then plateau",
			ws:        curve(5, 100, 400, 800, 1000, 1000, 1000, 1000, 1000),
			wantFirst: 3, wantEnd: 8, wantRate: 1000,
		},
		{
			name: "ramp then noisy plateau",
			ws:   curve(5, 200, 600, 870, 1040, 960, 1010, 930, 1060, 990, 1000),
			// The median of the second half is 1000; 870 < 900 stays warm-up.
			wantFirst: 3, wantEnd: 10, wantRate: (1040 + 960 + 1010 + 930 + 1060 + 990 + 1000) / 7.0,
		},
		{
			name: "a stall on the plateau does not move the cut",
			ws:   curve(5, 500, 1000, 1000, 300, 1000, 1000),
			// The stalled window after the cut stays in the steady rate.
			wantFirst: 1, wantEnd: 6, wantRate: (1000 + 1000 + 300 + 1000 + 1000) / 5.0,
		},
		{
			name:      "short final window is excluded",
			ws:        withTail(curve(5, 500, 1000, 1000, 1000), 1.2, 200, 500),
			wantFirst: 1, wantEnd: 4, wantRate: 1000,
		},
		{
			name:      "drained final window is excluded",
			ws:        withTail(curve(5, 1000, 1000, 1000, 1000), 5, 400, 0),
			wantFirst: 0, wantEnd: 4, wantRate: 1000,
		},
		{
			name: "full final window with backlog is kept",
			ws:   withTail(curve(5, 1000, 1000, 1000), 5, 950, 10),
			// (3 × 5000 + 4750) / 20 s
			wantFirst: 0, wantEnd: 4, wantRate: 19750.0 / 20,
		},
		{
			name:      "no jobs at all",
			ws:        curve(5, 0, 0, 0, 0),
			wantFirst: 0, wantEnd: 4, wantRate: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first, end, rate := SteadyRange(tt.ws)
			if first != tt.wantFirst || end != tt.wantEnd {
				t.Errorf("SteadyRange range = [%d, %d), want [%d, %d)", first, end, tt.wantFirst, tt.wantEnd)
			}
			if math.Abs(rate-tt.wantRate) > 1e-9 {
				t.Errorf("SteadyRange rate = %v, want %v", rate, tt.wantRate)
			}
			f2, r2 := SteadyState(tt.ws)
			if f2 != first || r2 != rate {
				t.Errorf("SteadyState = (%d, %v), SteadyRange = (%d, %v)", f2, r2, first, rate)
			}
		})
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{3, 1}, 2},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	}
	for _, tt := range tests {
		in := append([]float64(nil), tt.in...)
		if got := Median(in); got != tt.want {
			t.Errorf("Median(%v) = %v, want %v", tt.in, got, tt.want)
		}
		for i := range in {
			if in[i] != tt.in[i] {
				t.Errorf("median modified its input: %v", in)
			}
		}
	}
}
