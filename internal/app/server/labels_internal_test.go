package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
)

// TestLabelValuesExpire: the series of a kind and queue unseen for the
// label TTL are deleted, and their places go to new values, which then
// get series of their own rather than "other".
func TestLabelValuesExpire(t *testing.T) {
	m := newMetrics(nil, nil, 2, time.Hour, false)
	now := time.Now()
	for i := range 5 {
		m.mu.Lock()
		m.inserted.WithLabelValues(m.labelsLocked("q", fmt.Sprintf("k%d", i), now)).Inc()
		m.mu.Unlock()
	}
	if n := series(m.inserted); n != 3 {
		t.Fatalf("%d series for 5 kinds under a limit of 2, want 3 (2 and other)", n)
	}
	// Within the TTL nothing goes.
	m.observeSample(nil, nil, now.Add(time.Hour-time.Second))
	if n := series(m.inserted); n != 3 {
		t.Fatalf("%d series before the TTL, want 3", n)
	}
	m.observeSample([]drovertype.QueueStats{}, nil, now.Add(time.Hour))
	if n := series(m.inserted); n != 0 {
		t.Fatalf("%d series left after every value expired, want 0", n)
	}
	later := now.Add(2 * time.Hour)
	m.mu.Lock()
	q, k := m.labelsLocked("q2", "fresh", later)
	m.mu.Unlock()
	if q != "q2" || k != "fresh" {
		t.Fatalf("a new value after the expiry is counted as %q/%q, want its own name", q, k)
	}
}

// series counts the series a collector holds.
func series(c prometheus.Collector) int {
	ch := make(chan prometheus.Metric)
	go func() { c.Collect(ch); close(ch) }()
	n := 0
	for range ch {
		n++
	}
	return n
}

// TestScrapeSeesWholeSamples: a scrape that meets a sample replacing the
// queue gauges (reset, then set again) sees the queues of the sample
// before or after, never none of them.
func TestScrapeSeesWholeSamples(t *testing.T) {
	m := newMetrics(statsOnly{}, nil, 10, time.Hour, false)
	stats := []drovertype.QueueStats{{Queue: "a", Available: 1}, {Queue: "b", Available: 2}}
	m.observeSample(stats, nil, time.Now())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 2000 {
			m.observeSample(stats, nil, time.Now())
		}
	}()
	for scrapes := 0; ; scrapes++ {
		select {
		case <-done:
			return
		default:
		}
		fams, err := m.Gather()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, f := range fams {
			if f.GetName() == "drover_queue_jobs" {
				n = len(f.GetMetric())
			}
		}
		if n != 8 {
			t.Fatalf("scrape %d saw %d series of drover_queue_jobs, want 8 (2 queues × 4 states)", scrapes, n)
		}
	}
}

// statsOnly is a client whose figures a scrape reads (Stats), and nothing
// else.
type statsOnly struct{ Client }

func (statsOnly) Stats() drover.Stats { return drover.Stats{} }
