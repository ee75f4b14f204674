package stats

import (
	"math"
	"testing"
)

func TestScaling(t *testing.T) {
	tests := []struct {
		name   string
		points []Point
		want   []Scaled
	}{
		{
			name:   "empty",
			points: nil,
			want:   nil,
		},
		{
			name:   "baseline K=1, unsorted input",
			points: []Point{{4, 3000}, {1, 1000}, {2, 1900}},
			want: []Scaled{
				{K: 1, JobsPerSec: 1000, Factor: 1, Efficiency: 1},
				{K: 2, JobsPerSec: 1900, Factor: 1.9, Efficiency: 0.95},
				{K: 4, JobsPerSec: 3000, Factor: 3, Efficiency: 0.75},
			},
		},
		{
			name:   "baseline K=2 keeps factor in units of K",
			points: []Point{{2, 2000}, {4, 4000}, {8, 6000}},
			want: []Scaled{
				{K: 2, JobsPerSec: 2000, Factor: 2, Efficiency: 1},
				{K: 4, JobsPerSec: 4000, Factor: 4, Efficiency: 1},
				{K: 8, JobsPerSec: 6000, Factor: 6, Efficiency: 0.75},
			},
		},
		{
			name:   "zero baseline rate gives zero factors",
			points: []Point{{1, 0}, {2, 100}},
			want: []Scaled{
				{K: 1, JobsPerSec: 0},
				{K: 2, JobsPerSec: 100},
			},
		},
		{
			name:   "K below 1 is ignored",
			points: []Point{{0, 50}, {1, 100}, {3, 240}},
			want: []Scaled{
				{K: 1, JobsPerSec: 100, Factor: 1, Efficiency: 1},
				{K: 3, JobsPerSec: 240, Factor: 2.4, Efficiency: 0.8},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Scaling(tt.points)
			if len(got) != len(tt.want) {
				t.Fatalf("Scaling = %+v, want %+v", got, tt.want)
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				if g.K != w.K || g.JobsPerSec != w.JobsPerSec ||
					math.Abs(g.Factor-w.Factor) > 1e-12 || math.Abs(g.Efficiency-w.Efficiency) > 1e-12 {
					t.Errorf("Scaling[%d] = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestNonDecreasing(t *testing.T) {
	tests := []struct {
		name      string
		points    []Point
		tolerance float64
		want      bool
	}{
		{"empty", nil, 0, true},
		{"single", []Point{{1, 10}}, 0, true},
		{"increasing, unsorted", []Point{{4, 30}, {1, 10}, {2, 20}}, 0, true},
		{"equal", []Point{{1, 10}, {2, 10}}, 0, true},
		{"small dip within tolerance", []Point{{1, 100}, {2, 97}}, 0.05, true},
		{"dip beyond tolerance", []Point{{1, 100}, {2, 90}}, 0.05, false},
		{"any dip without tolerance", []Point{{1, 100}, {2, 99.9}}, 0, false},
		{"negative tolerance counts as zero", []Point{{1, 100}, {2, 100}}, -0.5, true},
		{"slow slide caught against the running maximum", []Point{{1, 100}, {2, 96}, {4, 92}, {8, 88}}, 0.05, false},
		{"recovery after a peak still judged against the peak", []Point{{1, 100}, {2, 200}, {4, 150}, {8, 250}}, 0.1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NonDecreasing(tt.points, tt.tolerance); got != tt.want {
				t.Errorf("NonDecreasing(%v, %v) = %v, want %v", tt.points, tt.tolerance, got, tt.want)
			}
		})
	}
}
