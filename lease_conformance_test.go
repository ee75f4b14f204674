package drover_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/engine"
)

// Conformance tests for what a caller that can reach the store, but never
// claimed a job, can do to it: results and lease extensions are fenced by
// the claim's lease token, and a failed result cannot choose between a
// retry and a discard. Every check reads what the store kept.

// forgedToken is a well-formed lease token that no claim issued, as a
// caller guessing would send.
var forgedToken = drovertype.LeaseToken{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}

// claimOne claims the one job waiting in queue for owner.
func claimOne(t *testing.T, r *drover.Remote, queue, owner string, lease time.Duration) *drovertype.JobRow {
	t.Helper()
	jobs, err := r.Claim(context.Background(), drover.ClaimParams{Queue: queue, Max: 10, Owner: owner, Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 {
		t.Fatalf("claimed %d jobs from %s, want 1", len(jobs), queue)
	}
	if jobs[0].LeaseToken.IsZero() {
		t.Fatalf("claimed job %d has no lease token", jobs[0].ID)
	}
	return jobs[0]
}

// TestForgedFinishIsRejected: a result naming a running job's ID and
// attempt, but without the claim's lease token (none, or a guessed one),
// is rejected and changes nothing, whatever its outcome; the real worker's
// result is then accepted.
func TestForgedFinishIsRejected(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := remoteSetup(t, s)
		ctx := context.Background()
		raw := drover.RawArgs{KindName: "remote", JSON: []byte(`{}`)}
		id := b.insert(t, raw, nil)
		real := claimOne(t, b.remote, "default", "real", time.Minute)

		for _, token := range []drovertype.LeaseToken{{}, forgedToken} {
			for _, forged := range []drover.AttemptResult{
				{ID: id, Attempt: 1, LeaseToken: token, Outcome: drover.AttemptCompleted, Result: []byte(`"forged"`)},
				{ID: id, Attempt: 1, LeaseToken: token, Outcome: drover.AttemptFailed, MaxAttempts: 1, Error: "forged"},
				{ID: id, Attempt: 1, LeaseToken: token, Outcome: drover.AttemptCancelled},
			} {
				rep, err := b.remote.Finish(ctx, []drover.AttemptResult{forged})
				if err != nil {
					t.Fatal(err)
				}
				if len(rep.Accepted) != 0 || len(rep.Rejected) != 1 {
					t.Fatalf("forged %s result with token %s: %+v, want rejected", forged.Outcome, token, rep)
				}
				row, err := b.client.JobGet(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if row.State != drovertype.JobStateRunning || row.LeaseOwner != "real" || row.Attempt != 1 || row.ErrorCount != 0 {
					t.Fatalf("forged %s result changed the job: %+v", forged.Outcome, row)
				}
				if !row.LeaseToken.IsZero() {
					t.Fatalf("JobGet returned the lease token of job %d", id)
				}
			}
		}

		rep, err := b.remote.Finish(ctx, []drover.AttemptResult{{ID: id, Attempt: 1, LeaseToken: real.LeaseToken,
			Outcome: drover.AttemptCompleted, Result: []byte(`"real"`)}})
		if err != nil || len(rep.Accepted) != 1 {
			t.Fatalf("real result: %+v, %v", rep, err)
		}
		res, err := b.client.JobResult(ctx, id)
		if err != nil || res.State != drovertype.JobStateCompleted || string(res.Result) != `"real"` {
			t.Fatalf("stored result = %+v, %v; want the real worker's", res, err)
		}
	})
}

// TestForgedFinishIsRejectedByTheDriver holds both stores' finish
// statements to the fence directly, for every outcome and for the batch
// shapes that take different statements (PostgreSQL's JobComplete for
// plain completions, JobFinish otherwise; SQLite's forget path): a result
// with another claim's token is rejected, the one with its own accepted.
func TestForgedFinishIsRejectedByTheDriver(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		d := s.open(t)
		ctx := context.Background()
		outcomes := []struct {
			name   string
			result droverdriver.Result
			want   drovertype.JobState
		}{
			{"completed", droverdriver.Result{Outcome: droverdriver.OutcomeCompleted}, drovertype.JobStateCompleted},
			{"completed and forgotten", droverdriver.Result{Outcome: droverdriver.OutcomeCompleted, Forget: true}, ""},
			{"retry", droverdriver.Result{Outcome: droverdriver.OutcomeRetry, Error: []byte(`{"error":"x"}`), RunAt: time.Now().Add(time.Hour)},
				drovertype.JobStateRetryable},
			{"discarded", droverdriver.Result{Outcome: droverdriver.OutcomeDiscarded, Error: []byte(`{"error":"x"}`)}, drovertype.JobStateDiscarded},
			{"cancelled", droverdriver.Result{Outcome: droverdriver.OutcomeCancelled}, drovertype.JobStateCancelled},
			{"released", droverdriver.Result{Outcome: droverdriver.OutcomeReleased}, drovertype.JobStateAvailable},
		}
		for _, o := range outcomes {
			t.Run(o.name, func(t *testing.T) {
				queue := "q" + fmt.Sprint(len(o.name))
				ids, err := d.Executor().JobInsertMany(ctx, []droverdriver.InsertParams{{Queue: queue, Kind: "k", Args: []byte(`{}`), MaxAttempts: 5}})
				if err != nil {
					t.Fatal(err)
				}
				claimed, err := d.Executor().JobClaim(ctx, droverdriver.ClaimParams{Queue: queue, Max: 1, Owner: "real", Lease: time.Minute})
				if err != nil || len(claimed) != 1 || claimed[0].ID != ids[0] {
					t.Fatalf("claim = %v, %v", claimed, err)
				}
				res := o.result
				res.ID, res.Attempt = ids[0], 1
				for _, token := range []drovertype.LeaseToken{{}, drovertype.LeaseToken(forgedToken)} {
					res.LeaseToken = token
					acc, err := engine.Finish(ctx, d.Executor(), []droverdriver.Result{res})
					if err != nil || len(acc) != 0 {
						t.Fatalf("forged result with token %s: accepted %v, %v", token, acc, err)
					}
					if row, err := d.Executor().JobGet(ctx, ids[0]); err != nil || row.State != drovertype.JobStateRunning || row.LeaseOwner != "real" {
						t.Fatalf("forged result changed the job: %+v, %v", row, err)
					}
				}
				res.LeaseToken = claimed[0].LeaseToken
				if acc, err := engine.Finish(ctx, d.Executor(), []droverdriver.Result{res}); err != nil || len(acc) != 1 {
					t.Fatalf("real result: accepted %v, %v", acc, err)
				}
				row, err := d.Executor().JobGet(ctx, ids[0])
				switch {
				case o.want == "" && errors.Is(err, droverdriver.ErrNotFound):
				case err != nil:
					t.Fatal(err)
				case row.State != o.want:
					t.Fatalf("job is %s after the real result, want %s", row.State, o.want)
				}
			})
		}
	})
}

