package drover

import (
	"cmp"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/producer"
)

// HistogramBounds are the upper bounds of the buckets every Histogram
// counts into: 1 ms doubling to about 17 minutes, the span of a pickup
// latency from an idle queue to a backlog, and of run times from a noop to
// a long export. They are the buckets of `drover serve`'s metrics, so that
// the figures of Go workers and of HTTP workers add up.
var HistogramBounds = func() []time.Duration {
	b := make([]time.Duration, histogramBuckets)
	for i := range b {
		b[i] = time.Millisecond << i
	}
	return b
}()

// histogramBuckets is the number of bounded buckets; one more counts what
// lies past the last bound.
const histogramBuckets = 21

// Histogram is a snapshot of durations counted into the buckets of
// HistogramBounds.
type Histogram struct {
	// Counts[i] is how many durations fell in (HistogramBounds[i-1],
	// HistogramBounds[i]]; the last element counts those past every
	// bound. Counts are not cumulative.
	Counts []uint64
	// Count is the number of durations, Sum their total.
	Count uint64
	Sum   time.Duration
}

// histogram counts durations with atomic adds only: the hot path of every
// attempt observes one or two, from as many goroutines as a queue has
// workers. A snapshot taken during an observation may count it in Count
// and not yet in its bucket; a scrape needs no more.
type histogram struct {
	counts [histogramBuckets + 1]atomic.Uint64
	count  atomic.Uint64
	sum    atomic.Int64
}

func (h *histogram) observe(d time.Duration) {
	d = max(d, 0)
	// The bucket is the smallest i with d <= 2^i ms, that is with
	// ceil(d / 1 ms) <= 2^i.
	i := 0
	if ms := (uint64(d) + uint64(time.Millisecond) - 1) / uint64(time.Millisecond); ms > 1 {
		i = min(bits.Len64(ms-1), histogramBuckets)
	}
	h.counts[i].Add(1)
	h.count.Add(1)
	h.sum.Add(int64(d))
}

func (h *histogram) snapshot() Histogram {
	s := Histogram{Counts: make([]uint64, len(h.counts)), Count: h.count.Load(), Sum: time.Duration(h.sum.Load())}
	for i := range h.counts {
		s.Counts[i] = h.counts[i].Load()
	}
	return s
}

// JobMetrics are the cumulative figures of the attempts one client ran for
// one queue and kind: what its handlers returned, how long they ran, and
// how long each job waited to be claimed. The pairs are bounded by the
// client's queues and the kinds it has workers for, the only kinds it
// claims.
type JobMetrics struct {
	Queue, Kind string
	// Completed, Failed (retried or discarded) and Cancelled count
	// attempts by their handler's outcome, counted when the handler
	// returns; attempts released because the client stopped are not
	// counted.
	Completed, Failed, Cancelled int64
	// Run is the time from the attempt's start to its handler's return.
	Run Histogram
	// Pickup is the time from when the job became claimable (its run_at)
	// to the claim that handed it to this client.
	Pickup Histogram
}

// jobMetrics holds the counters of one queue and kind.
type jobMetrics struct {
	completed, failed, cancelled atomic.Int64
	run, pickup                  histogram
}

// queueKind keys jobMetrics.
type queueKind struct{ queue, kind string }

// jobMetricsTable holds the jobMetrics of the pairs a client ran. After
// the first attempt of each pair a lookup takes no lock.
type jobMetricsTable struct{ m sync.Map }

func (t *jobMetricsTable) get(queue, kind string) *jobMetrics {
	key := queueKind{queue, kind}
	if v, ok := t.m.Load(key); ok {
		return v.(*jobMetrics)
	}
	v, _ := t.m.LoadOrStore(key, &jobMetrics{})
	return v.(*jobMetrics)
}

// queueMetrics finds the jobMetrics of one queue's kinds for its
// producer, without the table's lookup per attempt (a sync.Map keyed by
// two strings, 3% of a noop job's CPU in BenchmarkRuntimeNoop). Its map of
// kinds is fixed when the producer is made; each entry is filled at the
// kind's first attempt, so that JobMetrics still lists only the pairs that
// ran.
type queueMetrics struct {
	queue string
	table *jobMetricsTable
	kinds map[string]*atomic.Pointer[jobMetrics]
}

// forQueue returns the finder of queue's jobMetrics for the given kinds;
// others are looked up in the table.
func (t *jobMetricsTable) forQueue(queue string, kinds []string) *queueMetrics {
	q := &queueMetrics{queue: queue, table: t, kinds: make(map[string]*atomic.Pointer[jobMetrics], len(kinds))}
	for _, k := range kinds {
		q.kinds[k] = new(atomic.Pointer[jobMetrics])
	}
	return q
}

func (q *queueMetrics) get(kind string) *jobMetrics {
	slot, ok := q.kinds[kind]
	if !ok {
		return q.table.get(q.queue, kind)
	}
	if m := slot.Load(); m != nil {
		return m
	}
	m := q.table.get(q.queue, kind)
	slot.Store(m)
	return m
}

// observeRun counts one attempt a producer ran, as its row said before
// the handler ran.
func (q *queueMetrics) observeRun(ran producer.Ran, res droverdriver.Result) {
	q.get(ran.Kind).observe(ran, res)
}

// observeRun counts one attempt run outside a producer (WorkJob, Drain).
func (c *Client[TTx]) observeRun(ran producer.Ran, res droverdriver.Result) {
	c.jobMetrics.get(ran.Queue, ran.Kind).observe(ran, res)
}

// observe counts one attempt with its result.
func (m *jobMetrics) observe(ran producer.Ran, res droverdriver.Result) {
	switch res.Outcome {
	case droverdriver.OutcomeCompleted:
		m.completed.Add(1)
	case droverdriver.OutcomeRetry, droverdriver.OutcomeDiscarded:
		m.failed.Add(1)
	case droverdriver.OutcomeCancelled:
		m.cancelled.Add(1)
	default:
		return
	}
	m.run.observe(ran.Took)
	if ran.PickedUp {
		m.pickup.observe(ran.Pickup)
	}
}

// JobMetrics returns the figures of the attempts this client ran, one
// element per queue and kind it ran any of, sorted by queue and kind. The
// figures are cumulative since the client was made: export them as
// counters (see package droverprom for a Prometheus collector).
func (c *Client[TTx]) JobMetrics() []JobMetrics {
	var out []JobMetrics
	c.jobMetrics.m.Range(func(k, v any) bool {
		key, m := k.(queueKind), v.(*jobMetrics)
		out = append(out, JobMetrics{Queue: key.queue, Kind: key.kind,
			Completed: m.completed.Load(), Failed: m.failed.Load(), Cancelled: m.cancelled.Load(),
			Run: m.run.snapshot(), Pickup: m.pickup.snapshot()})
		return true
	})
	slices.SortFunc(out, func(a, b JobMetrics) int { return cmp.Or(cmp.Compare(a.Queue, b.Queue), cmp.Compare(a.Kind, b.Kind)) })
	return out
}
