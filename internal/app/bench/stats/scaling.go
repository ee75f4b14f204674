package stats

import "sort"

// Point is the throughput measured at one degree of parallelism K, the number
// of worker processes or of concurrent streams.
type Point struct {
	K          int
	JobsPerSec float64
}

// Scaled is a Point with its scaling figures.
type Scaled struct {
	K          int
	JobsPerSec float64
	// Factor is the speed-up over the baseline, expressed in units of K:
	// Factor = JobsPerSec / baseline.JobsPerSec × baseline.K.
	Factor float64
	// Efficiency is Factor / K: 1 means perfectly linear scaling.
	Efficiency float64
}

// Scaling computes the speed-up of each point against the baseline, the point
// with the smallest K (the first such point if K repeats).
//
// The factor is normalised so that the baseline's factor equals its own K:
//
//	Factor(K) = rate(K) / rate(K0) × K0
//	Efficiency(K) = Factor(K) / K
//
// With K0 = 1 the factor is simply rate(K)/rate(1). Normalising to K0 rather
// than to 1 keeps factors comparable with K when the sweep cannot start at a
// single process, at the cost of assuming the baseline itself scaled
// linearly; the baseline's efficiency is therefore always 1.
//
// The result is sorted by K (stable for equal K). Points with K < 1 have no
// meaningful efficiency and are left out. When the baseline rate is not
// positive, every Factor and Efficiency is 0.
func Scaling(points []Point) []Scaled {
	ps := sortedByK(points)
	if len(ps) == 0 {
		return nil
	}
	base := ps[0]
	out := make([]Scaled, len(ps))
	for i, p := range ps {
		s := Scaled{K: p.K, JobsPerSec: p.JobsPerSec}
		if base.JobsPerSec > 0 {
			s.Factor = p.JobsPerSec / base.JobsPerSec * float64(base.K)
			s.Efficiency = s.Factor / float64(p.K)
		}
		out[i] = s
	}
	return out
}

// NonDecreasing reports whether throughput never falls as K grows: every
// point's rate, in order of K, must be at least (1 − tolerance) times the
// highest rate seen at any smaller K. Comparing with the running maximum
// rather than the previous point stops a slow slide, each step within the
// tolerance, from passing. tolerance is a fraction (0.05 allows 5 %);
// negative values count as 0. Points with K < 1 are ignored, and fewer than
// two points are trivially non-decreasing.
func NonDecreasing(points []Point, tolerance float64) bool {
	tolerance = max(tolerance, 0)
	best := 0.0
	for i, p := range sortedByK(points) {
		if i > 0 && p.JobsPerSec < (1-tolerance)*best {
			return false
		}
		best = max(best, p.JobsPerSec)
	}
	return true
}

// sortedByK returns the points with K ≥ 1, sorted by K, leaving the input
// untouched.
func sortedByK(points []Point) []Point {
	ps := make([]Point, 0, len(points))
	for _, p := range points {
		if p.K >= 1 {
			ps = append(ps, p)
		}
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].K < ps[j].K })
	return ps
}
