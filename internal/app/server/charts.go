package server

import (
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/validate"
)

// The data of the dashboard's charts (ui/app.js), as columns uPlot draws:
// the last half hour from the sampler's memory, at its interval ("live"),
// or longer ranges from the history the leader stores (Client.StatsHistory),
// which survives restarts and covers days.

// chartRanges are the ranges a chart can show beside "live", and how far
// back each reaches.
var chartRanges = map[string]time.Duration{
	"1h": time.Hour, "6h": 6 * time.Hour, "2d": 48 * time.Hour, "7d": 7 * 24 * time.Hour, "30d": 30 * 24 * time.Hour,
}

// maxChartSeries bounds the series of a chart by queue or by kind: the
// busiest (most jobs waiting and finished over the range) are drawn.
const maxChartSeries = 10

// chartJSON is one chart request's answer: the times, the figures of the
// whole (all queues, or the queue asked for) and of each queue or kind.
// Missing samples are nulls, which uPlot draws as gaps.
type chartJSON struct {
	// BucketS is how many seconds one point covers.
	BucketS float64 `json:"bucket_s"`
	// T are the points' times, in Unix seconds.
	T      []int64               `json:"t"`
	Total  map[string][]*float64 `json:"total"`
	Series []seriesJSON          `json:"series"`
}

// seriesJSON is one queue's or kind's figures.
type seriesJSON struct {
	Name string `json:"name"`
	// Available waits to run now; Completed is per second; P95 is the
	// pickup latency's 95th percentile in ms.
	Available []*float64 `json:"available"`
	Completed []*float64 `json:"completed"`
	P95       []*float64 `json:"p95"`
	volume    float64
}

// figures are one point's numbers as the charts draw them.
type figures struct {
	available, scheduled, retryable, running float64
	completed, failed                        float64 // per second
	p50, p95, p99                            float64 // ms
}

func (f figures) total() map[string]float64 {
	return map[string]float64{"available": f.available, "scheduled": f.scheduled, "retryable": f.retryable, "running": f.running,
		"completed": f.completed, "failed": f.failed, "p50": f.p50, "p95": f.p95, "p99": f.p99}
}

