package drover_test

import (
	"context"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/engine"
)

// Conformance tests for the end of keyed jobs whose result comes from a
// remote worker (Client.Finish, as the HTTP server calls it): the result
// carries no key or queue, so the store's own columns must say that the
// job's end frees a place in its key. The next job of the key is available
// as soon as Finish returns, without the leader's promotion sweep (no
// client here is started, so no sweep ever runs).

// TestRemoteFinishPromotesKey finishes the running job of a key whose
// limit is 1, once per outcome that ends or retries it, and checks that the
// job blocked behind it becomes available at once when the key has room.
func TestRemoteFinishPromotesKey(t *testing.T) {
	tests := []struct {
		name    string
		result  drover.AttemptResult
		opts    drover.InsertOpts
		ended   drovertype.JobState
		promote bool // the job behind is available after the finish
	}{
		{name: "completed", result: drover.AttemptResult{Outcome: drover.AttemptCompleted},
			ended: drovertype.JobStateCompleted, promote: true},
		{name: "cancelled", result: drover.AttemptResult{Outcome: drover.AttemptCancelled},
			ended: drovertype.JobStateCancelled, promote: true},
		{name: "discarded", result: drover.AttemptResult{Outcome: drover.AttemptFailed, Error: "bad input"},
			opts: drover.InsertOpts{MaxAttempts: 1}, ended: drovertype.JobStateDiscarded, promote: true},
		// A retried job keeps its place in the key: the job behind waits.
		{name: "retried", result: drover.AttemptResult{Outcome: drover.AttemptFailed, Error: "try again", RetryAt: time.Now().Add(time.Hour)},
			opts: drover.InsertOpts{MaxAttempts: 3}, ended: drovertype.JobStateRetryable, promote: false},
	}
	forEachStore(t, func(t *testing.T, s store) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				b := remoteSetup(t, s)
				ctx := context.Background()
				opts := tt.opts
				opts.Key, opts.KeyLimit = "k", 1
				first := b.insert(t, noopArgs{N: 1}, &opts)
				behind := b.insert(t, noopArgs{N: 2}, &drover.InsertOpts{Key: "k", KeyLimit: 1})
				assertStates(t, b.client, map[int64]drovertype.JobState{first: drovertype.JobStateAvailable, behind: drovertype.JobStateBlocked})

				jobs, err := b.remote.Claim(ctx, drover.ClaimParams{Queue: drover.DefaultQueue, Max: 10, Owner: "remote-1", Lease: time.Minute})
				if err != nil {
					t.Fatal(err)
				}
				if len(jobs) != 1 || jobs[0].ID != first {
					t.Fatalf("claimed %d jobs, want job %d alone (its key allows one)", len(jobs), first)
				}
				res := tt.result
				res.ID, res.Attempt, res.LeaseToken = first, jobs[0].Attempt, jobs[0].LeaseToken
				rep, err := b.remote.Finish(ctx, []drover.AttemptResult{res})
				if err != nil {
					t.Fatal(err)
				}
				if len(rep.Accepted) != 1 || rep.Accepted[0] != first {
					t.Fatalf("report = %+v, want job %d accepted", rep, first)
				}
				want := drovertype.JobStateBlocked
				if tt.promote {
					want = drovertype.JobStateAvailable
				}
				assertStates(t, b.client, map[int64]drovertype.JobState{first: tt.ended, behind: want})
			})
		}
	})
}

