package completer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/droverhq/drover/droverdriver"
	outagelog "github.com/droverhq/drover/internal/outage"
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

// writer writes batches of results, splitting a batch the store refuses.
// A completer's flushes and Write, the synchronous write of the results
// remote workers send, share it, so that a result is isolated the same
// way whichever kind of worker sent it. They differ only in what an
// outage does: a completer waits it out, since its results wait in memory
// for the store; Write returns it, since its caller holds the results and
// retries.
type writer struct {
	exec   Store
	logger *slog.Logger
	// failures logs the start and end of an outage; nil when outages are
	// returned rather than waited out.
	failures *outagelog.Reporter
	// written is called after each statement that wrote (replacements
	// included) with its results and the IDs the store accepted.
	written func(batch []droverdriver.Result, accepted []int64, took time.Duration)
	// refused is called with a result the store refused, and the error
	// it refused it with, before the failed attempt that replaces it is
	// written; optional.
	refused func(r droverdriver.Result, cause error)
	// dropped is called with a result given up: the store refused its
	// replacement too. Optional.
	dropped func(r droverdriver.Result)
}

// write writes batch, splitting it when the store refuses it. replacement
// marks a batch made by refusedResult, which is dropped rather than
// replaced again if refused. It stops with an error when ctx ends, or at
// an outage when the writer does not wait outages out; what it wrote
// before then stays written.
func (w *writer) write(ctx context.Context, batch []droverdriver.Result, replacement bool) (took time.Duration, err error) {
	backoff := 50 * time.Millisecond
	// answered counts the failures in a row while the store answered the
	// probe; refusals counts the failures judged refusals.
	answered, refusals := 0, 0
	for attempt := 1; ; attempt++ {
		start := time.Now()
		accepted, err := w.exec.JobFinish(ctx, batch)
		if err == nil {
			if w.failures != nil {
				w.failures.OK()
			}
			took = time.Since(start)
			w.written(batch, accepted, took)
			return took, nil
		}
		if ctx.Err() != nil {
			return 0, err
		}
		switch kind := w.classify(ctx, err); {
		case kind == outage && w.failures == nil:
			return 0, err
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
			w.logger.Warn("the store refused a write of job results; splitting it to write the others",
				"results", len(batch), "error", err)
			mid := len(batch) / 2
			t1, err := w.write(ctx, batch[:mid], replacement)
			if err != nil {
				return t1, err
			}
			t2, err := w.write(ctx, batch[mid:], replacement)
			return max(t1, t2), err
		}
		if refusals >= maxRefusals {
			return w.giveUp(ctx, batch[0], err, replacement)
		}
		if w.failures != nil {
			w.failures.Failed(err, "results", len(batch), "attempt", attempt)
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// giveUp writes a failed attempt in place of r, which the store refused,
// or drops r when r is already such a replacement.
func (w *writer) giveUp(ctx context.Context, r droverdriver.Result, cause error, replacement bool) (time.Duration, error) {
	if replacement {
		w.logger.Error("the store refused a job's result and the failed attempt written in its place; dropping it, the job runs again once its lease expires",
			"job", r.ID, "attempt", r.Attempt, "error", cause)
		if w.dropped != nil {
			w.dropped(r)
		}
		return 0, nil
	}
	w.logger.Error("the store refused a job's result; recording the attempt as failed instead",
		"job", r.ID, "attempt", r.Attempt, "error", cause)
	if w.refused != nil {
		w.refused(r, cause)
	}
	return w.write(ctx, []droverdriver.Result{refusedResult(r, cause)}, true)
}

// Report says what Write did with each result.
type Report struct {
	// Accepted lists the jobs whose result the store wrote as sent.
	Accepted []int64
	// Refused lists the results the store refused, in the order met.
	Refused []Refusal
}

// Refusal is one result the store refused.
type Refusal struct {
	ID int64
	// Message says why, as the failed attempt written in the result's
	// place records it (RefusalMessage).
	Message string
	// Recorded reports that the failed attempt was written: the attempt
	// is over. False when the store refused that too, or no longer held
	// the attempt: the job is left to its lease.
	Recorded bool
}

// Write writes results at once, as a completer's flush would, and reports
// what became of each: a result the store refuses fails its own attempt
// only (written as a failed attempt naming the refusal), never the
// others. Unlike a completer it does not wait out an outage: it returns
// the error, and the results written before it stay written (a repeated
// write of those is rejected by their fence).
func Write(ctx context.Context, exec Store, results []droverdriver.Result, logger *slog.Logger) (*Report, error) {
	rep := &Report{Accepted: []int64{}, Refused: []Refusal{}}
	causes := map[int64]error{}
	recorded := map[int64]bool{}
	w := &writer{exec: exec, logger: logger,
		written: func(batch []droverdriver.Result, accepted []int64, _ time.Duration) {
			for _, id := range accepted {
				if causes[id] != nil {
					recorded[id] = true
				} else {
					rep.Accepted = append(rep.Accepted, id)
				}
			}
		},
		refused: func(r droverdriver.Result, cause error) { causes[r.ID] = cause },
	}
	if _, err := w.write(ctx, results, false); err != nil {
		return nil, err
	}
	for _, r := range results {
		if cause := causes[r.ID]; cause != nil {
			rep.Refused = append(rep.Refused, Refusal{ID: r.ID, Message: RefusalMessage(cause), Recorded: recorded[r.ID]})
		}
	}
	return rep, nil
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
func (w *writer) classify(ctx context.Context, err error) failure {
	if rr, ok := w.exec.(droverdriver.RefusalReporter); ok && rr.Refused(err) {
		return refusal
	}
	// The probe reads a job that cannot exist: one cheap statement that
	// succeeds exactly when the store answers.
	if _, probeErr := w.exec.JobGet(ctx, 0); probeErr == nil || errors.Is(probeErr, droverdriver.ErrNotFound) {
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
	b, _ := json.Marshal(struct {
		Attempt int       `json:"attempt"`
		At      time.Time `json:"at"`
		Error   string    `json:"error"`
	}{attempt, time.Now().UTC(), RefusalMessage(cause)})
	return b
}

// RefusalMessage is the error a failed attempt written in place of a
// refused result records: the store's message, cut short and made
// storable, since it may quote the very value refused.
func RefusalMessage(cause error) string {
	msg := fmt.Sprintf("the store refused this attempt's result, so it was recorded as failed: %s", cause)
	if len(msg) > 1024 {
		msg = msg[:1024]
	}
	return sanitize(msg)
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
