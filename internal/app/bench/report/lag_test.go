package report

import (
	"encoding/xml"
	"regexp"
	"strings"
	"testing"
)

func TestLagSVG(t *testing.T) {
	series := regexp.MustCompile(`data-series="([^"]*)"`)
	for _, tc := range []struct {
		name       string
		runs       []LagRun
		wantMax    []int64
		wantSeries []string
		want       []string
	}{
		{name: "no runs", want: []string{"no lag samples"}},
		{name: "a run without samples", runs: []LagRun{{Name: "1 consumers"}}, wantMax: []int64{0}, want: []string{"no lag samples"}},
		{name: "one run",
			runs:       []LagRun{{Name: "1 consumers", Samples: []LagSample{{0.25, 100}, {0.5, 1500}, {0.75, 40}, {1, 0}}}},
			wantMax:    []int64{1500},
			wantSeries: []string{"1 consumers"},
			want:       []string{"1 consumers: max 1500", "largest subscription lag"}},
		{name: "two runs",
			runs: []LagRun{
				{Name: "1 consumers", Samples: []LagSample{{0.25, 10}, {0.5, 0}}},
				{Name: "4 consumers", Samples: []LagSample{{0.25, 7}}},
			},
			wantMax:    []int64{10, 7},
			wantSeries: []string{"1 consumers", "4 consumers"},
			want:       []string{"1 consumers: max 10", "4 consumers: max 7", colorLeft, colorRight}},
		{name: "a run that never lagged draws no max guide",
			runs:       []LagRun{{Name: "idle", Samples: []LagSample{{0.25, 0}}}},
			wantMax:    []int64{0},
			wantSeries: []string{"idle"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i, r := range tc.runs {
				if got := MaxLag(r.Samples); got != tc.wantMax[i] {
					t.Errorf("MaxLag(%s) = %d, want %d", r.Name, got, tc.wantMax[i])
				}
			}
			svg := string(LagSVG("fanout: lag", "sqlite", tc.runs))
			if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
				t.Fatalf("not well-formed XML: %v", err)
			}
			var got []string
			for _, m := range series.FindAllStringSubmatch(svg, -1) {
				got = append(got, m[1])
			}
			if strings.Join(got, "|") != strings.Join(tc.wantSeries, "|") {
				t.Errorf("series %q, want %q", got, tc.wantSeries)
			}
			for _, w := range tc.want {
				if !strings.Contains(svg, w) {
					t.Errorf("SVG lacks %q", w)
				}
			}
			if len(tc.wantSeries) > 0 && strings.Contains(svg, "no lag samples") {
				t.Error("SVG says there are no samples")
			}
			if strings.Contains(svg, "NaN") || strings.Contains(svg, "Inf") {
				t.Error("SVG has a NaN or infinite coordinate")
			}
		})
	}
}
