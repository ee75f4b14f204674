package droverprom_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverprom"
	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

type okArgs struct{}

func (okArgs) Kind() string { return "ok" }

type badArgs struct{}

func (badArgs) Kind() string { return "bad" }

// testBundle is a SQLite store with a client that works the default queue
// and a registry that collects it.
type testBundle struct {
	driver *droversqlite.Driver
	client *drover.Client[*sql.Tx]
	reg    *prometheus.Registry
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	ctx := context.Background()
	d, err := droversqlite.Open(ctx, filepath.Join(t.TempDir(), "drover.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if _, err := drover.Migrate(ctx, d); err != nil {
		t.Fatal(err)
	}
	workers := drover.NewWorkers()
	drover.AddWorker(workers, drover.WorkFunc(func(context.Context, *drover.Job[okArgs]) error { return nil }))
	drover.AddWorker(workers, drover.WorkFunc(func(context.Context, *drover.Job[badArgs]) error { return errors.New("boom") }))
	client, err := drover.NewClient(d, &drover.Config{
		Queues:  map[string]drover.QueueConfig{drover.DefaultQueue: {MaxWorkers: 4}},
		Workers: workers,
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(droverprom.NewCollector(client))
	return &testBundle{driver: d, client: client, reg: reg}
}

// gather returns the registry's samples as "name{label=value,...}" → value
// (a histogram's sample count).
func (b *testBundle) gather(t *testing.T) map[string]float64 {
	t.Helper()
	families, err := b.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			key := f.GetName() + "{" + strings.Join(labels, ",") + "}"
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[key] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[key] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				out[key] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

// TestCollector runs jobs that complete and fail in a Go client and checks
// that each reaches the metrics under its queue and kind, with run and
// pickup latencies counted per attempt; a job of a kind the client has no
// worker for is not claimed, so it has no series.
func TestCollector(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()

	// An insert-only client stores a kind the worker has no handler for.
	inserter, err := drover.NewClient(b.driver, &drover.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	one := &drover.InsertOpts{MaxAttempts: 1}
	params := []drover.InsertManyParams{
		{Args: okArgs{}}, {Args: okArgs{}}, {Args: okArgs{}},
		{Args: badArgs{}, Opts: one},
		{Args: drover.RawArgs{KindName: "ghost", JSON: json.RawMessage(`{}`)}, Opts: one},
	}
	if _, err := inserter.InsertMany(ctx, params); err != nil {
		t.Fatal(err)
	}
	if err := b.client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = b.client.Stop(sctx)
	})
	waitfor.Cond(t, "four attempts ran", func() bool {
		var n int64
		for _, m := range b.client.JobMetrics() {
			n += m.Completed + m.Failed
		}
		return n == 4
	})

	got := b.gather(t)
	want := map[string]float64{
		"drover_jobs_completed_total{kind=ok,queue=default}":  3,
		"drover_jobs_failed_total{kind=ok,queue=default}":     0,
		"drover_jobs_failed_total{kind=bad,queue=default}":    1,
		"drover_jobs_cancelled_total{kind=bad,queue=default}": 0,
		"drover_job_run_seconds{kind=ok,queue=default}":       3,
		"drover_job_run_seconds{kind=bad,queue=default}":      1,
		"drover_job_pickup_latency_seconds{queue=default}":    4,
		"drover_claimed_jobs_total{}":                         4,
		"drover_lease_rescues_total{}":                        0,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	for k := range got {
		if strings.Contains(k, "ghost") {
			t.Errorf("a kind without a worker has a series: %s", k)
		}
	}
}