// TestForgedHeartbeatDoesNotExtendTheLease: a lease extension naming a
// running job's ID and attempt, without the claim's token, extends nothing
// and reports the attempt lost to its sender; the real worker's extends
// the lease.
func TestForgedHeartbeatDoesNotExtendTheLease(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := remoteSetup(t, s)
		ctx := context.Background()
		id := b.insert(t, drover.RawArgs{KindName: "remote", JSON: []byte(`{}`)}, nil)
		real := claimOne(t, b.remote, "default", "real", time.Minute)
		before, err := b.client.JobGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}

		for _, token := range []drovertype.LeaseToken{{}, forgedToken} {
			rep, err := b.remote.ExtendLeases(ctx, []drover.AttemptRef{{ID: id, Attempt: 1, LeaseToken: token}}, drover.MaxRemoteLease)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Lost) != 1 || rep.Lost[0] != id {
				t.Fatalf("forged extension with token %s: %+v, want the attempt reported lost", token, rep)
			}
			row, err := b.client.JobGet(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if !row.LeaseExpiresAt.Equal(*before.LeaseExpiresAt) {
				t.Fatalf("forged extension moved the lease from %v to %v", before.LeaseExpiresAt, row.LeaseExpiresAt)
			}
		}

		rep, err := b.remote.ExtendLeases(ctx, []drover.AttemptRef{{ID: id, Attempt: 1, LeaseToken: real.LeaseToken}}, drover.MaxRemoteLease)
		if err != nil || len(rep.Lost) != 0 {
			t.Fatalf("real extension: %+v, %v", rep, err)
		}
		row, err := b.client.JobGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !row.LeaseExpiresAt.After(before.LeaseExpiresAt.Add(time.Hour)) {
			t.Fatalf("real extension to %s left the lease at %v (was %v)", drover.MaxRemoteLease, row.LeaseExpiresAt, before.LeaseExpiresAt)
		}
	})
}

