package drover_test

import (
	"context"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
)

// TestRemoteReleaseAndSnooze checks that a remote worker can give back a
// claimed job (Release) or put it off (AttemptSnoozed) without using an
// attempt, that both are fenced by the lease token, and that a released
// job is claimed again with the same attempt number.
func TestRemoteReleaseAndSnooze(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := remoteSetup(t, s)
		ctx := context.Background()
		released := b.insert(t, drover.RawArgs{KindName: "remote", JSON: []byte(`{"n":1}`)}, &drover.InsertOpts{MaxAttempts: 1})
		snoozed := b.insert(t, drover.RawArgs{KindName: "remote", JSON: []byte(`{"n":2}`)}, &drover.InsertOpts{MaxAttempts: 1})
		jobs, err := b.remote.Claim(ctx, drover.ClaimParams{Queue: "default", Max: 10, Owner: "py-1", Lease: time.Minute})
		if err != nil || len(jobs) != 2 {
			t.Fatalf("claim = %v, %v", jobs, err)
		}
		token := map[int64]drovertype.LeaseToken{}
		for _, j := range jobs {
			token[j.ID] = j.LeaseToken
		}
		forged, err := drovertype.ParseLeaseToken("0123456789abcdef0123456789abcdef")
		if err != nil {
			t.Fatal(err)
		}

		// Forged tokens change nothing.
		rep, err := b.remote.Release(ctx, []drover.AttemptRef{{ID: released, Attempt: 1, LeaseToken: forged}})
		if err != nil || len(rep.Released) != 0 || len(rep.Rejected) != 1 || rep.Rejected[0] != released {
			t.Fatalf("release with a forged token = %+v, %v", rep, err)
		}
		retryAt := time.Now().Add(time.Hour).Truncate(time.Millisecond)
		frep, err := b.remote.Finish(ctx, []drover.AttemptResult{{ID: snoozed, Attempt: 1, LeaseToken: forged,
			Outcome: drover.AttemptSnoozed, RetryAt: retryAt}})
		if err != nil || len(frep.Rejected) != 1 {
			t.Fatalf("snooze with a forged token = %+v, %v", frep, err)
		}
		for _, id := range []int64{released, snoozed} {
			if row, _ := b.client.JobGet(ctx, id); row.State != drovertype.JobStateRunning || row.LeaseOwner != "py-1" {
				t.Fatalf("a forged token changed job %d: %+v", id, row)
			}
		}

		// The real tokens work, and use up no attempt (max_attempts is 1).
		rep, err = b.remote.Release(ctx, []drover.AttemptRef{{ID: released, Attempt: 1, LeaseToken: token[released]}})
		if err != nil || len(rep.Released) != 1 || rep.Released[0] != released || len(rep.Rejected) != 0 {
			t.Fatalf("release = %+v, %v", rep, err)
		}
		frep, err = b.remote.Finish(ctx, []drover.AttemptResult{{ID: snoozed, Attempt: 1, LeaseToken: token[snoozed],
			Outcome: drover.AttemptSnoozed, RetryAt: retryAt}})
		if err != nil || len(frep.Accepted) != 1 || len(frep.Rejected) != 0 {
			t.Fatalf("snooze = %+v, %v", frep, err)
		}
		row, err := b.client.JobGet(ctx, released)
		if err != nil {
			t.Fatal(err)
		}
		if row.State != drovertype.JobStateAvailable || row.Attempt != 0 || row.ErrorCount != 0 || row.LeaseOwner != "" {
			t.Fatalf("released job = %+v, want available with its attempt undone and no error", row)
		}
		row, err = b.client.JobGet(ctx, snoozed)
		if err != nil {
			t.Fatal(err)
		}
		if row.State != drovertype.JobStateScheduled && row.State != drovertype.JobStateAvailable || row.Attempt != 0 ||
			row.ErrorCount != 0 || !row.RunAt.Equal(retryAt) {
			t.Fatalf("snoozed job = %+v, want waiting until %v with its attempt undone and no error", row, retryAt)
		}

		// The released job is claimed again, with the same attempt number;
		// the snoozed one is not due yet.
		again, err := b.remote.Claim(ctx, drover.ClaimParams{Queue: "default", Max: 10, Owner: "py-2", Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if len(again) != 1 || again[0].ID != released || again[0].Attempt != 1 {
			t.Fatalf("claim after release = %+v, want job %d at attempt 1 only", again, released)
		}
		// The old token is spent.
		rep, err = b.remote.Release(ctx, []drover.AttemptRef{{ID: released, Attempt: 1, LeaseToken: token[released]}})
		if err != nil || len(rep.Rejected) != 1 {
			t.Fatalf("release with the previous claim's token = %+v, %v", rep, err)
		}
		if _, err := b.remote.Finish(ctx, []drover.AttemptResult{{ID: snoozed, Attempt: 1, LeaseToken: token[snoozed],
			Outcome: drover.AttemptSnoozed}}); err == nil {
			t.Fatal("a snooze without retry_at was accepted")
		}
	})
}
