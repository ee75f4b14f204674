package server_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/droverhq/drover/internal/app/server"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// scrape reads /metrics into families by name.
func (b *bundle) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	r := b.must(t, http.StatusOK, server.ScopeAdmin, "GET", "/metrics", nil)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(r.body))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// value returns the value of the metric of family name whose labels
// include want, or -1 when there is none.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f, ok := fams[name]
	if !ok {
		return -1
	}
next:
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

// TestMetricsMatchWhatHappened drives jobs through the API and checks that
// /metrics counts exactly them, and that the sampled queue gauges match
// the store.
func TestMetricsMatchWhatHappened(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		ids := b.enqueue(t,
			map[string]any{"kind": "mail", "args": map[string]any{"n": 1}},
			map[string]any{"kind": "mail", "args": map[string]any{"n": 2}},
			map[string]any{"kind": "mail", "args": map[string]any{"n": 3}},
			map[string]any{"kind": "pdf", "args": map[string]any{"n": 4}, "queue": "docs"},
		)
		jobs := b.claim(t, map[string]any{"queue": "default", "worker": "w", "max": 2})
		if len(jobs) != 2 {
			t.Fatalf("claimed %d", len(jobs))
		}
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/finish", map[string]any{"results": []any{
			map[string]any{"id": jobs[0].ID, "attempt": 1, "lease_token": b.lease(jobs[0].ID), "outcome": "completed"},
			map[string]any{"id": jobs[1].ID, "attempt": 1, "lease_token": b.lease(jobs[1].ID), "outcome": "failed", "max_attempts": 25, "error": "x"},
			map[string]any{"id": ids[3], "attempt": 1, "lease_token": b.lease(ids[3]), "outcome": "completed"}, // not held: rejected
		}})
		fams := b.scrape(t)
		for _, c := range []struct {
			name   string
			labels map[string]string
			want   float64
		}{
			{"drover_jobs_inserted_total", map[string]string{"queue": "default", "kind": "mail"}, 3},
			{"drover_jobs_inserted_total", map[string]string{"queue": "docs", "kind": "pdf"}, 1},
			{"drover_jobs_completed_total", map[string]string{"queue": "default", "kind": "mail"}, 1},
			{"drover_jobs_failed_total", map[string]string{"queue": "default", "kind": "mail"}, 1},
			{"drover_results_rejected_total", nil, 1},
			{"drover_job_pickup_latency_seconds", map[string]string{"queue": "default"}, 2},
			{"drover_job_run_seconds", map[string]string{"queue": "default", "kind": "mail"}, 2},
			{"drover_claim_batch_jobs", nil, 1},
			{"drover_finish_batch_results", nil, 1},
		} {
			if got := value(fams, c.name, c.labels); got != c.want {
				t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
			}
		}
		for _, name := range []string{"drover_lease_rescues_total", "go_goroutines"} {
			if _, ok := fams[name]; !ok {
				t.Errorf("/metrics has no %s", name)
			}
		}
		// The sampler catches up with the store: default has one job
		// available and one retryable; docs one available.
		waitfor.Cond(t, "queue gauges to match the store", func() bool {
			fams := b.scrape(t)
			return value(fams, "drover_queue_jobs", map[string]string{"queue": "default", "state": "available"}) == 1 &&
				value(fams, "drover_queue_jobs", map[string]string{"queue": "default", "state": "retryable"}) == 1 &&
				value(fams, "drover_queue_jobs", map[string]string{"queue": "default", "state": "running"}) == 0 &&
				value(fams, "drover_queue_jobs", map[string]string{"queue": "docs", "state": "available"}) == 1 &&
				value(fams, "drover_queue_oldest_available_age_seconds", map[string]string{"queue": "docs"}) >= 0
		})
		if body := string(b.must(t, http.StatusOK, server.ScopeAdmin, "GET", "/metrics", nil).body); strings.Contains(body, b.tokens[server.ScopeAdmin]) {
			t.Fatal("/metrics shows a token")
		}
	})
}
