package drover_test

import (
	"context"
	"encoding/json"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// TestTracingLinksRunsToTheEnqueuer: with a TracerProvider, a job inserted
// under a span carries its trace context, and each run gets a span linked
// to it, marked as failed when the attempt failed.
func TestTracingLinksRunsToTheEnqueuer(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		b := setup(t, s, 2, func(c *drover.Config) { c.TracerProvider = tp })
		ctx, parent := tp.Tracer("test").Start(context.Background(), "handle request")
		row, err := b.client.Insert(ctx, scriptArgs{Fail: 1}, &drover.InsertOpts{Metadata: json.RawMessage(`{"team":"x"}`)})
		if err != nil {
			t.Fatal(err)
		}
		parent.End()
		b.start(t)
		stored := waitState(t, b.client, row.ID, drovertype.JobStateCompleted)
		var md map[string]string
		if err := json.Unmarshal(stored.Metadata, &md); err != nil || md["team"] != "x" || md["traceparent"] == "" {
			t.Fatalf("metadata = %s, want the caller's keys and a traceparent", stored.Metadata)
		}
		if sc := drover.JobSpanContext(stored.Metadata); sc.TraceID() != parent.SpanContext().TraceID() || sc.SpanID() != parent.SpanContext().SpanID() {
			t.Fatalf("metadata carries %v, want the enqueuing span %v", sc, parent.SpanContext())
		}
		var runs []sdktrace.ReadOnlySpan
		waitfor.Cond(t, "two job spans", func() bool {
			runs = runs[:0]
			for _, sp := range rec.Ended() {
				if sp.Name() == "drover.job test.script" {
					runs = append(runs, sp)
				}
			}
			return len(runs) == 2
		})
		for i, sp := range runs {
			if len(sp.Links()) != 1 || sp.Links()[0].SpanContext.SpanID() != parent.SpanContext().SpanID() {
				t.Errorf("run %d links %v, want the enqueuing span", i+1, sp.Links())
			}
			if sp.Parent().IsValid() {
				t.Errorf("run %d has a parent; runs are linked, not children", i+1)
			}
		}
		if runs[0].Status().Code != codes.Error || runs[1].Status().Code == codes.Error {
			t.Errorf("statuses = %v, %v; want the failed first attempt marked", runs[0].Status(), runs[1].Status())
		}
	})
}

// TestTracingOffLeavesMetadataAlone: without a TracerProvider nothing is
// added, even under a span.
func TestTracingOffLeavesMetadataAlone(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		tp := sdktrace.NewTracerProvider()
		b := setup(t, s, 1)
		ctx, span := tp.Tracer("test").Start(context.Background(), "request")
		defer span.End()
		ids, err := b.client.InsertMany(ctx, []drover.InsertManyParams{{Args: noopArgs{}}})
		if err != nil {
			t.Fatal(err)
		}
		row, err := b.client.JobGet(ctx, ids[0])
		if err != nil {
			t.Fatal(err)
		}
		if drover.JobSpanContext(row.Metadata).IsValid() {
			t.Fatalf("metadata = %s: tracing is off, nothing should be added", row.Metadata)
		}
	})
}
