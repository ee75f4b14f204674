package drover

import (
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/producer"
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

// TestQueueMetrics checks a producer's finder of its queue's metrics: a
// kind is counted in the client's table under its queue, listed only once
// it ran, shared with any other finder of the queue and with attempts run
// outside a producer, and a kind the finder was not made for is counted
// all the same.
func TestQueueMetrics(t *testing.T) {
	t.Parallel()
	c := &Client[struct{}]{}
	q := c.jobMetrics.forQueue("q", []string{"a", "b"})
	other := c.jobMetrics.forQueue("q", []string{"a"})
	completed := droverdriver.Result{Outcome: droverdriver.OutcomeCompleted}
	failed := droverdriver.Result{Outcome: droverdriver.OutcomeRetry}
	q.observeRun(producer.Ran{Queue: "q", Kind: "a", Took: time.Millisecond, Pickup: 3 * time.Millisecond, PickedUp: true}, completed)
	q.observeRun(producer.Ran{Queue: "q", Kind: "a", Took: time.Millisecond}, failed)
	other.observeRun(producer.Ran{Queue: "q", Kind: "a", Took: time.Millisecond}, completed)
	c.observeRun(producer.Ran{Queue: "q", Kind: "a", Took: time.Millisecond}, completed)
	q.observeRun(producer.Ran{Queue: "q", Kind: "c", Took: time.Millisecond}, failed)
	got := c.JobMetrics()
	if len(got) != 2 {
		t.Fatalf("JobMetrics = %+v, want q/a and q/c (b never ran)", got)
	}
	if a := got[0]; a.Queue != "q" || a.Kind != "a" || a.Completed != 3 || a.Failed != 1 || a.Run.Count != 4 || a.Pickup.Count != 1 || a.Pickup.Counts[2] != 1 {
		t.Errorf("q/a = %+v", a)
	}
	if c := got[1]; c.Queue != "q" || c.Kind != "c" || c.Failed != 1 || c.Run.Count != 1 || c.Pickup.Count != 0 {
		t.Errorf("q/c = %+v", c)
	}
}
