package completer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/droverhq/drover/droverdriver"
)

// A flush the store refuses is not an outage. Whatever one job carries can
// fail only that job: a batch the store refuses is split in halves, and
// each half written (or split again) on its own, so that every result but
// the one at fault lands. That one is retried a few times, in case its
// failure was a passing conflict, then replaced with a failed attempt that
// says why (refusedResult); if the store refuses even that, it is dropped
// and its job left to its lease and the rescuer. Nothing is retried
// forever, and a batch of N results with one at fault costs about
// 2·log2(N) extra statements.
//
// An error is a refusal when the store says so (droverdriver.RefusalReporter),
// or when it happens twice in a row while the store answers another
// statement (a probe): retrying the same statement unchanged would not
// help. An error while the probe fails too is an outage, and keeps the
// backoff and retry across it that a completer has always had.

// maxRefusals is how often a single result is refused before it is
// replaced: more than once, since a deadlock or serialization failure can
// hit a single statement too and passes on retry.
const maxRefusals = 3

// write writes batch, retrying across outages, splitting it when the store
// refuses it. replacement marks a batch made by refusedResult, which is
// dropped rather than replaced again if refused.
func (c *Completer) write(ctx context.Context, batch []droverdriver.Result, replacement bool) (took time.Duration, ok bool) {
	backoff := 50 * time.Millisecond
	// answered counts the failures in a row while the store answered the
	// probe; refusals counts the failures judged refusals.
	answered, refusals := 0, 0
	for attempt := 1; ; attempt++ {
		start := time.Now()
		accepted, err := c.exec.JobFinish(ctx, batch)
		if err == nil {
			c.failures.OK()
			took = time.Since(start)
			if c.cfg.OnFlushed != nil {
				c.cfg.OnFlushed(batch, accepted, took)
			}
			return took, true
		}
		if ctx.Err() != nil {
			c.cfg.Logger.Warn("completer stopped with unwritten results; their jobs will be rescued when their leases expire",
				"results", len(batch), "error", err)
			return 0, false
		}
		switch kind := c.classify(ctx, err); {
		case kind == outage:
			answered = 0
		case kind == refusal:
			refusals++
		default:
			// The store answers, but it may have just come back from an
			// outage: a failure counts as a refusal once it happened twice
			// in a row while the store answered.
			if answered++; answered >= 2 {
				refusals++
			}
		}
		if refusals > 0 && len(batch) > 1 {
			c.cfg.Logger.Warn("the store refused a flush of job results; splitting it to write the others",
				"results", len(batch), "error", err)
			mid := len(batch) / 2
			t1, ok1 := c.write(ctx, batch[:mid], replacement)
			t2, ok2 := c.write(ctx, batch[mid:], replacement)
			return max(t1, t2), ok1 || ok2
		}
		if refusals >= maxRefusals {
			return c.giveUp(ctx, batch[0], err, replacement)
		}
		c.failures.Failed(err, "results", len(batch), "attempt", attempt)
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// giveUp writes a failed attempt in place of r, which the store refused,
// or drops r when r is already such a replacement.
func (c *Completer) giveUp(ctx context.Context, r droverdriver.Result, cause error, replacement bool) (time.Duration, bool) {
	if replacement {
		c.cfg.Logger.Error("the store refused a job's result and the failed attempt written in its place; dropping it, the job runs again once its lease expires",
			"job", r.ID, "attempt", r.Attempt, "error", cause)
		if c.cfg.OnDropped != nil {
			c.cfg.OnDropped(r)
		}
		return 0, false
	}
	c.cfg.Logger.Error("the store refused a job's result; recording the attempt as failed instead",
		"job", r.ID, "attempt", r.Attempt, "error", cause)
	return c.write(ctx, []droverdriver.Result{refusedResult(r, cause)}, true)
}

// failure is what a failed flush says about the store.
type failure int

const (
	outage    failure = iota // the store does not answer
	answering                // the store answers other statements
	refusal                  // the store said it refused the values
)

// classify tells what a flush's error says: a refusal when the store says
// so (droverdriver.RefusalReporter), an outage when a probe fails too.
func (c *Completer) classify(ctx context.Context, err error) failure {
	if rr, ok := c.exec.(droverdriver.RefusalReporter); ok && rr.Refused(err) {
		return refusal
	}
	// The probe reads a job that cannot exist: one cheap statement that
	// succeeds exactly when the store answers.
	if _, probeErr := c.exec.JobGet(ctx, 0); probeErr == nil || errors.Is(probeErr, droverdriver.ErrNotFound) {
		return answering
	}
	return outage
}

// refusedResult is what the completer writes in place of a refused result:
// the same attempt, with the values that could be at fault (its error and
// result) replaced by an error that names the store's refusal. A retried, discarded,
// cancelled or released attempt keeps its outcome. A completed one is
// discarded: its handler already ran to the end, and would most likely
// produce the same result again.
func refusedResult(r droverdriver.Result, cause error) droverdriver.Result {
	// A copy, so that whatever fences and routes the result (attempt,
	// lease token, flow bits, key, queue) stays as it was.
	out := r
	out.Output = nil
	if out.Outcome == droverdriver.OutcomeCompleted {
		out.Outcome = droverdriver.OutcomeDiscarded
	}
	out.Error = refusedError(r.Attempt, cause)
	return out
}

// refusedError encodes the attempt error of a result the store refused, in
// the shape of the root package's AttemptError. The store's message is
// cut short and made storable: it may quote the very value refused.
func refusedError(attempt int, cause error) []byte {
	msg := fmt.Sprintf("the store refused this attempt's result, so it was recorded as failed: %s", cause)
	if len(msg) > 1024 {
		msg = msg[:1024]
	}
	b, _ := json.Marshal(struct {
		Attempt int       `json:"attempt"`
		At      time.Time `json:"at"`
		Error   string    `json:"error"`
	}{attempt, time.Now().UTC(), sanitize(msg)})
	return b
}

// sanitize replaces NUL characters and invalid UTF-8 with U+FFFD.
func sanitize(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if r == 0 {
			r = '\uFFFD' // invalid bytes already decode as U+FFFD
		}
		out = append(out, r)
	}
	return string(out)
}
