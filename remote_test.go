package drover_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// remoteSetup returns a store with a client that works no queue of its
// own, as the HTTP server has, plus a second client that runs maintenance
// (the rescuer) when started.
func remoteSetup(t *testing.T, s store) *bundle {
	t.Helper()
	return setup(t, s, 1, func(c *drover.Config) {
		c.Queues = nil
		c.Workers = nil
	})
}

func TestRemoteClaimFinish(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := remoteSetup(t, s)
		ctx := context.Background()
		done := b.insert(t, drover.RawArgs{KindName: "remote", JSON: []byte(`{"n":1}`)}, nil)
		retried := b.insert(t, drover.RawArgs{KindName: "remote", JSON: []byte(`{"n":2}`)}, &drover.InsertOpts{MaxAttempts: 2})
		discarded := b.insert(t, drover.RawArgs{KindName: "remote", JSON: []byte(`{"n":3}`)}, &drover.InsertOpts{MaxAttempts: 1})
		cancelled := b.insert(t, drover.RawArgs{KindName: "remote", JSON: []byte(`{"n":4}`)}, nil)
		other := b.insert(t, drover.RawArgs{KindName: "remote", JSON: []byte(`{}`)}, &drover.InsertOpts{Queue: "other"})

		jobs, err := b.remote.Claim(ctx, drover.ClaimParams{Queue: "default", Max: 10, Owner: "py-1", Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != 4 {
			t.Fatalf("claimed %d jobs, want the 4 of queue default", len(jobs))
		}
		byID := map[int64]*drovertype.JobRow{}
		token := func(id int64) drovertype.LeaseToken { return byID[id].LeaseToken }
		for _, j := range jobs {
			byID[j.ID] = j
			if j.Attempt != 1 || j.LeaseOwner != "py-1" || j.LeaseExpiresAt == nil || j.State != drovertype.JobStateRunning {
				t.Fatalf("claimed job = %+v", j)
			}
		}
		if byID[other] != nil {
			t.Fatal("claimed a job of another queue")
		}
		retryAt := time.Now().Add(time.Hour).Truncate(time.Millisecond)
		rep, err := b.remote.Finish(ctx, []drover.AttemptResult{
			{ID: done, Attempt: 1, LeaseToken: token(done), Outcome: drover.AttemptCompleted},
			{ID: retried, Attempt: 1, LeaseToken: token(retried), Outcome: drover.AttemptFailed, Error: "upstream 503", Trace: "at line 7", RetryAt: retryAt},
			{ID: discarded, Attempt: 1, LeaseToken: token(discarded), Outcome: drover.AttemptFailed, Error: "bad input"},
			{ID: cancelled, Attempt: 1, LeaseToken: token(cancelled), Outcome: drover.AttemptCancelled},
			{ID: other, Attempt: 1, Outcome: drover.AttemptCompleted}, // never claimed
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Accepted) != 4 || len(rep.Rejected) != 1 || rep.Rejected[0] != other {
			t.Fatalf("report = %+v, want 4 accepted and job %d rejected", rep, other)
		}
		for id, want := range map[int64]drovertype.JobState{done: drovertype.JobStateCompleted, retried: drovertype.JobStateRetryable,
			discarded: drovertype.JobStateDiscarded, cancelled: drovertype.JobStateCancelled, other: drovertype.JobStateAvailable} {
			row, err := b.client.JobGet(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if row.State != want {
				t.Errorf("job %d is %s, want %s", id, row.State, want)
			}
		}
		row, _ := b.client.JobGet(ctx, retried)
		if len(row.Errors) != 1 || row.Errors[0].Error != "upstream 503" || row.Errors[0].Trace != "at line 7" || !row.RunAt.Equal(retryAt) {
			t.Fatalf("retried job = %+v, errors %+v", row, row.Errors)
		}
		row, _ = b.client.JobGet(ctx, cancelled)
		if len(row.Errors) != 1 || row.Errors[0].Error != "cancelled by worker" {
			t.Fatalf("cancelled job errors = %+v", row.Errors)
		}

		// A second report of the same attempts changes nothing.
		rep, err = b.remote.Finish(ctx, []drover.AttemptResult{{ID: done, Attempt: 1, LeaseToken: token(done), Outcome: drover.AttemptFailed}})
		if err != nil || len(rep.Accepted) != 0 {
			t.Fatalf("repeated result: %+v, %v", rep, err)
		}
		if row, _ := b.client.JobGet(ctx, done); row.State != drovertype.JobStateCompleted {
			t.Fatalf("repeated result moved job to %s", row.State)
		}
	})
}

// TestRemoteLeaseRescueAndFencing shows that a remote worker that dies loses
// no job: its lease expires, the rescuer makes the job available again, the
// next claim gets attempt 2, and the dead worker's late result is rejected.
func TestRemoteLeaseRescueAndFencing(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := remoteSetup(t, s)
		ctx := context.Background()
		id := b.insert(t, drover.RawArgs{KindName: "remote", JSON: []byte(`{}`)}, nil)
		jobs, err := b.remote.Claim(ctx, drover.ClaimParams{Queue: "default", Max: 1, Owner: "dies", Lease: time.Second})
		if err != nil || len(jobs) != 1 {
			t.Fatalf("claim = %v, %v", jobs, err)
		}
		b.start(t) // runs the rescuer
		waitState(t, b.client, id, drovertype.JobStateAvailable)

		var again []*drovertype.JobRow
		waitfor.Cond(t, "a second claim", func() bool {
			again, err = b.remote.Claim(ctx, drover.ClaimParams{Queue: "default", Max: 1, Owner: "lives", Lease: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			return len(again) == 1
		})
		if again[0].ID != id || again[0].Attempt != 2 {
			t.Fatalf("second claim = %+v", again[0])
		}
		lease, err := b.remote.ExtendLeases(ctx, []drover.AttemptRef{{ID: id, Attempt: 1, LeaseToken: jobs[0].LeaseToken}}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(lease.Lost) != 1 || lease.Lost[0] != id || len(lease.CancelRequested) != 0 {
			t.Fatalf("lease report = %+v, want attempt 1 lost", lease)
		}
		live := again[0].LeaseToken
		lease, err = b.remote.ExtendLeases(ctx, []drover.AttemptRef{{ID: id, Attempt: 2, LeaseToken: live}}, time.Minute)
		if err != nil || len(lease.Lost) != 0 {
			t.Fatalf("lease report for the live attempt = %+v, %v", lease, err)
		}
		rep, err := b.remote.Finish(ctx, []drover.AttemptResult{{ID: id, Attempt: 1, LeaseToken: jobs[0].LeaseToken, Outcome: drover.AttemptCompleted}})
		if err != nil || len(rep.Rejected) != 1 {
			t.Fatalf("late result = %+v, %v", rep, err)
		}
		if row, _ := b.client.JobGet(ctx, id); row.State != drovertype.JobStateRunning || row.LeaseOwner != "lives" {
			t.Fatalf("late result changed the job: %+v", row)
		}

		// A cancel request reaches the worker at its next lease extension.
		if _, err := b.client.JobCancel(ctx, id); err != nil {
			t.Fatal(err)
		}
		lease, err = b.remote.ExtendLeases(ctx, []drover.AttemptRef{{ID: id, Attempt: 2, LeaseToken: live}}, time.Minute)
		if err != nil || len(lease.CancelRequested) != 1 {
			t.Fatalf("lease report after cancel = %+v, %v", lease, err)
		}
		// A failure of a job asked to cancel ends it cancelled, as for Go
		// workers.
		if _, err := b.remote.Finish(ctx, []drover.AttemptResult{{ID: id, Attempt: 2, LeaseToken: live, Outcome: drover.AttemptFailed, Error: "stopped"}}); err != nil {
			t.Fatal(err)
		}
		waitState(t, b.client, id, drovertype.JobStateCancelled)
	})
}

func TestRemoteRejectsBadInput(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := remoteSetup(t, s)
		ctx := context.Background()
		id := b.insert(t, drover.RawArgs{KindName: "remote", JSON: []byte(`{}`)}, nil)
		claims := []struct {
			p    drover.ClaimParams
			want string
		}{
			{drover.ClaimParams{Queue: "", Max: 1, Owner: "w", Lease: time.Minute}, "queue"},
			{drover.ClaimParams{Queue: "default", Max: 0, Owner: "w", Lease: time.Minute}, "max 0"},
			{drover.ClaimParams{Queue: "default", Max: 1001, Owner: "w", Lease: time.Minute}, "max 1001"},
			{drover.ClaimParams{Queue: "default", Max: 1, Owner: "", Lease: time.Minute}, "owner"},
			{drover.ClaimParams{Queue: "default", Max: 1, Owner: "w", Lease: time.Millisecond}, "lease"},
		}
		for _, c := range claims {
			_, err := b.remote.Claim(ctx, c.p)
			if !errors.Is(err, drover.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Claim(%+v) = %v, want an input error naming %q", c.p, err, c.want)
			}
		}
		results := []struct {
			r    []drover.AttemptResult
			want string
		}{
			{nil, "results: empty"},
			{[]drover.AttemptResult{{ID: id, Attempt: 0, Outcome: drover.AttemptCompleted}}, "attempt 0"},
			{[]drover.AttemptResult{{ID: id, Attempt: 1, Outcome: "done"}}, `outcome "done"`},
			{[]drover.AttemptResult{{ID: id, Attempt: 1, Outcome: drover.AttemptCompleted}, {ID: id, Attempt: 1, Outcome: drover.AttemptCompleted}}, "appears twice"},
		}
		for _, c := range results {
			_, err := b.remote.Finish(ctx, c.r)
			if !errors.Is(err, drover.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Finish(%+v) = %v, want an input error naming %q", c.r, err, c.want)
			}
		}
		if _, err := b.remote.ExtendLeases(ctx, []drover.AttemptRef{{ID: id, Attempt: 1}}, 0); !errors.Is(err, drover.ErrInvalid) {
			t.Errorf("ExtendLeases with lease 0 = %v", err)
		}
		if _, err := b.remote.ExtendLeases(ctx, []drover.AttemptRef{{ID: id, Attempt: 1}, {ID: id, Attempt: 2}}, time.Minute); !errors.Is(err, drover.ErrInvalid) || !strings.Contains(err.Error(), "twice") {
			t.Errorf("ExtendLeases naming a job twice = %v", err)
		}
		if row, _ := b.client.JobGet(ctx, id); row.State != drovertype.JobStateAvailable || row.Attempt != 0 {
			t.Fatalf("bad input changed the job: %+v", row)
		}
	})
}

// TestRemoteFinishStoresResult: a remote worker's completed result is
// stored with the job as a Go worker's SetResult is, and a result that is
// too large, not JSON or on another outcome is refused without touching
// the job.
func TestRemoteFinishStoresResult(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := remoteSetup(t, s)
		ctx := context.Background()
		id := b.insert(t, drover.RawArgs{KindName: "remote", JSON: []byte(`{}`)}, nil)
		claimed, err := b.remote.Claim(ctx, drover.ClaimParams{Queue: "default", Max: 1, Owner: "w", Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		big := []byte(`"` + strings.Repeat("x", drover.MaxResultBytes) + `"`)
		for name, r := range map[string]drover.AttemptResult{
			"too large": {ID: id, Attempt: 1, Outcome: drover.AttemptCompleted, Result: big},
			"not JSON":  {ID: id, Attempt: 1, Outcome: drover.AttemptCompleted, Result: []byte(`{`)},
			"on failed": {ID: id, Attempt: 1, MaxAttempts: 3, Outcome: drover.AttemptFailed, Result: []byte(`1`)},
		} {
			if _, err := b.remote.Finish(ctx, []drover.AttemptResult{r}); !errors.Is(err, drover.ErrInvalid) || !strings.Contains(err.Error(), "result") {
				t.Errorf("%s: err = %v, want an invalid result error", name, err)
			}
		}
		if row, _ := b.client.JobGet(ctx, id); row.State != drovertype.JobStateRunning {
			t.Fatalf("a refused result changed the job: %+v", row)
		}
		rep, err := b.remote.Finish(ctx, []drover.AttemptResult{{ID: id, Attempt: 1, LeaseToken: claimed[0].LeaseToken,
			Outcome: drover.AttemptCompleted, Result: []byte(`42`)}})
		if err != nil || len(rep.Accepted) != 1 {
			t.Fatalf("finish = %+v, %v", rep, err)
		}
		res, err := b.client.JobResult(ctx, id)
		if err != nil || res.State != drovertype.JobStateCompleted || string(res.Result) != `42` {
			t.Fatalf("JobResult = %+v, %v", res, err)
		}
	})
}
