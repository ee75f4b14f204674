package drover

import (
	"testing"
	"time"
)

// TestHistogramBuckets checks that a duration lands in the first bucket
// whose bound holds it, as Prometheus's "le" buckets count it.
func TestHistogramBuckets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		d      time.Duration
		bucket int
	}{
		{-time.Second, 0},
		{0, 0},
		{time.Millisecond, 0},
		{time.Millisecond + 1, 1},
		{2 * time.Millisecond, 1},
		{3 * time.Millisecond, 2},
		{HistogramBounds[histogramBuckets-1], histogramBuckets - 1},
		{HistogramBounds[histogramBuckets-1] + 1, histogramBuckets},
		{24 * time.Hour, histogramBuckets},
	} {
		var h histogram
		h.observe(tc.d)
		s := h.snapshot()
		if s.Count != 1 || s.Counts[tc.bucket] != 1 {
			t.Errorf("%v: counts %v, want one in bucket %d", tc.d, s.Counts, tc.bucket)
		}
	}
}
