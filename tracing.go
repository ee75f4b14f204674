package drover

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/droverhq/drover/droverdriver"
)

// Tracing is off unless Config.TracerProvider is set. Then every insert
// made under a span carries that span's W3C trace context in the job's
// metadata ("traceparent", "tracestate"), and every run of the job gets a
// span of its own linked to it: linked rather than a child, because a job
// may run long after, and many times after, the request that enqueued it.
// Workers outside Go read the same two metadata keys.

// tracerName names Drover's tracer in the provider.
const tracerName = "github.com/droverhq/drover"

// traceContext is the propagator of the trace context in metadata.
var traceContext = propagation.TraceContext{}

// injectTrace returns the jobs' metadata with the trace context of ctx
// merged in, when tracing is on and ctx carries a span. Keys the caller
// set win, so a job can carry a trace context of its own choosing.
func (c *Client[TTx]) injectTrace(ctx context.Context, params []droverdriver.InsertParams) {
	if c.config.TracerProvider == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	carrier := propagation.MapCarrier{}
	traceContext.Inject(ctx, carrier)
	for i := range params {
		md := map[string]any{}
		if len(bytes.TrimSpace(params[i].Metadata)) > 0 {
			// buildInsert checked it is a JSON object.
			if err := json.Unmarshal(params[i].Metadata, &md); err != nil {
				continue
			}
		}
		for k, v := range carrier {
			if _, set := md[k]; !set {
				md[k] = v
			}
		}
		if b, err := json.Marshal(md); err == nil && len(b) <= MaxMetadataBytes {
			params[i].Metadata = b
		}
	}
}

// JobSpanContext returns the trace context that enqueued a job, as carried
// in its metadata, or an invalid one when there is none. Workers outside a
// Client (the HTTP API) use it to link their spans.
func JobSpanContext(metadata json.RawMessage) trace.SpanContext {
	if len(metadata) == 0 {
		return trace.SpanContext{}
	}
	var md map[string]any
	if err := json.Unmarshal(metadata, &md); err != nil {
		return trace.SpanContext{}
	}
	carrier := propagation.MapCarrier{}
	for _, k := range traceContext.Fields() {
		if v, ok := md[k].(string); ok {
			carrier[k] = v
		}
	}
	return trace.SpanContextFromContext(traceContext.Extract(context.Background(), carrier))
}

// StartJobSpan starts the span of one run of job, linked to the span that
// enqueued it. start is when the run began (zero: now).
func StartJobSpan(ctx context.Context, tp trace.TracerProvider, job *JobRow, start time.Time) (context.Context, trace.Span) {
	opts := []trace.SpanStartOption{
		trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(
			attribute.Int64("drover.job.id", job.ID),
			attribute.String("drover.job.kind", job.Kind),
			attribute.String("drover.job.queue", job.Queue),
			attribute.Int("drover.job.attempt", job.Attempt),
		),
	}
	if sc := JobSpanContext(job.Metadata); sc.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
	}
	if !start.IsZero() {
		opts = append(opts, trace.WithTimestamp(start))
	}
	return tp.Tracer(tracerName).Start(ctx, "drover.job "+job.Kind, opts...)
}

// EndJobSpan records how the run ended and ends the span.
func EndJobSpan(span trace.Span, outcome string, err error, end time.Time) {
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

// outcomeName names a driver outcome for spans.
func outcomeName(o droverdriver.Outcome) string {
	switch o {
	case droverdriver.OutcomeCompleted:
		return "completed"
	case droverdriver.OutcomeRetry:
		return "retry"
	case droverdriver.OutcomeDiscarded:
		return "discarded"
	case droverdriver.OutcomeCancelled:
		return "cancelled"
	case droverdriver.OutcomeReleased:
		return "released"
	}
	return "unknown"
}
