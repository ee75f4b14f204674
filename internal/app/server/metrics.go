package server

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/storeurl"
)

// unknown labels results of attempts this server did not hand out (it
// restarted, or another server did).
const unknown = "unknown"

// metrics are the server's Prometheus metrics. Counters and histograms
// are fed by the requests that pass through; queue gauges by the sampler,
// so that a scrape never queries the store.
type metrics struct {
	reg *prometheus.Registry

	// sampling is held for writing while a sample replaces the queue
	// gauges (reset, then set again) and for reading by a scrape, so that
	// a scrape never sees the queues of a sample half built.
	sampling sync.RWMutex

	// mu guards the limiters, and makes the admission of a label value
	// and the update of its series one step, so that an expiry cannot
	// delete a series between the two and leave it untracked.
	mu                   sync.Mutex
	maxLabels            int
	queues, kinds, pairs *labelLimiter

	inserted  *prometheus.CounterVec
	completed *prometheus.CounterVec
	failed    *prometheus.CounterVec
	cancelled *prometheus.CounterVec
	rejected  prometheus.Counter

	depth  *prometheus.GaugeVec
	oldest *prometheus.GaugeVec

	pickup *prometheus.HistogramVec
	run    *prometheus.HistogramVec

	claimSize, finishSize       prometheus.Histogram
	claimSeconds, finishSeconds prometheus.Histogram

	// Topics, per subscription as of the last sample.
	subLag, subOldest, subDropped *prometheus.GaugeVec
	// openPublisher is the age of the oldest open transaction that
	// published topic messages, as of the last sample.
	openPublisher prometheus.Gauge

	// unroutable counts, per queue as of the last sample, the waiting
	// routed jobs no live worker can take (routing.go).
	unroutable *prometheus.GaugeVec
}

// latencyBuckets run from 1 ms to about 18 minutes: pickup latency spans
// milliseconds on an idle queue to minutes on a backlog.
var latencyBuckets = prometheus.ExponentialBuckets(0.001, 2, 21)

// batchBuckets cover one job to the largest claim and finish batches.
var batchBuckets = prometheus.ExponentialBuckets(1, 2, 14)

// pairsPerLabel is how many queue-kind pairs are kept per value of each
// label: kinds usually run in one queue or a few, and the pairs' own
// bound keeps the product of two full labels from multiplying series.
const pairsPerLabel = 5

