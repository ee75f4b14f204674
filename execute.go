package drover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/lease"
	"github.com/droverhq/drover/internal/producer"
	"github.com/droverhq/drover/internal/validate"
)

// runJob runs one attempt, in a span of its own when tracing is on. ctx is
// the attempt's *producer.JobContext. Every result carries the claimed
// row's flow flags, which settle its dependants and batch on finish
// (result.go), whatever the outcome.
//
// The handler's Job holds r itself (typedAttempt), so everything the
// result needs of r is read before the handler runs: a handler that
// changes its row must not change what the finish writes.
func (c *Client[TTx]) runJob(ctx context.Context, r *drovertype.JobRow) droverdriver.Result {
	jc := ctx.(*producer.JobContext)
	// Keyed results promote the next job of their key on finish (keyed.go).
	res := droverdriver.Result{ID: r.ID, Attempt: r.Attempt, LeaseToken: r.LeaseToken, Flow: r.Flow, Key: r.Key, Queue: r.Queue}
	if unit, ok := c.config.Workers.byKind[r.Kind]; ok {
		res = c.tracedAttempt(jc, unit, r, unit.begin(r, c.exec), res)
	} else {
		res = c.tracedAttempt(jc, nil, r, nil, res)
	}
	res.Forget = c.config.DeleteCompleted && res.Outcome == droverdriver.OutcomeCompleted
	return res
}

// tracedAttempt is runAttempt in a span of its own when tracing is on.
func (c *Client[TTx]) tracedAttempt(jc *producer.JobContext, unit workUnit, row *drovertype.JobRow, attempt *attemptState, res droverdriver.Result) droverdriver.Result {
	if tp := c.config.TracerProvider; tp != nil {
		ctx, span := startJobSpan(jc, tp, row)
		res := c.runAttempt(ctx, jc, unit, row, attempt, res)
		var err error
		if len(res.Error) > 0 {
			var ae drovertype.AttemptError
			if json.Unmarshal(res.Error, &ae) == nil {
				err = errors.New(ae.Error)
			}
		}
		endJobSpan(span, outcomeName(res.Outcome), err)
		return res
	}
	return c.runAttempt(jc, jc, unit, row, attempt, res)
}

// runAttempt runs one attempt: it applies the timeout, turns a panic into
// an error and decides the outcome; unit is the worker of the row's kind,
// nil when the client has none, and attempt the state it began. res is
// the result as far as the row says (ID, attempt, lease token, flow), read
// before the handler could change the row; the outcome fills in the rest.
// It never returns without a result, so every claimed attempt is
// accounted for. The handler runs under jobCtx, which is jc or a context
// made from it (a span's).
func (c *Client[TTx]) runAttempt(jobCtx context.Context, jc *producer.JobContext, unit workUnit, row *drovertype.JobRow, attempt *attemptState, res droverdriver.Result) droverdriver.Result {
	if unit == nil {
		// Another process of the fleet may know the kind; retry there.
		return c.failed(nil, row, row.MaxAttempts, res, nil, fmt.Errorf("%w %q: no worker registered in client %s", ErrUnknownKind, row.Kind, c.config.ID), "")
	}
	maxAttempts := row.MaxAttempts

	timeout := c.config.JobTimeout
	if t, ok := unit.timeout(row, attempt); ok {
		timeout = t
	}
	if row.Timeout > 0 {
		timeout = row.Timeout
	}
	// The handler is interrupted through the tracker (a cancel request,
	// the client stopping, see lease.Tracker) and, past its timeout, by
	// its producer's deadlines, never by a timer of its own.
	if timeout > 0 {
		jc.SetTimeout(timeout)
	}

	err, trace := safeWork(jobCtx, unit, row, attempt)
	cause := context.Cause(jobCtx)
	switch {
	case err == nil && attempt.refused != nil:
		// The handler ignored SetResult's error: completing the job
		// without the result it meant to store would hide the failure.
		return c.failed(unit, row, maxAttempts, res, attempt, attempt.refused, "")
	case err == nil:
		res.Outcome = droverdriver.OutcomeCompleted
		res.Output = attempt.output
		c.metrics.completed.Add(1)
		return res
	case errors.Is(cause, lease.ErrShutdown):
		res.Outcome = droverdriver.OutcomeReleased
		res.Error = encodeError(drovertype.AttemptError{Attempt: res.Attempt, Released: true}, fmt.Errorf("%w: %w", lease.ErrShutdown, err), "")
		return res
	case errors.Is(cause, lease.ErrCancelRequested):
		res.Outcome = droverdriver.OutcomeCancelled
		res.Error = encodeAttemptError(res.Attempt, err, trace)
		return res
	}
	var ce *cancelError
	if errors.As(err, &ce) {
		res.Outcome = droverdriver.OutcomeCancelled
		res.Error = encodeAttemptError(res.Attempt, err, trace)
		return res
	}
	if cause != nil && jobCtx.Err() != nil && !errors.Is(err, cause) {
		err = fmt.Errorf("%w (%w)", err, cause)
	}
	return c.failed(unit, row, maxAttempts, res, attempt, err, trace)
}

