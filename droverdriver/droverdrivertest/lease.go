package droverdrivertest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

func testLease(t *testing.T, setup opener) {
	t.Run("JobHeartbeat", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		insert(t, d.Executor(), job("q"), job("q"), job("q"), job("q"), job("q"))
		// The last job has a claim of its own: a driver may check the
		// tokens of a call as a set (PostgreSQL does), and the forged
		// token must stand in for the only token that claim issued.
		rows := append(claimAs(t, d.Executor(), "w1", "q", 4, time.Second), claimAs(t, d.Executor(), "w1", "q", 1, time.Second)...)
		if _, err := cancel(ctx, d.Executor(), rows[1].ID, time.Now()); err != nil {
			t.Fatal(err)
		}
		finish(t, d.Executor(), result(rows[2], droverdriver.OutcomeCompleted))
		hb := droverdriver.HeartbeatParams{Lease: time.Hour}
		for i, r := range rows {
			hb.IDs, hb.Attempts, hb.Tokens = append(hb.IDs, r.ID), append(hb.Attempts, r.Attempt), append(hb.Tokens, r.LeaseToken)
			switch i {
			case 3:
				hb.Attempts[i]++ // another attempt
			case 4:
				hb.Tokens[i] = drovertype.NewLeaseToken() // forged
			}
		}
		res, err := d.Executor().JobHeartbeat(ctx, hb)
		if err != nil {
			t.Fatal(err)
		}
		lost, cancel := slices.Sorted(slices.Values(res.Lost)), slices.Sorted(slices.Values(res.CancelRequested))
		if want := []int64{rows[2].ID, rows[3].ID, rows[4].ID}; !slices.Equal(lost, want) {
			t.Errorf("lost %v, want %v (finished, other attempt, forged token)", lost, want)
		}
		if want := []int64{rows[1].ID}; !slices.Equal(cancel, want) {
			t.Errorf("cancel requested %v, want %v", cancel, want)
		}
		for _, r := range rows[:2] {
			if j := get(t, d.Executor(), r.ID); time.Until(*j.LeaseExpiresAt) < 50*time.Minute {
				t.Errorf("lease of job %d not extended: expires %v", r.ID, j.LeaseExpiresAt)
			}
		}
		for _, r := range rows[3:] {
			if j := get(t, d.Executor(), r.ID); time.Until(*j.LeaseExpiresAt) > time.Minute {
				t.Errorf("lease of job %d extended by a heartbeat it fenced off: expires %v", r.ID, j.LeaseExpiresAt)
			}
		}
	})

	t.Run("JobHeartbeat/none", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		res, err := d.Executor().JobHeartbeat(context.Background(), droverdriver.HeartbeatParams{Lease: time.Minute})
		if err != nil || len(res.Lost) != 0 || len(res.CancelRequested) != 0 {
			t.Fatalf("empty heartbeat: %+v, %v", res, err)
		}
	})

	t.Run("JobRescue", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		got := insert(t, d.Executor(), job("q"), with(job("q"), func(p *droverdriver.InsertParams) { p.MaxAttempts = 1 }), job("q"), job("q"))
		expiring := claimAs(t, d.Executor(), "w1", "q", 3, time.Minute)
		claimAs(t, d.Executor(), "w2", "q", 1, 3*time.Hour) // got[3]: its lease outlives the rescue's Now
		if len(expiring) != 3 {
			t.Fatalf("claimed %d", len(expiring))
		}
		if _, err := cancel(ctx, d.Executor(), got[2], time.Now()); err != nil {
			t.Fatal(err)
		}
		// Now is the only clock: leases of a minute are over an hour later.
		now := time.Now().Add(time.Hour)
		sweep := func(limit int) int {
			t.Helper()
			n, err := rescue(ctx, d.Executor(), droverdriver.RescueParams{Now: now, Limit: limit})
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		if n := sweep(2); n != 2 {
			t.Fatalf("rescued %d, want 2 (the limit)", n)
		}
		if n := sweep(100); n != 1 {
			t.Fatalf("rescued %d, want the 1 left", n)
		}
		if n := sweep(100); n != 0 {
			t.Fatalf("rescued %d again", n)
		}
		for _, tc := range []struct {
			id    int64
			state drovertype.JobState
		}{
			{got[0], drovertype.JobStateAvailable}, // back, with the lease's error
			{got[1], drovertype.JobStateDiscarded}, // out of attempts
			{got[2], drovertype.JobStateCancelled}, // a cancel was requested
			{got[3], drovertype.JobStateRunning},   // lease not over
		} {
			j := get(t, d.Executor(), tc.id)
			if j.State != tc.state || j.Attempt != 1 {
				t.Errorf("job %d: %s at attempt %d, want %s at 1", tc.id, j.State, j.Attempt, tc.state)
			}
			if tc.state == drovertype.JobStateRunning {
				continue
			}
			errs := attemptErrors(t, j)
			if len(errs) != 1 || j.ErrorCount != 1 || !strings.HasPrefix(errs[0].Error, "lease expired") || errs[0].Attempt != 1 {
				t.Errorf("job %d errors %v (count %d), want the expired lease of attempt 1", tc.id, j.Errors, j.ErrorCount)
			}
			if j.LeaseOwner != "" || j.LeaseExpiresAt != nil {
				t.Errorf("job %d keeps its lease %q until %v", tc.id, j.LeaseOwner, j.LeaseExpiresAt)
			}
		}
		// The rescued attempt's token is void; the job is claimable again.
		if applied := finish(t, d.Executor(), result(expiring[0], droverdriver.OutcomeCompleted)); len(applied) != 0 {
			t.Fatalf("the rescued attempt's result applied")
		}
		if rows := claim(t, d.Executor(), "q", 10); !slices.Equal(ids(rows), got[:1]) {
			t.Errorf("claimable after the rescue: %v, want %v", ids(rows), got[:1])
		}
	})

	t.Run("JobRescue/keyed", func(t *testing.T) {
		t.Parallel()
		// A rescued keyed job keeps its key's slot when it will run again,
		// and frees it when it ends.
		ctx := context.Background()
		d := setup(t)
		got := insert(t, d.Executor(), keyed("q", "a"), keyed("q", "a"),
			with(keyed("q", "b"), func(p *droverdriver.InsertParams) { p.MaxAttempts = 1 }), keyed("q", "b"))
		claim(t, d.Executor(), "q", 10)
		if _, err := rescue(ctx, d.Executor(), droverdriver.RescueParams{Now: time.Now().Add(time.Hour), Limit: 10}); err != nil {
			t.Fatal(err)
		}
		wantState(t, d.Executor(), map[int64]drovertype.JobState{got[0]: drovertype.JobStateAvailable, got[1]: drovertype.JobStateBlocked, got[2]: drovertype.JobStateDiscarded})
		// The slot got[2] freed is given by the rescue or by the sweep.
		if _, err := promote(ctx, d.Executor(), 10); err != nil {
			t.Fatal(err)
		}
		wantState(t, d.Executor(), map[int64]drovertype.JobState{got[3]: drovertype.JobStateAvailable})
	})

	t.Run("LeaseOwners", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		insert(t, d.Executor(), job("q"), job("q"), job("q"), job("r"))
		claimAs(t, d.Executor(), "a", "q", 2, time.Minute)
		b := claimAs(t, d.Executor(), "b", "q", 1, time.Minute)
		claimAs(t, d.Executor(), "b", "r", 1, time.Hour)
		owners, err := d.Executor().LeaseOwners(ctx)
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(owners, func(x, y drovertype.LeaseOwner) int { return strings.Compare(x.Owner, y.Owner) })
		if len(owners) != 2 || owners[0].Owner != "a" || owners[0].Running != 2 || owners[1].Owner != "b" || owners[1].Running != 2 {
			t.Fatalf("owners %+v, want a with 2 and b with 2", owners)
		}
		if until := time.Until(owners[1].LeaseExpiresAt); until < 50*time.Minute {
			t.Errorf("b's leases run until %v, want its latest (an hour)", owners[1].LeaseExpiresAt)
		}
		finish(t, d.Executor(), result(b[0], droverdriver.OutcomeCompleted))
		if owners, err := d.Executor().LeaseOwners(ctx); err != nil || len(owners) != 2 {
			t.Fatalf("owners %+v, %v", owners, err)
		}
	})
}