// newMetrics registers the metrics. maxLabels bounds the values of each
// label (queue, kind) and labelTTL is how long an unseen value keeps its
// series (see labelLimiter). On a fleet (shards), the queue gauges are
// each shard's, labelled by shard.
func newMetrics(client Client, pool func() storeurl.PoolStats, maxLabels int, labelTTL time.Duration, shards bool) *metrics {
	reg := prometheus.NewRegistry()
	f := func(c prometheus.Collector) prometheus.Collector { reg.MustRegister(c); return c }
	qk := []string{"queue", "kind"}
	m := &metrics{reg: reg, maxLabels: maxLabels, queues: newLabelLimiter(maxLabels, labelTTL),
		kinds: newLabelLimiter(maxLabels, labelTTL), pairs: newLabelLimiter(pairsPerLabel*maxLabels, labelTTL)}
	m.inserted = f(prometheus.NewCounterVec(prometheus.CounterOpts{Name: "drover_jobs_inserted_total",
		Help: "Jobs enqueued through this server."}, qk)).(*prometheus.CounterVec)
	m.completed = f(prometheus.NewCounterVec(prometheus.CounterOpts{Name: "drover_jobs_completed_total",
		Help: "Attempts reported completed through this server and accepted by the store."}, qk)).(*prometheus.CounterVec)
	m.failed = f(prometheus.NewCounterVec(prometheus.CounterOpts{Name: "drover_jobs_failed_total",
		Help: "Attempts reported failed through this server and accepted (retried or discarded)."}, qk)).(*prometheus.CounterVec)
	m.cancelled = f(prometheus.NewCounterVec(prometheus.CounterOpts{Name: "drover_jobs_cancelled_total",
		Help: "Attempts reported cancelled through this server and accepted."}, qk)).(*prometheus.CounterVec)
	m.rejected = f(prometheus.NewCounter(prometheus.CounterOpts{Name: "drover_results_rejected_total",
		Help: "Results the store rejected because their attempt was no longer held (lease expired, or already finished)."})).(prometheus.Counter)
	depthLabels, oldestLabels := []string{"queue", "state"}, []string{"queue"}
	if shards {
		depthLabels, oldestLabels = append(depthLabels, "shard"), append(oldestLabels, "shard")
	}
	m.depth = f(prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "drover_queue_jobs",
		Help: "Jobs waiting or running per queue and state (and shard, on a fleet), as of the last sample."}, depthLabels)).(*prometheus.GaugeVec)
	m.oldest = f(prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "drover_queue_oldest_available_age_seconds",
		Help: "How long the oldest claimable job of the queue (on the shard, on a fleet) has been claimable, as of the last sample."}, oldestLabels)).(*prometheus.GaugeVec)
	m.pickup = f(prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "drover_job_pickup_latency_seconds",
		Help: "From when a job became claimable to its claim through this server.", Buckets: latencyBuckets}, []string{"queue"})).(*prometheus.HistogramVec)
	m.run = f(prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "drover_job_run_seconds",
		Help: "From claim to result of attempts worked through this server.", Buckets: latencyBuckets}, qk)).(*prometheus.HistogramVec)
	m.claimSize = f(prometheus.NewHistogram(prometheus.HistogramOpts{Name: "drover_claim_batch_jobs",
		Help: "Jobs per claim that found any.", Buckets: batchBuckets})).(prometheus.Histogram)
	m.finishSize = f(prometheus.NewHistogram(prometheus.HistogramOpts{Name: "drover_finish_batch_results",
		Help: "Results per finish request.", Buckets: batchBuckets})).(prometheus.Histogram)
	m.claimSeconds = f(prometheus.NewHistogram(prometheus.HistogramOpts{Name: "drover_claim_duration_seconds",
		Help: "Duration of one claim statement.", Buckets: latencyBuckets})).(prometheus.Histogram)
	m.finishSeconds = f(prometheus.NewHistogram(prometheus.HistogramOpts{Name: "drover_finish_duration_seconds",
		Help: "Duration of one finish statement.", Buckets: latencyBuckets})).(prometheus.Histogram)
	f(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "drover_topic_published_total",
		Help: "Topic messages published through this server."},
		func() float64 { return float64(client.Stats().Published) }))
	f(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "drover_topic_delivered_total",
		Help: "Topic deliveries acknowledged through this server (each message counts once per subscription)."},
		func() float64 { return float64(client.Stats().Delivered) }))
	ts := []string{"topic", "subscription"}
	m.subLag = f(prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "drover_subscription_lag_messages",
		Help: "Messages of the topic the subscription has not acknowledged, as of the last sample."}, ts)).(*prometheus.GaugeVec)
	m.subOldest = f(prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "drover_subscription_oldest_pending_age_seconds",
		Help: "Age of the oldest message the subscription has not acknowledged, as of the last sample."}, ts)).(*prometheus.GaugeVec)
	m.subDropped = f(prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "drover_subscription_dropped_messages",
		Help: "Messages retention removed before the subscription read them (it lagged past the topic's retention)."}, ts)).(*prometheus.GaugeVec)
	m.openPublisher = f(prometheus.NewGauge(prometheus.GaugeOpts{Name: "drover_topic_open_publisher_age_seconds",
		Help: "How long the oldest open transaction that published topic messages has been open (0: none), as of the last sample. Its messages wait for its commit, and the retention of their generation for its end (PostgreSQL)."})).(prometheus.Gauge)
	m.unroutable = f(prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "drover_jobs_unroutable",
		Help: "Waiting routed jobs that no live worker can take (none that works the queue matches their worker type, names and labels), as of the last sample."},
		[]string{"queue"})).(*prometheus.GaugeVec)
	f(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "drover_lease_rescues_total",
		Help: "Jobs whose lease expired and that this process's rescuer returned to the queue."},
		func() float64 { return float64(client.Stats().Rescued) }))
	if pool != nil {
		gauge := func(name, help string, v func(storeurl.PoolStats) float64) {
			f(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return v(pool()) }))
		}
		gauge("drover_db_pool_open_connections", "Open database connections.", func(s storeurl.PoolStats) float64 { return float64(s.Open) })
		gauge("drover_db_pool_in_use_connections", "Database connections in use.", func(s storeurl.PoolStats) float64 { return float64(s.InUse) })
		gauge("drover_db_pool_idle_connections", "Idle database connections.", func(s storeurl.PoolStats) float64 { return float64(s.Idle) })
		gauge("drover_db_pool_max_connections", "Most database connections the pool opens.", func(s storeurl.PoolStats) float64 { return float64(s.Max) })
		f(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "drover_db_pool_waits_total",
			Help: "Times a query waited for a free connection."}, func() float64 { return float64(pool().WaitCount) }))
		f(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "drover_db_pool_wait_seconds_total",
			Help: "Total time queries waited for a free connection."}, func() float64 { return pool().WaitDuration.Seconds() }))
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// labelsLocked returns the label values to count a queue and kind under:
// their own names while they hold places, "other" past the limits.
func (m *metrics) labelsLocked(queue, kind string, now time.Time) (string, string) {
	queue, kind = m.queues.admit(queue, now), m.kinds.admit(kind, now)
	if m.pairs.admit(queue+"\x00"+kind, now) == otherLabel {
		kind = otherLabel
	}
	return queue, kind
}

