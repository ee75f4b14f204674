package drover

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/completer"
	"github.com/droverhq/drover/internal/engine"
	internallease "github.com/droverhq/drover/internal/lease"
	"github.com/droverhq/drover/internal/validate"
)

// Remote is the API of remote workers: processes that do not run a Client
// of their own (a program in another language behind the HTTP API, say).
// They claim jobs, keep their leases alive and report results through its
// methods, which run the very statements a Client's own producers,
// heartbeat and completer run, so fencing by (ID, attempt, lease token)
// protects remote and in-process workers alike: a late result from a
// worker whose lease was rescued is rejected, and so is any result or lease
// extension from a caller that never held the claim, since only the
// claim's caller knows its LeaseToken (IDs and attempts alone are easy to
// guess).
//
// A Remote comes from Client.Remote rather than a constructor of its own,
// as River groups parts of a client's API behind accessors (Queues,
// PeriodicJobs) that share the client: a remote result is retried with the
// client's RetryPolicy, deleted on completion under its DeleteCompleted,
// counted in its Stats, and claimed under its queue limits where it has
// some, so a second Config would only be a second place for the same
// settings. Unlike Client it has no transaction type, since none of its
// calls runs in the caller's transaction: the HTTP server names it without
// knowing the store. It is safe for concurrent use.
type Remote struct {
	exec    droverdriver.Executor
	config  *Config
	metrics *clientMetrics
	// claim is the client's claim, which applies the queues' stored
	// settings (pause, limits) through the engine, as for its producers.
	claim func(context.Context, droverdriver.ClaimParams) ([]*drovertype.JobRow, error)
	// seen writes remote workers' rows of the worker registry.
	seen registrar
}

// Remote returns the client's API for remote workers. It needs no Start:
// a client that only serves remote workers runs no queue, and started, it
// runs the store's maintenance (lease rescue, pruning) for them.
func (c *Client[TTx]) Remote() *Remote { return c.remote }

// Bounds of the remote calls. They keep one request from holding a huge
// batch of leases or writing an unbounded statement.
const (
	// MaxClaim caps the jobs of one Claim.
	MaxClaim = 1000
	// MaxAttemptsPerCall caps the attempts of one Finish or ExtendLeases.
	MaxAttemptsPerCall = 10_000
	// MinRemoteLease and MaxRemoteLease bound the lease a remote worker
	// asks for: long enough to survive a heartbeat round trip, short
	// enough that a dead worker's jobs come back the same day.
	MinRemoteLease = time.Second
	MaxRemoteLease = 24 * time.Hour
	// maxErrorLen bounds the error message and trace of one attempt, which
	// are appended to the job and travel with it forever.
	maxErrorLen = 64 << 10
)

// ClaimParams asks for jobs for one remote worker.
type ClaimParams struct {
	// Queue to claim from.
	Queue string
	// Max is the most jobs to claim, 1 to MaxClaim.
	Max int
	// Owner identifies the worker in the jobs' leases.
	Owner string
	// Lease is how long the jobs stay held without ExtendLeases, between
	// MinRemoteLease and MaxRemoteLease.
	Lease time.Duration
	// WorkerName, WorkerType and WorkerLabels say what the worker is, for
	// routed jobs (routing.go): with any of them set, the claim takes
	// plain jobs and the routed jobs the worker matches, as a worker named
	// WorkerName (default Owner). With none, it takes plain jobs only.
	// They may change from one claim to the next (labels that change at
	// run time).
	WorkerName   string
	WorkerType   string
	WorkerLabels map[string]string
	// Kinds are the kinds the worker runs (at most MaxClaimKinds): the
	// claim takes jobs of those kinds only, and the worker registry
	// records them, so that a job of a kind no live worker of its queue
	// runs waits and is reported (Client.Unroutable) instead of being
	// claimed and failed by a worker with no handler for it, as a Go
	// client's claims do. Nil claims every kind, as workers that say
	// nothing of their kinds have; an empty, non-nil list is refused.
	Kinds []string
}

// MaxClaimKinds bounds the kinds one claim names.
const MaxClaimKinds = 1000

