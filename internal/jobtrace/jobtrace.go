// Package jobtrace makes the OpenTelemetry spans of job runs, for the
// Go worker runtime (a Client's producers) and for the HTTP server, which
// reports the runs of remote workers: both must produce the same spans,
// so both make them here.
//
// A job inserted under a span carries that span's W3C trace context in its
// metadata ("traceparent", "tracestate"); every run of the job gets a span
// of its own linked to it: linked rather than a child, because a job may
// run long after, and many times after, the request that enqueued it.
package jobtrace

import (
	"context"
	"encoding/json"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// TracerName names Drover's tracer in the provider.
const TracerName = "github.com/droverhq/drover"

// Propagator carries the trace context in a job's metadata.
var Propagator = propagation.TraceContext{}

// Job is what a run's span says of its job.
type Job struct {
	ID       int64
	Kind     string
	Queue    string
	Attempt  int
	Metadata json.RawMessage
}

// SpanContext returns the trace context that enqueued a job, as carried
// in its metadata, or an invalid one when there is none.
func SpanContext(metadata json.RawMessage) trace.SpanContext {
	if len(metadata) == 0 {
		return trace.SpanContext{}
	}
	var md map[string]any
	if err := json.Unmarshal(metadata, &md); err != nil {
		return trace.SpanContext{}
	}
	carrier := propagation.MapCarrier{}
	for _, k := range Propagator.Fields() {
		if v, ok := md[k].(string); ok {
			carrier[k] = v
		}
	}
	return trace.SpanContextFromContext(Propagator.Extract(context.Background(), carrier))
}

// Start starts the span of one run of job, linked to the span that
// enqueued it. start is when the run began (zero: now).
func Start(ctx context.Context, tp trace.TracerProvider, job Job, start time.Time) (context.Context, trace.Span) {
	opts := []trace.SpanStartOption{
		trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(
			attribute.Int64("drover.job.id", job.ID),
			attribute.String("drover.job.kind", job.Kind),
			attribute.String("drover.job.queue", job.Queue),
			attribute.Int("drover.job.attempt", job.Attempt),
		),
	}
	if sc := SpanContext(job.Metadata); sc.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
	}
	if !start.IsZero() {
		opts = append(opts, trace.WithTimestamp(start))
	}
	return tp.Tracer(TracerName).Start(ctx, "drover.job "+job.Kind, opts...)
}

// End records how the run ended and ends the span. end is when the run
// ended (zero: now).
func End(span trace.Span, outcome string, err error, end time.Time) {
	span.SetAttributes(attribute.String("drover.job.outcome", outcome))
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	if end.IsZero() {
		span.End()
		return
	}
	span.End(trace.WithTimestamp(end))
}