// TestFailedFinishUsesStoredMaxAttempts: whether a failed attempt retries
// or discards its job follows the job's stored max_attempts, not the
// max_attempts the worker sends: "max_attempts 1" does not discard a job
// that has 25 attempts, and a huge one does not keep retrying a job whose
// last attempt failed.
func TestFailedFinishUsesStoredMaxAttempts(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := remoteSetup(t, s)
		ctx := context.Background()
		raw := drover.RawArgs{KindName: "remote", JSON: []byte(`{}`)}

		many := b.insert(t, raw, &drover.InsertOpts{Queue: "many", MaxAttempts: 25})
		j := claimOne(t, b.remote, "many", "w", time.Minute)
		rep, err := b.remote.Finish(ctx, []drover.AttemptResult{{ID: many, Attempt: 1, LeaseToken: j.LeaseToken,
			Outcome: drover.AttemptFailed, MaxAttempts: 1, Error: "transient", RetryAt: time.Now().Add(time.Hour)}})
		if err != nil || len(rep.Accepted) != 1 {
			t.Fatalf("finish: %+v, %v", rep, err)
		}
		row, err := b.client.JobGet(ctx, many)
		if err != nil {
			t.Fatal(err)
		}
		if row.State != drovertype.JobStateRetryable || row.MaxAttempts != 25 || row.Attempt != 1 || row.ErrorCount != 1 {
			t.Fatalf("job with 25 attempts after a failure claiming max_attempts 1: %+v, want retryable", row)
		}

		two := b.insert(t, raw, &drover.InsertOpts{Queue: "two", MaxAttempts: 2})
		for attempt := 1; attempt <= 2; attempt++ {
			j := claimOne(t, b.remote, "two", "w", time.Minute)
			rep, err := b.remote.Finish(ctx, []drover.AttemptResult{{ID: two, Attempt: attempt, LeaseToken: j.LeaseToken,
				Outcome: drover.AttemptFailed, MaxAttempts: 1_000_000, Error: "bad", RetryAt: time.Now().Add(-time.Second)}})
			if err != nil || len(rep.Accepted) != 1 {
				t.Fatalf("finish of attempt %d: %+v, %v", attempt, rep, err)
			}
		}
		if row, err := b.client.JobGet(ctx, two); err != nil || row.State != drovertype.JobStateDiscarded || row.Attempt != 2 {
			t.Fatalf("job whose second of 2 attempts failed: %+v, %v; want discarded", row, err)
		}
	})
}

