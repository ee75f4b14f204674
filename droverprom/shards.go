package droverprom

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/droverhq/drover/droverfleet"
)

// ShardCollector is a prometheus.Collector of a fleet's shards as one
// process sees them (droverfleet.HealthReporter), each series labelled by
// the shard's index: whether it answers, is attached and drains, the
// claims this process ran on it and how many failed, the calls that found
// it unreachable and when the last did, how long the last read of its
// record took, and its jobs per state as of the process's last queue
// figures. Register it beside the client's Collector for a fleet only: a
// lone database has no shards, and its series stay as they are.
//
//	prometheus.MustRegister(droverprom.NewCollector(client), droverprom.NewShardCollector(fleet))
//
// Like Collector, a scrape never queries the store: the jobs per state
// appear once something in the process reads the queue figures (`drover
// serve` samples them on its interval), and the round trip once the fleet
// read the shard's record (Probe, or its own refresh while it places
// jobs).
type ShardCollector struct {
	src                                       droverfleet.HealthReporter
	up, attached, draining                    *prometheus.Desc
	claims, claimed, claimErrors, unreachable *prometheus.Desc
	lastError, roundTrip, jobs                *prometheus.Desc
}

// NewShardCollector returns a collector of src's shards.
func NewShardCollector(src droverfleet.HealthReporter) *ShardCollector {
	s := []string{"shard"}
	return &ShardCollector{
		src: src,
		up: prometheus.NewDesc("drover_shard_up",
			"1 while the shard answers, 0 from a call that found it unreachable to the next it answered.", s, nil),
		attached: prometheus.NewDesc("drover_shard_attached",
			"1 once the shard's record says it belongs to the fleet (drover migrate attaches it).", s, nil),
		draining: prometheus.NewDesc("drover_shard_draining",
			"1 while the shard drains: it takes no new placements but those its keys and pinned queues need.", s, nil),
		claims: prometheus.NewDesc("drover_shard_claims_total",
			"Claim statements this process ran on the shard.", s, nil),
		claimed: prometheus.NewDesc("drover_shard_claimed_jobs_total",
			"Jobs this process claimed from the shard.", s, nil),
		claimErrors: prometheus.NewDesc("drover_shard_claim_errors_total",
			"Claim statements on the shard that failed.", s, nil),
		unreachable: prometheus.NewDesc("drover_shard_unreachable_total",
			"Calls of this process that found the shard unreachable.", s, nil),
		lastError: prometheus.NewDesc("drover_shard_last_error_timestamp_seconds",
			"When a call last found the shard unreachable (Unix time); absent while none did.", s, nil),
		roundTrip: prometheus.NewDesc("drover_shard_round_trip_seconds",
			"How long the last read of the shard's record took.", s, nil),
		jobs: prometheus.NewDesc("drover_shard_jobs",
			"Jobs waiting or running on the shard per state, as of the process's last queue figures; absent while the shard did not answer them.",
			[]string{"shard", "state"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *ShardCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.up, c.attached, c.draining, c.claims, c.claimed, c.claimErrors, c.unreachable, c.lastError, c.roundTrip, c.jobs} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *ShardCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	for _, h := range c.src.Health() {
		shard := strconv.Itoa(h.Index)
		gauge(c.up, flag(h.Down == nil), shard)
		gauge(c.attached, flag(h.Record != nil), shard)
		gauge(c.draining, flag(h.Record != nil && h.Record.Draining), shard)
		counter(c.claims, h.Claims, shard)
		counter(c.claimed, h.ClaimedJobs, shard)
		counter(c.claimErrors, h.ClaimErrors, shard)
		counter(c.unreachable, h.Unreachable, shard)
		if !h.LastErrorAt.IsZero() {
			gauge(c.lastError, float64(h.LastErrorAt.UnixNano())/1e9, shard)
		}
		if !h.ProbedAt.IsZero() {
			gauge(c.roundTrip, h.RoundTrip.Seconds(), shard)
		}
		if h.QueuesRead {
			var available, scheduled, retryable, running int64
			for _, q := range h.Queues {
				available += q.Available
				scheduled += q.Scheduled
				retryable += q.Retryable
				running += q.Running
			}
			gauge(c.jobs, float64(available), shard, "available")
			gauge(c.jobs, float64(scheduled), shard, "scheduled")
			gauge(c.jobs, float64(retryable), shard, "retryable")
			gauge(c.jobs, float64(running), shard, "running")
		}
	}
}

// flag is 1 for true.
func flag(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
