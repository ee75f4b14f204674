package server

import (
	"sync"
	"time"

	"github.com/droverhq/drover/drovertype"
)

// historyLen is how many samples the dashboard's charts keep: half an hour
// at the default interval of 5 s.
const historyLen = 360

// Point is one sample of the dashboard: the queues' waiting and running
// jobs, and what finished in its window, whichever process ran it.
type Point struct {
	At time.Time `json:"at"`
	// Until ends the window of finished jobs, a second before At; the
	// window starts where the previous sample's ended.
	Until    time.Time                  `json:"until"`
	Seconds  float64                    `json:"seconds"` // length of the window
	Queues   []drovertype.QueueStats    `json:"queues"`
	Finished []drovertype.FinishedStats `json:"finished"`
}

// history keeps the recent samples for the dashboard.
type history struct {
	mu     sync.Mutex
	points []Point
}

func (h *history) add(p Point) {
	h.mu.Lock()
	defer h.mu.Unlock()
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
