package stats

import (
	"sync"
	"time"
)

// Window lengths are bounded because windows shorter than 2 s are dominated
// by batching and scheduling noise, while windows longer than 10 s leave too
// few of them in a one-minute run to see warm-up at all.
const (
	MinWindow     = 2 * time.Second
	MaxWindow     = 10 * time.Second
	DefaultWindow = 5 * time.Second
)

// Window is one fixed slice of a bench run. Rates and means cover the window
// alone, so a series of windows shows warm-up, stalls and the drain at the
// end that a whole-run average would hide.
type Window struct {
	// StartSec is the window's start, in seconds since the run started.
	StartSec float64 `json:"start_sec"`
	// Seconds is the window's actual length; it can exceed the nominal
	// length by up to one sampling period, and the final window may be
	// shorter.
	Seconds float64 `json:"seconds"`
	// Jobs is the number of jobs completed in the window.
	Jobs int64 `json:"jobs"`
	// Rate is Jobs / Seconds.
	Rate float64 `json:"rate"`
	// ClaimMs is the mean time of one claim call (one batch) in the window.
	ClaimMs float64 `json:"claim_ms"`
	// Claims is the number of claim calls in the window.
	Claims int64 `json:"claims"`
	// CompleteMs is the mean time of one completion call in the window.
	CompleteMs float64 `json:"complete_ms"`
	// HandlerMs is the mean time a handler spent on one job in the window.
	HandlerMs float64 `json:"handler_ms"`
	// Backlog is the number of jobs still waiting at the end of the window.
	Backlog int64 `json:"backlog"`
	// P99Ms is the 99th percentile of the latencies recorded in the window.
	P99Ms float64 `json:"p99_ms"`
}

// Counters are the cumulative totals of a bench run at one instant. All
// fields except Backlog only ever grow; a Sampler takes the differences of
// consecutive Counters, so callers can keep plain atomic counters and never
// reset them.
type Counters struct {
	// Jobs is the number of jobs completed so far.
	Jobs int64
	// ClaimNanos and ClaimCount are the total time spent in, and the number
	// of, claim calls.
	ClaimNanos, ClaimCount int64
	// CompleteNanos and CompleteCount are the same for completion calls.
	CompleteNanos, CompleteCount int64
	// HandlerNanos and HandlerCount are the same for handler invocations.
	HandlerNanos, HandlerCount int64
	// Backlog is the current queue depth: a gauge, not a total.
	Backlog int64
}

// Sampler cuts a run into windows from periodic samples of cumulative
// Counters. A window closes at the first sample taken at least one window
// length after the previous boundary, so the caller may sample as often as
// it likes (once a second gives boundaries within a second of the nominal
// length). A sample that arrives up to 5 % early still closes the window,
// because a ticker with the same period as the window jitters around it.
//
// It is safe for concurrent use: workers call RecordLatency while one
// goroutine calls Sample.
type Sampler struct {
	mu      sync.Mutex
	window  time.Duration
	start   time.Time
	lastAt  time.Time
	last    Counters
	windows []Window

	// lat holds the latencies of the current window only.
	lat Latency
}

// NewSampler starts a sampler for a run that began at start with all
// cumulative counters at zero. A window of 0 selects DefaultWindow; other
// values are clamped to [MinWindow, MaxWindow].
func NewSampler(start time.Time, window time.Duration) *Sampler {
	switch {
	case window == 0:
		window = DefaultWindow
	case window < MinWindow:
		window = MinWindow
	case window > MaxWindow:
		window = MaxWindow
	}
	return &Sampler{window: window, start: start, lastAt: start}
}

// WindowLength returns the nominal window length after clamping.
func (s *Sampler) WindowLength() time.Duration {
	return s.window
}

// RecordLatency adds a latency to the current window's histogram, from which
// the window's P99Ms is taken.
func (s *Sampler) RecordLatency(d time.Duration) {
	s.lat.Record(d)
}

// Sample offers the cumulative counters at now. When a window length has
// passed since the previous boundary it closes a window and returns it with
// true, so that the caller can print live progress; otherwise it returns
// false and only the latest call's counters matter.
func (s *Sampler) Sample(now time.Time, c Counters) (Window, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Sub(s.lastAt) < s.window-s.window/20 {
		return Window{}, false
	}
	return s.cut(now, c), true
}

// Flush closes the final, usually partial, window at the end of the run. It
// does nothing when no time has passed or no job completed since the last
// boundary, because an empty tail would only add a zero-rate point to the
// charts. SteadyState recognises a short or drained final window and leaves
// it out of the steady-state rate.
func (s *Sampler) Flush(now time.Time, c Counters) (Window, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !now.After(s.lastAt) || c.Jobs <= s.last.Jobs {
		return Window{}, false
	}
	return s.cut(now, c), true
}

// Windows returns a copy of the windows closed so far.
func (s *Sampler) Windows() []Window {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Window(nil), s.windows...)
}

// cut closes the window ending at now; the caller must hold s.mu.
func (s *Sampler) cut(now time.Time, c Counters) Window {
	secs := now.Sub(s.lastAt).Seconds()
	jobs := c.Jobs - s.last.Jobs
	w := Window{
		StartSec:   s.lastAt.Sub(s.start).Seconds(),
		Seconds:    secs,
		Jobs:       jobs,
		Rate:       ratio(float64(jobs), secs),
		ClaimMs:    meanMillis(c.ClaimNanos-s.last.ClaimNanos, c.ClaimCount-s.last.ClaimCount),
		Claims:     c.ClaimCount - s.last.ClaimCount,
		CompleteMs: meanMillis(c.CompleteNanos-s.last.CompleteNanos, c.CompleteCount-s.last.CompleteCount),
		HandlerMs:  meanMillis(c.HandlerNanos-s.last.HandlerNanos, c.HandlerCount-s.last.HandlerCount),
		Backlog:    c.Backlog,
		P99Ms:      s.lat.snapshotAndReset().P99,
	}
	s.windows = append(s.windows, w)
	s.lastAt = now
	s.last = c
	return w
}

// ratio returns num/den, or 0 when den is not positive, so that empty
// windows never put NaN or Inf into the JSON report.
func ratio(num, den float64) float64 {
	if den <= 0 {
		return 0
	}
	return num / den
}

func meanMillis(nanos, count int64) float64 {
	return ratio(float64(nanos), float64(count)) / 1e6
}