// failed turns an error into a retry or, out of the row's maxAttempts
// (read before its handler ran), a discard. unit and attempt are nil when
// no handler ran; row is the attempt's row, which only the worker's
// NextRetry sees (through its Job).
func (c *Client[TTx]) failed(unit workUnit, row *drovertype.JobRow, maxAttempts int, res droverdriver.Result, attempt *attemptState, err error, trace string) droverdriver.Result {
	c.metrics.failed.Add(1)
	res.Error = encodeAttemptError(res.Attempt, err, trace)
	if res.Attempt >= maxAttempts {
		res.Outcome = droverdriver.OutcomeDiscarded
		return res
	}
	res.Outcome = droverdriver.OutcomeRetry
	if unit != nil && attempt != nil {
		if at, ok := unit.nextRetry(row, attempt); ok {
			res.RunAt = at
			return res
		}
	}
	res.RunAt = c.now().Add(c.config.RetryPolicy(res.Attempt))
	return res
}

// safeWork runs the handler and recovers a panic into an error with its
// stack, so one bad job cannot crash the process and lose every other
// attempt it holds.
func safeWork(ctx context.Context, unit workUnit, row *drovertype.JobRow, attempt *attemptState) (err error, trace string) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
			trace = string(debug.Stack())
		}
	}()
	err = unit.work(ctx, row, attempt)
	if err != nil {
		if detailed := fmt.Sprintf("%+v", err); detailed != err.Error() {
			trace = detailed
		}
	}
	return err, trace
}

// encodeAttemptError records one failed attempt. The message and trace are
// made storable (NUL and invalid UTF-8 become U+FFFD) and cut to
// maxErrorLen each, for Go handlers and remote workers alike: an error
// text is whatever a handler returned, and one the store refused would
// fail the whole batch of results it was flushed with, while one without
// a bound would travel with the job forever.
func encodeAttemptError(attempt int, err error, trace string) []byte {
	return encodeError(drovertype.AttemptError{Attempt: attempt}, err, trace)
}

// encodeError is encodeAttemptError for an error whose other fields e
// sets (Released).
func encodeError(e drovertype.AttemptError, err error, trace string) []byte {
	e.At = time.Now().UTC()
	e.Error, e.Trace = validate.Sanitize(err.Error(), maxErrorLen), validate.Sanitize(trace, maxErrorLen)
	b, mErr := json.Marshal(e)
	if mErr != nil {
		e.Error, e.Trace = fmt.Sprintf("%q", e.Error), ""
		b, _ = json.Marshal(e)
	}
	return b
}

// clientMetrics are cumulative counters, cheap enough for the hot path.
type clientMetrics struct {
	completed, failed, rescued atomic.Int64
	flushes, flushedResults    atomic.Int64
	acceptedResults, flushNano atomic.Int64
	// Topics: messages this client published, and deliveries its
	// consumers acknowledged.
	topicPublished, topicDelivered atomic.Int64
}

func (m *clientMetrics) flushed(results, accepted int, took time.Duration) {
	m.flushes.Add(1)
	m.flushedResults.Add(int64(results))
	m.acceptedResults.Add(int64(accepted))
	m.flushNano.Add(int64(took))
}

// Stats are cumulative counters of a running client, for benches and
// metrics. Durations are totals; divide by the matching count for means.
type Stats struct {
	Claims         int64
	ClaimedJobs    int64
	ClaimTime      time.Duration
	Ran            int64
	RunTime        time.Duration
	Completed      int64
	Failed         int64
	Rescued        int64
	Flushes        int64
	FlushedResults int64
	// Written counts results the store accepted (fencing rejects late
	// ones): the number of attempts that really ended.
	Written   int64
	FlushTime time.Duration
	// Held is the number of attempts claimed and not yet written.
	Held int
	// Published counts topic messages this client stored, Delivered the
	// deliveries its consumers (and AckBatches) had acknowledged.
	Published, Delivered int64
}

// Stats returns the client's counters.
func (c *Client[TTx]) Stats() Stats {
	s := Stats{
		Completed: c.metrics.completed.Load(), Failed: c.metrics.failed.Load(), Rescued: c.metrics.rescued.Load(),
		Flushes: c.metrics.flushes.Load(), FlushedResults: c.metrics.flushedResults.Load(),
		Written:   c.metrics.acceptedResults.Load(),
		FlushTime: time.Duration(c.metrics.flushNano.Load()),
		Published: c.metrics.topicPublished.Load(), Delivered: c.metrics.topicDelivered.Load(),
	}
	c.mu.Lock()
	producers, tracker := c.producers, c.tracker
	c.mu.Unlock()
	for _, p := range producers {
		ps := p.Stats()
		s.Claims += ps.Claims
		s.ClaimedJobs += ps.ClaimedJobs
		s.ClaimTime += time.Duration(ps.ClaimNanos)
		s.Ran += ps.Ran
		s.RunTime += time.Duration(ps.RunNanos)
	}
	if tracker != nil {
		s.Held = tracker.Len()
	}
	return s
}