// TestRemoteFinishMixedBatch finishes, in one remote batch, a plain job, a
// keyed job and a stale result: the plain job and the keyed one are
// accepted, the stale one rejected, and the keyed job's end promotes the
// next of its key.
func TestRemoteFinishMixedBatch(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := remoteSetup(t, s)
		ctx := context.Background()
		plain := b.insert(t, noopArgs{N: 1}, nil)
		keyed := b.insert(t, noopArgs{N: 2}, &drover.InsertOpts{Key: "k", KeyLimit: 1})
		behind := b.insert(t, noopArgs{N: 3}, &drover.InsertOpts{Key: "k", KeyLimit: 1})
		stale := b.insert(t, noopArgs{N: 4}, nil)

		jobs, err := b.remote.Claim(ctx, drover.ClaimParams{Queue: drover.DefaultQueue, Max: 10, Owner: "remote-1", Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != 3 {
			t.Fatalf("claimed %d jobs, want 3 (the job behind the key waits)", len(jobs))
		}
		var results []drover.AttemptResult
		for _, j := range jobs {
			r := drover.AttemptResult{ID: j.ID, Attempt: j.Attempt, LeaseToken: j.LeaseToken, Outcome: drover.AttemptCompleted}
			if j.ID == stale {
				r.Attempt++ // an attempt the store never gave out
			}
			results = append(results, r)
		}
		rep, err := b.remote.Finish(ctx, results)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Accepted) != 2 || len(rep.Rejected) != 1 || rep.Rejected[0] != stale {
			t.Fatalf("report = %+v, want jobs %d and %d accepted and %d rejected", rep, plain, keyed, stale)
		}
		assertStates(t, b.client, map[int64]drovertype.JobState{
			plain: drovertype.JobStateCompleted, keyed: drovertype.JobStateCompleted,
			behind: drovertype.JobStateAvailable, stale: drovertype.JobStateRunning,
		})
	})
}

// TestKeyFreedByRescueAndDiscard ends the first job of a key whose limit is
// 1 without a result: discarded or cancelled while it waits (alone or in
// bulk), or rescued out of attempts after its lease expired. Either end promotes the job behind it
// in the same transaction, without the leader's sweep.
func TestKeyFreedByRescueAndDiscard(t *testing.T) {
	tests := []struct {
		name  string
		end   func(t *testing.T, b *bundle, id int64)
		ended drovertype.JobState
	}{
		{name: "discarded", ended: drovertype.JobStateDiscarded, end: func(t *testing.T, b *bundle, id int64) {
			if _, err := b.client.JobDiscard(context.Background(), id); err != nil {
				t.Fatal(err)
			}
		}},
		// The bulk actions (JobBulk, POST /v1/jobs/bulk, the dashboard)
		// end each job through the same engine path.
		{name: "bulk discarded", ended: drovertype.JobStateDiscarded, end: func(t *testing.T, b *bundle, id int64) {
			p, err := b.client.JobBulk(context.Background(), drover.BulkDiscard, drover.JobListParams{States: []drovertype.JobState{drovertype.JobStateAvailable}}, nil)
			if err != nil || p.Changed != 1 {
				t.Fatalf("bulk discard: %+v, %v; want job %d discarded", p, err, id)
			}
		}},
		{name: "bulk cancelled", ended: drovertype.JobStateCancelled, end: func(t *testing.T, b *bundle, id int64) {
			p, err := b.client.JobBulk(context.Background(), drover.BulkCancel, drover.JobListParams{States: []drovertype.JobState{drovertype.JobStateAvailable}}, nil)
			if err != nil || p.Changed != 1 {
				t.Fatalf("bulk cancel: %+v, %v; want job %d cancelled", p, err, id)
			}
		}},
		{name: "rescued", ended: drovertype.JobStateDiscarded, end: func(t *testing.T, b *bundle, id int64) {
			ctx := context.Background()
			jobs, err := b.remote.Claim(ctx, drover.ClaimParams{Queue: drover.DefaultQueue, Max: 10, Owner: "remote-1", Lease: time.Minute})
			if err != nil || len(jobs) != 1 || jobs[0].ID != id {
				t.Fatalf("claimed %v, %v; want job %d alone", jobs, err, id)
			}
			if n, err := engine.Rescue(ctx, b.d.Executor(), droverdriver.RescueParams{Now: time.Now().Add(time.Hour), Limit: 10}); err != nil || n != 1 {
				t.Fatalf("rescue: %d jobs, %v; want 1", n, err)
			}
		}},
	}
	forEachStore(t, func(t *testing.T, s store) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				b := remoteSetup(t, s)
				first := b.insert(t, noopArgs{N: 1}, &drover.InsertOpts{Key: "k", KeyLimit: 1, MaxAttempts: 1})
				behind := b.insert(t, noopArgs{N: 2}, &drover.InsertOpts{Key: "k", KeyLimit: 1})
				tt.end(t, b, first)
				assertStates(t, b.client, map[int64]drovertype.JobState{first: tt.ended, behind: drovertype.JobStateAvailable})
			})
		}
	})
}
