// Package droverprom exports a Drover client's figures to Prometheus: the
// attempts its handlers completed, failed and cancelled, how long they ran
// and how long jobs waited to be claimed, under the metric names `drover
// serve` uses for HTTP workers, so that one query covers the whole fleet:
//
//	prometheus.MustRegister(droverprom.NewCollector(client))
//
// On a fleet of databases (droverfleet), NewShardCollector adds each
// shard's health and figures, labelled by shard.
//
// It is a package of its own so that the drover package, which every
// application that uses Drover imports, does not depend on the Prometheus
// client.
package droverprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/droverhq/drover"
)

// Source is what the collector reads: any *drover.Client.
type Source interface {
	JobMetrics() []drover.JobMetrics
	Stats() drover.Stats
}

// Collector is a prometheus.Collector of one client's figures. Each scrape
// reads the client's counters, which are atomic: it never queries the
// store and never blocks the client's workers.
type Collector struct {
	src                            Source
	completed, failed, cancelled   *prometheus.Desc
	run, pickup                    *prometheus.Desc
	claims, claimed, rescued, held *prometheus.Desc
}

// NewCollector returns a collector of src's figures.
func NewCollector(src Source) *Collector {
	qk := []string{"queue", "kind"}
	return &Collector{
		src: src,
		completed: prometheus.NewDesc("drover_jobs_completed_total",
			"Attempts whose handler completed, counted by the process that ran them.", qk, nil),
		failed: prometheus.NewDesc("drover_jobs_failed_total",
			"Attempts whose handler failed (retried or discarded), counted by the process that ran them.", qk, nil),
		cancelled: prometheus.NewDesc("drover_jobs_cancelled_total",
			"Attempts whose handler was cancelled, counted by the process that ran them.", qk, nil),
		run: prometheus.NewDesc("drover_job_run_seconds",
			"From an attempt's start to its handler's return.", qk, nil),
		pickup: prometheus.NewDesc("drover_job_pickup_latency_seconds",
			"From when a job became claimable to its claim.", []string{"queue"}, nil),
		claims: prometheus.NewDesc("drover_claims_total",
			"Claim statements this process ran.", nil, nil),
		claimed: prometheus.NewDesc("drover_claimed_jobs_total",
			"Jobs this process claimed.", nil, nil),
		rescued: prometheus.NewDesc("drover_lease_rescues_total",
			"Jobs whose lease expired and that this process's rescuer returned to the queue.", nil, nil),
		held: prometheus.NewDesc("drover_held_attempts",
			"Attempts this process holds: claimed and not yet written back.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.completed, c.failed, c.cancelled, c.run, c.pickup, c.claims, c.claimed, c.rescued, c.held} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. Pickup latencies are summed
// over the kinds of a queue, as `drover serve` labels them.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	pickups := map[string]drover.Histogram{}
	var queues []string
	for _, m := range c.src.JobMetrics() {
		ch <- prometheus.MustNewConstMetric(c.completed, prometheus.CounterValue, float64(m.Completed), m.Queue, m.Kind)
		ch <- prometheus.MustNewConstMetric(c.failed, prometheus.CounterValue, float64(m.Failed), m.Queue, m.Kind)
		ch <- prometheus.MustNewConstMetric(c.cancelled, prometheus.CounterValue, float64(m.Cancelled), m.Queue, m.Kind)
		ch <- constHistogram(c.run, m.Run, m.Queue, m.Kind)
		p, ok := pickups[m.Queue]
		if !ok {
			queues = append(queues, m.Queue)
			p.Counts = make([]uint64, len(m.Pickup.Counts))
		}
		for i, n := range m.Pickup.Counts {
			p.Counts[i] += n
		}
		p.Count += m.Pickup.Count
		p.Sum += m.Pickup.Sum
		pickups[m.Queue] = p
	}
	for _, q := range queues {
		ch <- constHistogram(c.pickup, pickups[q], q)
	}
	s := c.src.Stats()
	ch <- prometheus.MustNewConstMetric(c.claims, prometheus.CounterValue, float64(s.Claims))
	ch <- prometheus.MustNewConstMetric(c.claimed, prometheus.CounterValue, float64(s.ClaimedJobs))
	ch <- prometheus.MustNewConstMetric(c.rescued, prometheus.CounterValue, float64(s.Rescued))
	ch <- prometheus.MustNewConstMetric(c.held, prometheus.GaugeValue, float64(s.Held))
}

// constHistogram turns a snapshot into a Prometheus histogram, whose
// buckets are cumulative and whose bounds are seconds.
func constHistogram(d *prometheus.Desc, h drover.Histogram, labels ...string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(drover.HistogramBounds))
	var cum uint64
	for i, bound := range drover.HistogramBounds {
		cum += h.Counts[i]
		buckets[bound.Seconds()] = cum
	}
	return prometheus.MustNewConstHistogram(d, h.Count, h.Sum.Seconds(), buckets, labels...)
}