// TestErrorHistoryKeepsTheLastErrors: 30 failed attempts keep the last
// ErrorsKept errors, by attempt number, and count all 30; the count and
// the cap go with the job into finished_jobs, and the rescuer's lease
// error is capped and counted the same way.
func TestErrorHistoryKeepsTheLastErrors(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := remoteSetup(t, s)
		ctx := context.Background()
		const failures = 30
		id := b.insert(t, drover.RawArgs{KindName: "remote", JSON: []byte(`{}`)}, &drover.InsertOpts{MaxAttempts: 100})
		for attempt := 1; attempt <= failures; attempt++ {
			j := claimOne(t, b.remote, "default", "w", time.Minute)
			rep, err := b.remote.Finish(ctx, []drover.AttemptResult{{ID: id, Attempt: attempt, LeaseToken: j.LeaseToken,
				Outcome: drover.AttemptFailed, Error: fmt.Sprintf("failure %d", attempt), RetryAt: time.Now().Add(-time.Second)}})
			if err != nil || len(rep.Accepted) != 1 {
				t.Fatalf("finish of attempt %d: %+v, %v", attempt, rep, err)
			}
		}
		checkErrors := func(what string, row *drovertype.JobRow, count, last int) {
			t.Helper()
			if row.ErrorCount != count || len(row.Errors) != drovertype.ErrorsKept {
				t.Fatalf("%s: %d errors kept, %d counted; want %d kept, %d counted", what, len(row.Errors), row.ErrorCount,
					drovertype.ErrorsKept, count)
			}
			for i, e := range row.Errors {
				if want := last - drovertype.ErrorsKept + 1 + i; e.Attempt != want {
					t.Fatalf("%s: error %d is of attempt %d, want %d (the last %d, oldest first)", what, i, e.Attempt, want, drovertype.ErrorsKept)
				}
			}
		}
		row, err := b.client.JobGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		checkErrors("after 30 failures", row, failures, failures)
		if row.Errors[drovertype.ErrorsKept-1].Error != "failure 30" {
			t.Fatalf("last error = %+v", row.Errors[drovertype.ErrorsKept-1])
		}

		// The rescuer's lease error.
		claimOne(t, b.remote, "default", "dies", time.Minute)
		if n, err := engine.Rescue(ctx, b.d.Executor(), droverdriver.RescueParams{Now: time.Now().Add(time.Hour), Limit: 10}); err != nil || n != 1 {
			t.Fatalf("rescue: %d, %v", n, err)
		}
		row, err = b.client.JobGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		checkErrors("after a rescue", row, failures+1, failures+1)

		// Into finished_jobs.
		j := claimOne(t, b.remote, "default", "w", time.Minute)
		rep, err := b.remote.Finish(ctx, []drover.AttemptResult{{ID: id, Attempt: j.Attempt, LeaseToken: j.LeaseToken,
			Outcome: drover.AttemptCancelled, Error: "given up"}})
		if err != nil || len(rep.Accepted) != 1 {
			t.Fatalf("cancel: %+v, %v", rep, err)
		}
		row, err = b.client.JobGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if row.State != drovertype.JobStateCancelled {
			t.Fatalf("job is %s, want cancelled", row.State)
		}
		checkErrors("finished", row, failures+2, failures+2)
	})
}

// TestUniqueKeyScopedToKindAndQueue: a unique key is held per kind, so
// that kind A's key does not block kind B's; a job of the same kind in
// another queue still conflicts, unless both were inserted with
// UniqueByQueue, which holds the key per queue too.
func TestUniqueKeyScopedToKindAndQueue(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := remoteSetup(t, s)
		ctx := context.Background()
		insert := func(kind, queue string, byQueue bool) bool {
			t.Helper()
			row, err := b.client.Insert(ctx, drover.RawArgs{KindName: kind, JSON: []byte(`{}`)},
				&drover.InsertOpts{Queue: queue, UniqueKey: "k", UniqueByQueue: byQueue, RunAt: time.Now().Add(time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			return !row.UniqueSkippedAsDuplicate
		}
		steps := []struct {
			kind, queue string
			byQueue     bool
			stored      bool
		}{
			{"a", "q1", false, true},
			{"b", "q1", false, true},  // another kind: its own key
			{"a", "q2", false, false}, // same kind, another queue: the same key
			{"a", "q1", false, false}, // same kind and queue
			{"c", "q1", true, true},
			{"c", "q2", true, true},  // by queue: another queue, another key
			{"c", "q1", true, false}, // by queue, same queue: the same key
		}
		for i, st := range steps {
			if got := insert(st.kind, st.queue, st.byQueue); got != st.stored {
				t.Fatalf("step %d (kind %s, queue %s, by queue %v): stored %v, want %v", i+1, st.kind, st.queue, st.byQueue, got, st.stored)
			}
		}
		stored, err := b.client.JobList(ctx, drover.JobListParams{})
		if err != nil {
			t.Fatal(err)
		}
		if len(stored) != 4 {
			t.Fatalf("store holds %d jobs, want the 4 stored", len(stored))
		}
	})
}