// kinds returns the kinds p's worker runs, sorted and without
// duplicates, nil for every kind.
func (p *ClaimParams) kinds() []string {
	if p.Kinds == nil {
		return nil
	}
	return slices.Compact(slices.Sorted(slices.Values(p.Kinds)))
}

// worker returns the identity p's claim presents, nil for a plain worker.
func (p *ClaimParams) worker() *droverdriver.Worker {
	if p.WorkerName == "" && p.WorkerType == "" && len(p.WorkerLabels) == 0 {
		return nil
	}
	return &droverdriver.Worker{Name: cmp.Or(p.WorkerName, p.Owner), Type: p.WorkerType, Labels: p.WorkerLabels}
}

// Claim moves up to p.Max claimable jobs of p.Queue to running under a lease
// held by p.Owner and returns them, each with the attempt and the
// LeaseToken that every later call about it must present. It returns no
// jobs, and no error, when none is claimable or the queue is paused; a
// queue's stored limits bound what it takes, as for Go clients.
func (r *Remote) Claim(ctx context.Context, p ClaimParams) ([]*drovertype.JobRow, error) {
	if err := validate.Queue(p.Queue); err != nil {
		return nil, err
	}
	if p.Max < 1 || p.Max > MaxClaim {
		return nil, invalidf("max %d: must be between 1 and %d", p.Max, MaxClaim)
	}
	if err := validate.Owner(p.Owner); err != nil {
		return nil, err
	}
	if p.Lease < MinRemoteLease || p.Lease > MaxRemoteLease {
		return nil, invalidf("lease %s: must be between %s and %s", p.Lease, MinRemoteLease, MaxRemoteLease)
	}
	if err := validateWorker(p.WorkerName, p.WorkerType, p.WorkerLabels); err != nil {
		return nil, err
	}
	if p.Kinds != nil && (len(p.Kinds) == 0 || len(p.Kinds) > MaxClaimKinds) {
		return nil, invalidf("kinds: %d named; name 1 to %d kinds the worker runs, or none to claim every kind", len(p.Kinds), MaxClaimKinds)
	}
	for _, k := range p.Kinds {
		if err := validate.Kind(k); err != nil {
			return nil, fmt.Errorf("kinds: %w", err)
		}
	}
	w := p.worker()
	// routing: the registry learns of the worker before it claims, and
	// again at most every engine.WorkerSeenEvery; a store that cannot
	// write it still serves the claim.
	if err := r.seen.claimed(ctx, r.exec, &p, w); err != nil {
		r.config.Logger.Warn("drover: register remote worker", "worker", p.Owner, "error", err)
	}
	// The engine applies the queue's stored settings: a remote worker
	// brings no configuration, and a paused or limited queue must hold
	// for it as for Go clients.
	rows, err := r.claim(ctx, droverdriver.ClaimParams{Queue: p.Queue, Max: p.Max, Owner: p.Owner, Lease: p.Lease, Worker: w,
		Kinds: p.kinds()})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// AttemptOutcome is what a remote worker reports of one attempt.
type AttemptOutcome string

// Outcomes a remote worker can report.
const (
	// AttemptCompleted finishes the job as completed.
	AttemptCompleted AttemptOutcome = "completed"
	// AttemptFailed retries the job with backoff, or discards it when the
	// attempt was the last its stored max_attempts allows, exactly as a Go
	// worker's error does.
	AttemptFailed AttemptOutcome = "failed"
	// AttemptCancelled finishes the job as cancelled without retry, as
	// returning Cancel(err) from a Go worker does.
	AttemptCancelled AttemptOutcome = "cancelled"
	// AttemptSnoozed puts the job back to wait until RetryAt (required)
	// without using an attempt: the next claim gets the same attempt
	// number, no error is recorded, and max_attempts is not spent. A job
	// whose cancel was requested is cancelled instead.
	AttemptSnoozed AttemptOutcome = "snoozed"
)

// AttemptResult is the result of one attempt of a remote worker.
type AttemptResult struct {
	ID int64
	// Attempt is the attempt the job was claimed with; a result for any
	// other attempt is rejected.
	Attempt int
	// LeaseToken is the token the job was claimed with (JobRow.LeaseToken).
	// A result without it, or with another, is rejected like a stale one
	// and changes nothing.
	LeaseToken drovertype.LeaseToken
	// MaxAttempts is ignored. Workers used to echo the job's max_attempts
	// and a failed attempt at or past it discarded the job, which let a
	// caller discard a job that had attempts left; the store now decides
	// from its own max_attempts. The field stays so that existing callers
	// compile.
	MaxAttempts int
	Outcome     AttemptOutcome
	// Error and Trace describe a failed or cancelled attempt, at most
	// 64 KiB each. NUL characters and invalid UTF-8 in them are stored as
	// U+FFFD rather than refused, so that a failure is never lost for the
	// way it is worded.
	Error string
	Trace string
	// RetryAt overrides Config.RetryPolicy for a failed attempt, and is
	// when a snoozed job becomes claimable again. It must lie between
	// MinTime and MaxTime.
	RetryAt time.Time
	// Result is the JSON a completed attempt stores as the job's result,
	// as Job.SetResult does for a Go worker: at most MaxResultBytes, read
	// back with JobResult, BatchResults and by dependent jobs. Only a
	// completed outcome may carry one.
	Result json.RawMessage
}

// FinishReport says which results the store accepted. A rejected result is
// one whose attempt the store no longer holds as running under that lease
// token: its lease expired and the job was rescued, it was released, it was
// already finished, or the token was missing or wrong.
type FinishReport struct {
	Accepted []int64
	Rejected []int64
	// Refused lists the results the store refused to hold (a value it
	// cannot store, say), each recorded as a failed attempt in its place,
	// as a Go worker's would be: one such result fails its own job, never
	// the others of the call.
	Refused []RefusedResult
}

// RefusedResult is a result the store refused.
type RefusedResult struct {
	ID int64
	// Error says why, as the job's failed attempt records it.
	Error string
	// Recorded reports that the failed attempt was written: the attempt
	// is over. False when the store refused that too: the job runs again
	// once its lease expires, so the worker should stop extending it.
	Recorded bool
}

// Finish writes the results of remote attempts in one statement. A result
// the store refuses is isolated as a Go client's completer isolates it
// (the statement split until that result is alone, then written as a
// failed attempt naming the refusal), so that the others are written and
// the report says which was refused.
func (r *Remote) Finish(ctx context.Context, results []AttemptResult) (*FinishReport, error) {
	if len(results) == 0 {
		return nil, invalidf("results: empty")
	}
	if len(results) > MaxAttemptsPerCall {
		return nil, invalidf("results: %d is over the limit of %d per call", len(results), MaxAttemptsPerCall)
	}
	now := time.Now()
	batch := make([]droverdriver.Result, len(results))
	seen := make(map[int64]bool, len(results))
	for i, a := range results {
		res, err := r.remoteResult(a, now)
		if err != nil {
			return nil, fmt.Errorf("result %d of %d (job %d): %w", i+1, len(results), a.ID, err)
		}
		if seen[a.ID] {
			return nil, invalidf("result %d of %d: job %d appears twice", i+1, len(results), a.ID)
		}
		seen[a.ID] = true
		batch[i] = res
	}
	rep, err := completer.Write(ctx, engine.Finisher{Executor: r.exec}, batch, r.config.Logger)
	if err != nil {
		return nil, err
	}
	out := &FinishReport{Accepted: rep.Accepted, Refused: make([]RefusedResult, len(rep.Refused))}
	answered := slices.Clone(rep.Accepted)
	for i, f := range rep.Refused {
		out.Refused[i] = RefusedResult{ID: f.ID, Error: f.Message, Recorded: f.Recorded}
		answered = append(answered, f.ID)
	}
	out.Rejected = notIn(batch, answered)
	return out, nil
}

// notIn returns the IDs of results that accepted does not list, in their
// order: the results the store turned away.
func notIn(results []droverdriver.Result, accepted []int64) []int64 {
	ok := make(map[int64]bool, len(accepted))
	for _, id := range accepted {
		ok[id] = true
	}
	out := []int64{}
	for _, r := range results {
		if !ok[r.ID] {
			out = append(out, r.ID)
		}
	}
	return out
}

// remoteResult validates one remote result and turns it into the driver's
// outcome the way runJob does for a Go worker, except that a failure is
// always a retry: only the store knows the job's max_attempts for sure, and
// it discards the job when the attempt was its last.
func (r *Remote) remoteResult(a AttemptResult, now time.Time) (droverdriver.Result, error) {
	res := droverdriver.Result{ID: a.ID, Attempt: a.Attempt, LeaseToken: a.LeaseToken}
	if err := checkAttemptRef(a.ID, a.Attempt); err != nil {
		return res, err
	}
	if err := checkRemoteResult(a); err != nil {
		return res, err
	}
	if len(a.Error) > maxErrorLen || len(a.Trace) > maxErrorLen {
		return res, invalidf("error and trace: each at most %d bytes", maxErrorLen)
	}
	if len(a.Result) > 0 {
		if a.Outcome != AttemptCompleted {
			return res, invalidf("result: only a completed attempt stores a result, not a %s one", a.Outcome)
		}
		if len(a.Result) > MaxResultBytes {
			return res, invalidf("result: %d bytes is over the limit of %d", len(a.Result), MaxResultBytes)
		}
		if !json.Valid(a.Result) {
			return res, invalidf("result: not valid JSON")
		}
	}
	switch a.Outcome {
	case AttemptCompleted:
		res.Outcome = droverdriver.OutcomeCompleted
		res.Output = a.Result
		res.Forget = r.config.DeleteCompleted
		r.metrics.completed.Add(1)
		return res, nil
	case AttemptCancelled:
		res.Outcome = droverdriver.OutcomeCancelled
		res.Error = encodeAttemptError(a.Attempt, remoteError(a.Error, "cancelled by worker"), a.Trace)
		return res, nil
	case AttemptSnoozed:
		if a.RetryAt.IsZero() {
			return res, invalidf("retry at: required for a snoozed attempt")
		}
		if a.Error != "" || a.Trace != "" {
			return res, invalidf("error and trace: a snoozed attempt records none")
		}
		// A release that is due later: the store undoes the attempt.
		res.Outcome = droverdriver.OutcomeReleased
		res.RunAt = a.RetryAt
		return res, nil
	case AttemptFailed:
	default:
		return res, invalidf("outcome %q: must be %q, %q, %q or %q", a.Outcome, AttemptCompleted, AttemptFailed,
			AttemptCancelled, AttemptSnoozed)
	}
	r.metrics.failed.Add(1)
	res.Error = encodeAttemptError(a.Attempt, remoteError(a.Error, "failed without a message"), a.Trace)
	// Always a retry: the store discards the job instead when the attempt
	// used up its stored max_attempts (droverdriver.OutcomeRetry), so what the
	// worker says of max_attempts cannot discard a job early.
	res.Outcome = droverdriver.OutcomeRetry
	res.RunAt = a.RetryAt
	if res.RunAt.IsZero() {
		res.RunAt = now.Add(r.config.RetryPolicy(a.Attempt))
	}
	return res, nil
}

// remoteError is the error recorded for a remote attempt, with a fallback
// so that a failure is never recorded with an empty message.
func remoteError(msg, fallback string) error {
	if msg == "" {
		msg = fallback
	}
	return errors.New(msg)
}

// ReleaseReport says which attempts Release gave back. A rejected attempt
// is one the store no longer holds as running under that lease token, as
// for FinishReport.
type ReleaseReport struct {
	Released []int64
	Rejected []int64
}

// Release gives back jobs a remote worker claimed but will not run (it is
// stopping, or took more than it can start): each becomes available at
// once, and its attempt is undone, so that it counts neither against
// max_attempts nor as an error, and the next claim gets the same attempt
// number. Each attempt is fenced by (ID, Attempt, LeaseToken) exactly as a
// result is; a job whose cancel was requested is cancelled instead.
func (r *Remote) Release(ctx context.Context, attempts []AttemptRef) (*ReleaseReport, error) {
	if err := checkAttemptRefs(attempts); err != nil {
		return nil, err
	}
	batch := make([]droverdriver.Result, len(attempts))
	for i, a := range attempts {
		batch[i] = droverdriver.Result{ID: a.ID, Attempt: a.Attempt, LeaseToken: a.LeaseToken, Outcome: droverdriver.OutcomeReleased}
	}
	released, err := engine.Finish(ctx, r.exec, batch)
	if err != nil {
		return nil, err
	}
	if released == nil {
		released = []int64{}
	}
	return &ReleaseReport{Released: released, Rejected: notIn(batch, released)}, nil
}

// checkAttemptRefs validates the attempts of one Release or ExtendLeases:
// at least one, at most MaxAttemptsPerCall, each well formed, and each job
// named once (a worker holds at most one attempt of a job, and the store
// answers per job, so a job named twice would get one answer for both).
func checkAttemptRefs(attempts []AttemptRef) error {
	if len(attempts) == 0 {
		return invalidf("attempts: empty")
	}
	if len(attempts) > MaxAttemptsPerCall {
		return invalidf("attempts: %d is over the limit of %d per call", len(attempts), MaxAttemptsPerCall)
	}
	seen := make(map[int64]bool, len(attempts))
	for i, a := range attempts {
		if err := checkAttemptRef(a.ID, a.Attempt); err != nil {
			return fmt.Errorf("attempt %d of %d: %w", i+1, len(attempts), err)
		}
		if seen[a.ID] {
			return invalidf("attempt %d of %d: job %d appears twice", i+1, len(attempts), a.ID)
		}
		seen[a.ID] = true
	}
	return nil
}

// AttemptRef names one attempt a remote worker holds.
type AttemptRef struct {
	ID      int64
	Attempt int
	// LeaseToken is the token the job was claimed with; a lease named
	// without it, or with another, is not extended and is reported lost.
	LeaseToken drovertype.LeaseToken
}

// LeaseReport is what the store says of the attempts in ExtendLeases.
type LeaseReport struct {
	// Lost lists jobs whose attempt the store no longer holds (rescued
	// after the lease expired, or finished): the worker should stop them,
	// since their results will be rejected.
	Lost []int64
	// CancelRequested lists jobs someone asked to cancel: the worker
	// should stop them and report them cancelled.
	CancelRequested []int64
}

// ExtendLeases extends the leases of attempts a remote worker holds to
// lease from now, in one statement, and reports the attempts it should stop.
func (r *Remote) ExtendLeases(ctx context.Context, attempts []AttemptRef, lease time.Duration) (*LeaseReport, error) {
	if err := checkAttemptRefs(attempts); err != nil {
		return nil, err
	}
	if lease < MinRemoteLease || lease > MaxRemoteLease {
		return nil, invalidf("lease %s: must be between %s and %s", lease, MinRemoteLease, MaxRemoteLease)
	}
	p := droverdriver.HeartbeatParams{IDs: make([]int64, len(attempts)), Attempts: make([]int, len(attempts)),
		Tokens: make([]drovertype.LeaseToken, len(attempts)), Lease: lease}
	for i, a := range attempts {
		p.IDs[i], p.Attempts[i], p.Tokens[i] = a.ID, a.Attempt, a.LeaseToken
	}
	res, err := internallease.Extend(ctx, r.exec, p)
	if err != nil {
		return nil, err
	}
	rep := &LeaseReport{Lost: res.Lost, CancelRequested: res.CancelRequested}
	if rep.Lost == nil {
		rep.Lost = []int64{}
	}
	if rep.CancelRequested == nil {
		rep.CancelRequested = []int64{}
	}
	return rep, nil
}

// ParentResults returns the states and results of the parents of the jobs
// among jobs that wait for others (JobRow.HasParents), by the waiting job's
// ID, each job's parents in ID order, in one read: a remote worker gets
// with a dependant what its parents produced, as a Go worker reads it
// through Client.JobParentResults. Jobs without parents cost nothing.
func (r *Remote) ParentResults(ctx context.Context, jobs []*drovertype.JobRow) (map[int64][]drovertype.JobResult, error) {
	var children []int64
	for _, j := range jobs {
		if j.HasParents() {
			children = append(children, j.ID)
		}
	}
	if len(children) == 0 {
		return nil, nil
	}
	rows, err := r.exec.JobsParentResults(ctx, children)
	if err != nil {
		return nil, err
	}
	out := make(map[int64][]drovertype.JobResult, len(children))
	for _, row := range rows {
		out[row.ChildID] = append(out[row.ChildID], row.JobResult)
	}
	return out, nil
}