// sampleFigures are a stored sample's figures, its counts made rates over
// the bucket.
func sampleFigures(x drovertype.StatSample, bucket time.Duration) figures {
	secs := bucket.Seconds()
	return figures{available: float64(x.Available), scheduled: float64(x.Scheduled), retryable: float64(x.Retryable),
		running: float64(x.Running), completed: float64(x.Completed) / secs, failed: float64(x.Cancelled+x.Discarded) / secs,
		p50: ms(x.PickupP50), p95: ms(x.PickupP95), p99: ms(x.PickupP99)}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// chartBuilder gathers the points of a chart's whole and its series.
type chartBuilder struct {
	out    chartJSON
	index  map[int64]int
	series map[string]*seriesJSON
}

func newChartBuilder(bucket time.Duration) *chartBuilder {
	return &chartBuilder{out: chartJSON{BucketS: bucket.Seconds(), Total: map[string][]*float64{}},
		index: map[int64]int{}, series: map[string]*seriesJSON{}}
}

// point adds a point of the whole at t.
func (b *chartBuilder) point(t time.Time, f figures) {
	b.index[t.Unix()] = len(b.out.T)
	b.out.T = append(b.out.T, t.Unix())
	for k, v := range f.total() {
		b.out.Total[k] = append(b.out.Total[k], &v)
	}
}

// add sets series name's figures at t, a time of the whole's points.
func (b *chartBuilder) add(name string, t time.Time, f figures) {
	i, ok := b.index[t.Unix()]
	if !ok {
		return
	}
	s := b.series[name]
	if s == nil {
		s = &seriesJSON{Name: name}
		b.series[name] = s
	}
	for _, col := range []*[]*float64{&s.Available, &s.Completed, &s.P95} {
		for len(*col) <= i {
			*col = append(*col, nil)
		}
	}
	s.Available[i], s.Completed[i], s.P95[i] = &f.available, &f.completed, &f.p95
	s.volume += f.available + f.completed
}

// done returns the chart, its busiest series first and at most
// maxChartSeries of them, every column as long as the times.
func (b *chartBuilder) done() chartJSON {
	out := b.out
	out.Series = []seriesJSON{}
	for _, s := range b.series {
		for _, col := range []*[]*float64{&s.Available, &s.Completed, &s.P95} {
			for len(*col) < len(out.T) {
				*col = append(*col, nil)
			}
		}
		out.Series = append(out.Series, *s)
	}
	sort.Slice(out.Series, func(i, j int) bool {
		if out.Series[i].volume != out.Series[j].volume {
			return out.Series[i].volume > out.Series[j].volume
		}
		return out.Series[i].Name < out.Series[j].Name
	})
	if len(out.Series) > maxChartSeries {
		out.Series = out.Series[:maxChartSeries]
	}
	sort.Slice(out.Series, func(i, j int) bool { return out.Series[i].Name < out.Series[j].Name })
	if out.T == nil {
		out.T = []int64{}
	}
	return out
}

// historyJSON answers the sampler's points as it keeps them, oldest
// first: what the live charts draw, for a reader to check them against.
func (s *Server) historyJSON(w http.ResponseWriter, _ *http.Request) error {
	writeJSON(w, http.StatusOK, s.history.snapshot())
	return nil
}

// statsJSON answers a chart: ?range= live (the default) or one of
// chartRanges, ?queue= one queue's figures (all queues' by default), ?by=
// queue (a series per queue) or kind (a series per kind of the queue; a
// stored range only, since the sampler reads queues).
func (s *Server) statsJSON(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	rng, queue, by := q.Get("range"), q.Get("queue"), q.Get("by")
	if rng == "" {
		rng = "live"
	}
	if queue != "" {
		if err := validate.Queue(queue); err != nil {
			return err
		}
	}
	switch {
	case by != "" && by != "queue" && by != "kind":
		return badRequest("by %q: must be queue or kind", by)
	case by == "kind" && queue == "":
		return badRequest("by kind: name the queue (queue=)")
	case by == "queue" && queue != "":
		return badRequest("by queue: leave queue out (each queue is a series)")
	}
	if rng == "live" {
		if by == "kind" {
			return badRequest("by kind: the live range has no kinds; ask for a stored range (%s)", rangeNames())
		}
		writeJSON(w, http.StatusOK, liveChart(s.history.snapshot(), queue, by == "queue"))
		return nil
	}
	span, ok := chartRanges[rng]
	if !ok {
		return badRequest("range %q: must be live or one of %s", rng, rangeNames())
	}
	from := time.Now().Add(-span)
	total, err := s.cfg.Client.StatsHistory(r.Context(), drover.StatsHistoryParams{From: from, Queue: queue})
	if err != nil {
		return err
	}
	b := newChartBuilder(total.Bucket)
	for _, x := range total.Samples {
		b.point(x.At, sampleFigures(x, total.Bucket))
	}
	if by != "" {
		p := drover.StatsHistoryParams{From: from, Queue: drover.StatsEach}
		if by == "kind" {
			p = drover.StatsHistoryParams{From: from, Queue: queue, Kind: drover.StatsEach}
		}
		each, err := s.cfg.Client.StatsHistory(r.Context(), p)
		if err != nil {
			return err
		}
		for _, x := range each.Samples {
			name := x.Queue
			if by == "kind" {
				name = x.Kind
			}
			b.add(name, x.At, sampleFigures(x, each.Bucket))
		}
	}
	writeJSON(w, http.StatusOK, b.done())
	return nil
}

func rangeNames() string {
	names := make([]string, 0, len(chartRanges))
	for k := range chartRanges {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int { return int(chartRanges[a] - chartRanges[b]) })
	return strings.Join(names, ", ")
}

// liveChart is the chart of the sampler's points: all queues (or queue)
// together, and each queue when byQueue. Percentiles of queues cannot be
// merged: the whole shows the slowest queue's.
func liveChart(points []Point, queue string, byQueue bool) chartJSON {
	interval := time.Duration(0)
	if len(points) > 0 {
		interval = time.Duration(points[len(points)-1].Seconds * float64(time.Second))
	}
	b := newChartBuilder(interval)
	for _, p := range points {
		per := map[string]*figures{}
		fig := func(q string) *figures {
			if per[q] == nil {
				per[q] = &figures{}
			}
			return per[q]
		}
		var all figures
		for _, x := range p.Queues {
			if queue != "" && x.Queue != queue {
				continue
			}
			f := fig(x.Queue)
			f.available, f.scheduled, f.retryable, f.running = float64(x.Available), float64(x.Scheduled), float64(x.Retryable), float64(x.Running)
			all.available += f.available
			all.scheduled += f.scheduled
			all.retryable += f.retryable
			all.running += f.running
		}
		for _, x := range p.Finished {
			if (queue != "" && x.Queue != queue) || p.Seconds <= 0 {
				continue
			}
			f := fig(x.Queue)
			f.completed, f.failed = float64(x.Completed)/p.Seconds, float64(x.Discarded+x.Cancelled)/p.Seconds
			f.p50, f.p95, f.p99 = ms(x.PickupP50), ms(x.PickupP95), ms(x.PickupP99)
			all.completed += f.completed
			all.failed += f.failed
			all.p50, all.p95, all.p99 = max(all.p50, f.p50), max(all.p95, f.p95), max(all.p99, f.p99)
		}
		b.point(p.At, all)
		if byQueue {
			for q, f := range per {
				b.add(q, p.At, *f)
			}
		}
	}
	return b.done()
}

// lagJSON answers the lag chart of a topic's subscriptions: ?topic= and
// ?range= one of chartRanges (1h by default), from the stored history.
func (s *Server) lagJSON(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	topic, rng := q.Get("topic"), q.Get("range")
	if err := validate.Topic(topic); err != nil {
		return err
	}
	if rng == "" || rng == "live" {
		rng = "1h"
	}
	span, ok := chartRanges[rng]
	if !ok {
		return badRequest("range %q: must be one of %s", rng, rangeNames())
	}
	h, err := s.cfg.Client.TopicLagHistory(r.Context(), topic, time.Now().Add(-span), time.Time{}, 0)
	if err != nil {
		return err
	}
	out := struct {
		BucketS float64 `json:"bucket_s"`
		T       []int64 `json:"t"`
		Series  []struct {
			Name    string     `json:"name"`
			Lag     []*float64 `json:"lag"`
			OldestS []*float64 `json:"oldest_s"`
		} `json:"series"`
	}{BucketS: h.Bucket.Seconds(), T: []int64{}}
	index := map[int64]int{}
	subs := map[string]int{}
	for _, x := range h.Samples {
		if _, ok := index[x.At.Unix()]; !ok {
			index[x.At.Unix()] = len(out.T)
			out.T = append(out.T, x.At.Unix())
		}
		if _, ok := subs[x.Subscription]; !ok {
			subs[x.Subscription] = len(out.Series)
			out.Series = append(out.Series, struct {
				Name    string     `json:"name"`
				Lag     []*float64 `json:"lag"`
				OldestS []*float64 `json:"oldest_s"`
			}{Name: x.Subscription})
		}
	}
	for i := range out.Series {
		out.Series[i].Lag, out.Series[i].OldestS = make([]*float64, len(out.T)), make([]*float64, len(out.T))
	}
	for _, x := range h.Samples {
		sr, i := &out.Series[subs[x.Subscription]], index[x.At.Unix()]
		lag, oldest := float64(x.Lag), x.Oldest.Seconds()
		sr.Lag[i], sr.OldestS[i] = &lag, &oldest
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
