package drover

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/jobtrace"
)

// Tracing is off unless Config.TracerProvider is set. Then every insert
// made under a span carries that span's W3C trace context in the job's
// metadata, and every run of the job gets a span of its own linked to it
// (internal/jobtrace, shared with the HTTP server's spans of remote runs).
// Workers outside Go read the same two metadata keys.

// injectTrace returns the jobs' metadata with the trace context of ctx
// merged in, when tracing is on and ctx carries a span. Keys the caller
// set win, so a job can carry a trace context of its own choosing.
func (c *Client[TTx]) injectTrace(ctx context.Context, params []droverdriver.InsertParams) {
	if c.config.TracerProvider == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	carrier := propagation.MapCarrier{}
	jobtrace.Propagator.Inject(ctx, carrier)
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
// Client use it to link their spans.
func JobSpanContext(metadata json.RawMessage) trace.SpanContext {
	return jobtrace.SpanContext(metadata)
}

// startJobSpan starts the span of a run of row, from now.
func startJobSpan(ctx context.Context, tp trace.TracerProvider, row *drovertype.JobRow) (context.Context, trace.Span) {
	return jobtrace.Start(ctx, tp, jobtrace.Job{ID: row.ID, Kind: row.Kind, Queue: row.Queue, Attempt: row.Attempt,
		Metadata: row.Metadata}, time.Time{})
}

// endJobSpan records how the run ended and ends its span, now.
func endJobSpan(span trace.Span, outcome string, err error) {
	jobtrace.End(span, outcome, err, time.Time{})
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
