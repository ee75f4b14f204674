package server

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/droverhq/drover"
)

// historyLen is how many samples the dashboard's charts keep: half an hour
// at the default interval of 5 s.
const historyLen = 360

// Point is one sample of the dashboard's charts.
type Point struct {
	At     time.Time           `json:"at"`
	Queues []drover.QueueStats `json:"queues"`
	Rate   float64             `json:"rate"` // results accepted per second through this server
	Pickup map[string]float64  `json:"pickup_ms"`
}

// history keeps the recent samples for the dashboard, plus the window of
// the sample under way: results accepted and pickup latencies of claims,
// so that each point carries the rate and p50/p95/p99 of its interval.
type history struct {
	mu       sync.Mutex
	points   []Point
	results  int64
	pickup   *hdrhistogram.Histogram
	lastTime time.Time
}

func newHistory(now time.Time) *history {
	// Microseconds to an hour, 3 significant digits.
	return &history{pickup: hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3), lastTime: now}
}

func (h *history) observePickup(d time.Duration) {
	h.mu.Lock()
	_ = h.pickup.RecordValue(max(d.Microseconds(), 1)) // values past an hour are clamped by the error
	h.mu.Unlock()
}

func (h *history) observeResults(n int) {
	h.mu.Lock()
	h.results += int64(n)
	h.mu.Unlock()
}

// add closes the window under way with the queue figures just sampled.
func (h *history) add(stats []drover.QueueStats, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := Point{At: now, Queues: stats, Pickup: map[string]float64{}}
	if secs := now.Sub(h.lastTime).Seconds(); secs > 0 {
		p.Rate = float64(h.results) / secs
	}
	if h.pickup.TotalCount() > 0 {
		for name, q := range map[string]float64{"p50": 50, "p95": 95, "p99": 99} {
			p.Pickup[name] = float64(h.pickup.ValueAtQuantile(q)) / 1000
		}
	}
	h.results = 0
	h.pickup.Reset()
	h.lastTime = now
	if len(h.points) == historyLen {
		copy(h.points, h.points[1:])
		h.points = h.points[:historyLen-1]
	}
	h.points = append(h.points, p)
}

// snapshot returns the samples, oldest first.
func (h *history) snapshot() []Point {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Point(nil), h.points...)
}

// latest returns the newest sample, if any.
func (h *history) latest() (Point, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.points) == 0 {
		return Point{}, false
	}
	return h.points[len(h.points)-1], true
}