// observeInserted counts one enqueued job.
func (m *metrics) observeInserted(queue, kind string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inserted.WithLabelValues(m.labelsLocked(queue, kind, time.Now())).Inc()
}

// observeClaim records one claim's size, duration and the pickup latency
// of each job in it.
func (m *metrics) observeClaim(attempts []attemptInfo, runAts []time.Time, took time.Duration) {
	m.claimSeconds.Observe(took.Seconds())
	if len(attempts) == 0 {
		return
	}
	m.claimSize.Observe(float64(len(attempts)))
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	for i, a := range attempts {
		m.pickup.WithLabelValues(m.queues.admit(a.queue, now)).Observe(max(a.started.Sub(runAts[i]), 0).Seconds())
	}
}

// observeSample replaces the queue gauges with a fresh sample, so that a
// queue that emptied out disappears rather than showing its last value.
// The gauges show the largest queues by name, at most maxLabels of them,
// and the sum of the rest (their oldest job, for the age) as "other".
// It also deletes the series of label values that went unseen for their
// time to live. On a fleet, byShard holds each shard's queues (nil for a
// shard that did not answer, which then has no series): the largest
// queues are chosen by the fleet's sums, and each has a series per shard.
func (m *metrics) observeSample(stats []drovertype.QueueStats, byShard [][]drovertype.QueueStats, now time.Time) {
	m.sampling.Lock()
	defer m.sampling.Unlock()
	m.depth.Reset()
	m.oldest.Reset()
	size := func(q drovertype.QueueStats) int64 { return q.Available + q.Scheduled + q.Retryable + q.Running }
	stats = slices.Clone(stats)
	slices.SortFunc(stats, func(a, b drovertype.QueueStats) int {
		return cmp.Or(cmp.Compare(size(b), size(a)), strings.Compare(a.Queue, b.Queue))
	})
	kept := map[string]bool{}
	for i, q := range stats {
		kept[q.Queue] = i < m.maxLabels
	}
	if byShard == nil {
		m.setQueues(stats, kept, now)
	}
	for i, queues := range byShard {
		m.setQueues(queues, kept, now, strconv.Itoa(i))
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	for _, q := range m.queues.expire(now) {
		for _, v := range []seriesDeleter{m.inserted, m.completed, m.failed, m.cancelled, m.run, m.pickup} {
			v.DeletePartialMatch(prometheus.Labels{"queue": q})
		}
	}
	for _, k := range m.kinds.expire(now) {
		for _, v := range []seriesDeleter{m.inserted, m.completed, m.failed, m.cancelled, m.run} {
			v.DeletePartialMatch(prometheus.Labels{"kind": k})
		}
	}
	for _, p := range m.pairs.expire(now) {
		q, k, _ := strings.Cut(p, "\x00")
		for _, v := range []seriesDeleter{m.inserted, m.completed, m.failed, m.cancelled, m.run} {
			v.DeletePartialMatch(prometheus.Labels{"queue": q, "kind": k})
		}
	}
}

// Gather implements prometheus.Gatherer: the registry's metrics, never
// in the middle of a sample.
func (m *metrics) Gather() ([]*dto.MetricFamily, error) {
	m.sampling.RLock()
	defer m.sampling.RUnlock()
	return m.reg.Gather()
}

// seriesDeleter is a metric vector whose series can be deleted by label.
type seriesDeleter interface {
	DeletePartialMatch(prometheus.Labels) int
}

// setQueues sets the gauges of the kept queues of stats, and of the rest
// summed as "other" (their oldest job, for the age); shard is the label
// of a fleet's shard, none for a lone store.
func (m *metrics) setQueues(stats []drovertype.QueueStats, kept map[string]bool, now time.Time, shard ...string) {
	var rest drovertype.QueueStats
	others := false
	for _, q := range stats {
		if kept[q.Queue] {
			m.setQueueGauges(q, now, shard...)
			continue
		}
		others = true
		rest.Available += q.Available
		rest.Scheduled += q.Scheduled
		rest.Retryable += q.Retryable
		rest.Running += q.Running
		if q.OldestAvailable != nil && (rest.OldestAvailable == nil || q.OldestAvailable.Before(*rest.OldestAvailable)) {
			rest.OldestAvailable = q.OldestAvailable
		}
	}
	if others {
		rest.Queue = otherLabel
		m.setQueueGauges(rest, now, shard...)
	}
}

func (m *metrics) setQueueGauges(q drovertype.QueueStats, now time.Time, shard ...string) {
	for state, n := range map[string]int64{"available": q.Available, "scheduled": q.Scheduled, "retryable": q.Retryable, "running": q.Running} {
		m.depth.WithLabelValues(append([]string{q.Queue, state}, shard...)...).Set(float64(n))
	}
	age := 0.0
	if q.OldestAvailable != nil {
		age = max(now.Sub(*q.OldestAvailable), 0).Seconds()
	}
	m.oldest.WithLabelValues(append([]string{q.Queue}, shard...)...).Set(age)
}

// observeResult counts one accepted result by its outcome.
func (m *metrics) observeResult(outcome drover.AttemptOutcome, a attemptInfo, known bool, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	queue, kind := unknown, unknown
	if known {
		queue, kind = a.queue, a.kind
	}
	queue, kind = m.labelsLocked(queue, kind, now)
	if known {
		m.run.WithLabelValues(queue, kind).Observe(max(now.Sub(a.started), 0).Seconds())
	}
	switch outcome {
	case drover.AttemptCompleted:
		m.completed.WithLabelValues(queue, kind).Inc()
	case drover.AttemptFailed:
		m.failed.WithLabelValues(queue, kind).Inc()
	case drover.AttemptCancelled:
		m.cancelled.WithLabelValues(queue, kind).Inc()
	}
}

// observeLag replaces the subscription gauges with a fresh sample: the
// subscriptions with the largest lag by name, at most pairsPerLabel times
// maxLabels of them, and the rest summed under topic and subscription
// "other".
func (m *metrics) observeLag(lag []drovertype.SubscriptionLag, now time.Time) {
	m.subLag.Reset()
	m.subOldest.Reset()
	m.subDropped.Reset()
	lag = slices.Clone(lag)
	slices.SortFunc(lag, func(a, b drovertype.SubscriptionLag) int {
		return cmp.Or(cmp.Compare(b.Pending, a.Pending), strings.Compare(a.Topic, b.Topic), strings.Compare(a.Subscription, b.Subscription))
	})
	limit := pairsPerLabel * m.maxLabels
	var rest drovertype.SubscriptionLag
	for i, l := range lag {
		if i >= limit {
			rest.Pending += l.Pending
			rest.Dropped += l.Dropped
			if l.OldestPending != nil && (rest.OldestPending == nil || l.OldestPending.Before(*rest.OldestPending)) {
				rest.OldestPending = l.OldestPending
			}
			continue
		}
		m.setLag(l.Topic, l.Subscription, l, now)
	}
	if len(lag) > limit {
		m.setLag(otherLabel, otherLabel, rest, now)
	}
}

// observePublishers sets the age of the oldest open publisher among open.
func (m *metrics) observePublishers(open []drovertype.OpenPublisher, now time.Time) {
	age := 0.0
	for _, p := range open {
		if !p.Started.IsZero() {
			age = max(age, now.Sub(p.Started).Seconds())
		}
	}
	m.openPublisher.Set(age)
}

func (m *metrics) setLag(topic, sub string, l drovertype.SubscriptionLag, now time.Time) {
	m.subLag.WithLabelValues(topic, sub).Set(float64(l.Pending))
	m.subDropped.WithLabelValues(topic, sub).Set(float64(l.Dropped))
	age := 0.0
	if l.OldestPending != nil {
		age = max(now.Sub(*l.OldestPending), 0).Seconds()
	}
	m.subOldest.WithLabelValues(topic, sub).Set(age)
}

// observeUnroutable replaces the gauge of unroutable jobs with a fresh
// sample, queues past maxLabels counted as "other".
func (m *metrics) observeUnroutable(groups []*drover.UnroutableJobs) {
	m.unroutable.Reset()
	byQueue := map[string]float64{}
	for _, g := range groups {
		byQueue[g.Queue] += float64(g.Jobs)
	}
	queues := slices.Sorted(maps.Keys(byQueue))
	for i, q := range queues {
		label := q
		if i >= m.maxLabels {
			label = otherLabel
		}
		m.unroutable.WithLabelValues(label).Add(byQueue[q])
	}
}
