package server_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/internal/app/server"
)

// TestTracingAcrossHTTP: an enqueue's traceparent header becomes the job's
// trace context, and the attempt an HTTP worker reports gets a span from
// claim to result linked to the enqueuing span.
func TestTracingAcrossHTTP(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	b := setup(t, func(t *testing.T) (droverdriver.Driver, testClient) {
		d, err := droversqlite.Open(context.Background(), filepath.Join(t.TempDir(), "drover.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d, newClient(t, d, func(cfg *drover.Config) (testClient, error) {
			cfg.TracerProvider = tp
			return drover.NewClient(d, cfg)
		})
	}, func(c *server.Config) { c.TracerProvider = tp })

	ctx, producer := tp.Tracer("test").Start(context.Background(), "checkout")
	producer.End()
	header := http.Header{}
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(header))
	req, _ := http.NewRequest("POST", b.url+"/v1/jobs", strings.NewReader(`{"jobs":[{"kind":"email","args":{},"max_attempts":3}]}`))
	req.Header.Set("Authorization", "Bearer "+b.tokens[server.ScopeEnqueue])
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", header.Get("traceparent"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("enqueue = %d", resp.StatusCode)
	}

	jobs := b.claim(t, map[string]any{"queue": "default", "worker": "py"})
	if len(jobs) != 1 {
		t.Fatalf("claimed %d", len(jobs))
	}
	stored := b.stored(t, jobs[0].ID)
	if sc := drover.JobSpanContext(stored.Metadata); sc.SpanID() != producer.SpanContext().SpanID() {
		t.Fatalf("job metadata %s does not carry the enqueuing span", stored.Metadata)
	}
	b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/finish", map[string]any{"results": []any{map[string]any{
		"id": jobs[0].ID, "attempt": 1, "lease_token": b.lease(jobs[0].ID), "outcome": "failed", "max_attempts": 3, "error": "smtp down"}}})

	var run sdktrace.ReadOnlySpan
	for _, sp := range rec.Ended() {
		if sp.Name() == "drover.job email" {
			run = sp
		}
	}
	if run == nil {
		t.Fatal("no span for the attempt the worker reported")
	}
	if len(run.Links()) != 1 || run.Links()[0].SpanContext.SpanID() != producer.SpanContext().SpanID() {
		t.Fatalf("run span links %v, want the enqueuing span", run.Links())
	}
	if run.Status().Code != codes.Error || run.Status().Description != "smtp down" || !run.StartTime().Equal(*stored.AttemptedAt) {
		t.Fatalf("run span: status %v, start %v (claimed at %v)", run.Status(), run.StartTime(), stored.AttemptedAt)
	}
}
