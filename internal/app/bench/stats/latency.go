// Package stats turns the raw measurements of a bench run into the figures
// that the bench report publishes: latency percentiles, per-window
// throughput, the steady-state rate after warm-up and the scaling factors
// across process or stream counts.
//
// The package does no I/O and reads no clock of its own: callers pass the
// times and counters in, which keeps every figure reproducible in tests.
package stats

import (
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// The histogram covers 1 µs … 10 min with 3 significant digits: a job queue's
// latencies span from sub-millisecond claims to multi-minute backlogs, and
// 0.1 % relative precision is far finer than run-to-run noise while keeping
// each histogram around 100 KiB.
const (
	// MinLatency is the smallest duration the recorder distinguishes;
	// shorter durations are recorded as MinLatency.
	MinLatency = time.Microsecond
	// MaxLatency is the largest duration the recorder tracks; longer
	// durations are recorded as MaxLatency.
	MaxLatency = 10 * time.Minute

	significantDigits = 3
)

// Percentiles summarises a latency distribution in milliseconds, the unit the
// bench report and docs/benchmarks.md use throughout.
type Percentiles struct {
	P50   float64 `json:"p50"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
	Count int64   `json:"count"`
}

// Latency records durations into an HDR histogram so that percentiles stay
// accurate however many millions of jobs a run completes, at constant memory.
// It is safe for concurrent use because every worker of a bench run records
// into one shared recorder. The zero value is ready to use.
type Latency struct {
	mu sync.Mutex
	h  *hdrhistogram.Histogram
}

// NewLatency returns an empty recorder. It is equivalent to new(Latency) and
// exists for readability at call sites.
func NewLatency() *Latency {
	return &Latency{h: newHistogram()}
}

func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, int64(MaxLatency/time.Microsecond), significantDigits)
}

// init allocates the histogram lazily so that the zero value works; the
// caller must hold l.mu.
func (l *Latency) init() {
	if l.h == nil {
		l.h = newHistogram()
	}
}

// Record adds one duration. Durations outside [MinLatency, MaxLatency] are
// clamped rather than dropped, so that Count always equals the number of
// Record calls and an outlier still shows up as the maximum instead of
// silently disappearing from the report.
func (l *Latency) Record(d time.Duration) {
	us := int64(clampDuration(d) / time.Microsecond)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.init()
	// The value is clamped to the histogram's range, so RecordValue cannot
	// fail.
	_ = l.h.RecordValue(us)
}

func clampDuration(d time.Duration) time.Duration {
	switch {
	case d < MinLatency:
		return MinLatency
	case d > MaxLatency:
		return MaxLatency
	default:
		return d
	}
}

// Snapshot returns the current percentiles. An empty recorder yields the zero
// Percentiles, never NaN, so that the report always encodes as JSON.
func (l *Latency) Snapshot() Percentiles {
	l.mu.Lock()
	defer l.mu.Unlock()
	return percentilesOf(l.h)
}

// Merge adds every duration recorded by other into l, so that per-process or
// per-stream recorders can be combined into run-wide percentiles. Merging a
// recorder into itself doubles its counts. other is copied under its own lock
// before l is locked, so concurrent a.Merge(b) and b.Merge(a) cannot deadlock.
func (l *Latency) Merge(other *Latency) {
	if other == nil {
		return
	}
	other.mu.Lock()
	var from *hdrhistogram.Histogram
	if other.h != nil && other.h.TotalCount() > 0 {
		from = other.h.Clone()
	}
	other.mu.Unlock()
	if from == nil {
		return
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	l.init()
	// Both histograms share one geometry, so nothing can be dropped.
	l.h.Merge(from)
}

// snapshotAndReset returns the percentiles and empties the recorder in one
// critical section, so that no duration recorded in between is lost when a
// Sampler closes a window.
func (l *Latency) snapshotAndReset() Percentiles {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := percentilesOf(l.h)
	if l.h != nil {
		l.h.Reset()
	}
	return p
}

func percentilesOf(h *hdrhistogram.Histogram) Percentiles {
	if h == nil || h.TotalCount() == 0 {
		return Percentiles{}
	}
	return Percentiles{
		P50:   microsToMillis(h.ValueAtQuantile(50)),
		P95:   microsToMillis(h.ValueAtQuantile(95)),
		P99:   microsToMillis(h.ValueAtQuantile(99)),
		Max:   microsToMillis(h.Max()),
		Count: h.TotalCount(),
	}
}

func microsToMillis(us int64) float64 {
	return float64(us) / 1000
}
