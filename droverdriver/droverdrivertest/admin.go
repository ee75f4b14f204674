package droverdrivertest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/engine"
)

func testAdmin(t *testing.T, setup opener) {
	t.Run("BulkTask", func(t *testing.T) {
		// A task is stored as started, its progress written over it, and
		// only the last keep tasks stay.
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		started := time.Now().Add(-time.Hour)
		row := &droverdriver.BulkTaskRow{Action: "retry", Queue: "q", Kind: "k", State: "discarded", Status: "running", StartedAt: started}
		id, err := d.Executor().BulkTaskInsert(ctx, row, 3)
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.Executor().BulkTaskGet(ctx, id)
		if err != nil || got == nil || got.Action != "retry" || got.Queue != "q" || got.Kind != "k" || got.State != "discarded" ||
			got.Status != "running" || !sameTime(got.StartedAt, started) || !sameTime(got.UpdatedAt, started) {
			t.Fatalf("stored task %+v, %v; want it as inserted, updated when started", got, err)
		}
		now := time.Now()
		if err := d.Executor().BulkTaskUpdate(ctx, droverdriver.BulkTaskUpdateParams{ID: id, Status: "interrupted", Matched: 7, Changed: 3,
			Error: "server stopped", Now: now}); err != nil {
			t.Fatal(err)
		}
		if got, err = d.Executor().BulkTaskGet(ctx, id); err != nil || got.Status != "interrupted" || got.Matched != 7 || got.Changed != 3 ||
			got.Error != "server stopped" || !sameTime(got.UpdatedAt, now) || !sameTime(got.StartedAt, started) {
			t.Fatalf("updated task %+v, %v", got, err)
		}
		ids := []int64{id}
		for range 3 {
			id, err := d.Executor().BulkTaskInsert(ctx, &droverdriver.BulkTaskRow{Action: "delete", Selected: 2, Status: "running", StartedAt: now}, 3)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		if !slices.IsSorted(ids) {
			t.Fatalf("task IDs %v are not increasing", ids)
		}
		if got, err := d.Executor().BulkTaskGet(ctx, ids[0]); err != nil || got != nil {
			t.Fatalf("the oldest of 4 tasks, keeping 3: %+v, %v; want it deleted", got, err)
		}
		for _, id := range ids[1:] {
			if got, err := d.Executor().BulkTaskGet(ctx, id); err != nil || got == nil || got.Selected != 2 {
				t.Fatalf("task %d: %+v, %v; want it kept", id, got, err)
			}
		}
	})

	t.Run("JobCancel", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		got := insert(t, d.Executor(), job("q"), with(job("q"), func(p *droverdriver.InsertParams) { p.RunAt = time.Now().Add(time.Hour) }), job("q"))
		claimOne(t, d.Executor(), "q", got[0])
		now := time.Now().Add(-time.Minute) // the call's clock, not the store's
		tests := []struct {
			name   string
			id     int64
			state  drovertype.JobState
			cancel bool
		}{
			{"a scheduled job ends at once", got[1], drovertype.JobStateCancelled, false},
			{"an available job ends at once", got[2], drovertype.JobStateCancelled, false},
			{"a running job is flagged", got[0], drovertype.JobStateRunning, true},
		}
		for _, tc := range tests {
			j, err := cancel(ctx, d.Executor(), tc.id, now)
			if err != nil || j.ID != tc.id || j.State != tc.state || j.CancelRequested != tc.cancel {
				t.Fatalf("%s: %+v, %v; want %s, cancel requested %v", tc.name, j, err, tc.state, tc.cancel)
			}
			if tc.state.Finished() && (j.FinalizedAt == nil || !sameTime(*j.FinalizedAt, now)) {
				t.Errorf("%s: finalized at %v, want the call's now %v", tc.name, j.FinalizedAt, now)
			}
			if stored := get(t, d.Executor(), tc.id); stored.State != j.State || stored.CancelRequested != j.CancelRequested {
				t.Errorf("%s: returned %s, stored %s", tc.name, j.State, stored.State)
			}
		}
		// A finished job stays as it ended.
		j, err := cancel(ctx, d.Executor(), got[1], now.Add(time.Minute))
		if err != nil || j.State != drovertype.JobStateCancelled || !sameTime(*j.FinalizedAt, now) {
			t.Fatalf("cancel of a cancelled job: %+v, %v", j, err)
		}
		if _, err := cancel(ctx, d.Executor(), got[2]+1000, now); !errors.Is(err, droverdriver.ErrNotFound) {
			t.Fatalf("cancel of a missing job: %v, want ErrNotFound", err)
		}
	})

	t.Run("JobCancel/blocked", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		got := insert(t, d.Executor(), keyed("q", "a"), keyed("q", "a"))
		j, err := cancel(context.Background(), d.Executor(), got[1], time.Now())
		if err != nil || j.State != drovertype.JobStateCancelled {
			t.Fatalf("cancel of a blocked job: %+v, %v", j, err)
		}
		wantState(t, d.Executor(), map[int64]drovertype.JobState{got[0]: drovertype.JobStateAvailable})
	})

	t.Run("JobDiscard", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		got := insert(t, d.Executor(), job("q"), with(job("q"), func(p *droverdriver.InsertParams) { p.RunAt = time.Now().Add(time.Hour) }), job("q"), job("q"))
		claimOne(t, d.Executor(), "q", got[0])
		done := claimOne(t, d.Executor(), "q", got[2])
		finish(t, d.Executor(), result(done, droverdriver.OutcomeCompleted))
		now := time.Now().Add(-time.Minute)
		for _, tc := range []struct {
			name string
			id   int64
			want drovertype.JobState
		}{
			{"a scheduled job", got[1], drovertype.JobStateDiscarded},
			{"an available job", got[3], drovertype.JobStateDiscarded},
			{"a running job is left alone", got[0], drovertype.JobStateRunning},
			{"a finished job is left alone", got[2], drovertype.JobStateCompleted},
		} {
			j, err := discard(ctx, d.Executor(), tc.id, now)
			if err != nil || j.ID != tc.id || j.State != tc.want {
				t.Fatalf("%s: %+v, %v; want %s", tc.name, j, err, tc.want)
			}
			if tc.want == drovertype.JobStateDiscarded && (j.FinalizedAt == nil || !sameTime(*j.FinalizedAt, now)) {
				t.Errorf("%s: finalized at %v, want %v", tc.name, j.FinalizedAt, now)
			}
			wantState(t, d.Executor(), map[int64]drovertype.JobState{tc.id: tc.want})
		}
		if _, err := discard(ctx, d.Executor(), got[3]+1000, now); !errors.Is(err, droverdriver.ErrNotFound) {
			t.Fatalf("discard of a missing job: %v, want ErrNotFound", err)
		}
	})

	t.Run("JobRetry", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		later := time.Now().Add(time.Hour)
		got := insert(t, d.Executor(), job("q"), job("q"),
			with(job("q"), func(p *droverdriver.InsertParams) { p.MaxAttempts = 1 }),
			with(job("q"), func(p *droverdriver.InsertParams) { p.RunAt = later }),
			job("q"))
		rows := claim(t, d.Executor(), "q", 4)
		finish(t, d.Executor(),
			result(rows[0], droverdriver.OutcomeCompleted),
			failed(rows[1], droverdriver.OutcomeRetry, "x", later),
			failed(rows[2], droverdriver.OutcomeRetry, "x", later), // out of attempts: discarded
		)
		if _, err := cancel(ctx, d.Executor(), got[3], time.Now()); err != nil {
			t.Fatal(err)
		}
		// got[4] still runs.
		now := time.Now()
		for _, id := range got[:4] {
			before := get(t, d.Executor(), id)
			j, err := retry(ctx, d.Executor(), id, now)
			if err != nil || j.State != drovertype.JobStateAvailable || j.FinalizedAt != nil || j.CancelRequested || !sameTime(j.RunAt, now) {
				t.Fatalf("retry of job %d (%s): %+v, %v; want available at now", id, before.State, j, err)
			}
			// The history stays, and there is an attempt to spare.
			if j.Attempt != before.Attempt || j.MaxAttempts != max(before.MaxAttempts, before.Attempt+1) ||
				!slices.Equal(j.Errors, before.Errors) || j.ErrorCount != before.ErrorCount || j.Queue != "q" {
				t.Errorf("retry of job %d: %+v, before %+v", id, j, before)
			}
		}
		j, err := retry(ctx, d.Executor(), got[4], now)
		if err != nil || j.State != drovertype.JobStateRunning {
			t.Fatalf("retry of a running job: %+v, %v; want it left running", j, err)
		}
		if rows := claim(t, d.Executor(), "q", 10); len(rows) != 4 {
			t.Fatalf("claimable after the retries: %v", ids(rows))
		}
		if _, err := retry(ctx, d.Executor(), got[4]+1000, now); !errors.Is(err, droverdriver.ErrNotFound) {
			t.Fatalf("retry of a missing job: %v, want ErrNotFound", err)
		}
		// IDs stay unique after jobs went through the finished jobs and back.
		if next := insert(t, d.Executor(), job("q"))[0]; next <= got[4] {
			t.Fatalf("new ID %d reuses an old one (last %d)", next, got[4])
		}
	})

	t.Run("JobRetry/keyed", func(t *testing.T) {
		t.Parallel()
		// A finished keyed job returns to its key, behind the job that
		// holds its slot now.
		ctx := context.Background()
		d := setup(t)
		got := insert(t, d.Executor(), keyed("q", "a"), keyed("q", "a"))
		finish(t, d.Executor(), result(claimOne(t, d.Executor(), "q", got[0]), droverdriver.OutcomeCompleted))
		claimOne(t, d.Executor(), "q", got[1])
		j, err := retry(ctx, d.Executor(), got[0], time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if j.State != drovertype.JobStateBlocked {
			t.Fatalf("retried keyed job is %s while its key is full, want blocked", j.State)
		}
	})

	t.Run("JobRetry/not retryable", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		for _, tc := range []struct {
			name string
			p    droverdriver.FlowInsertParams
		}{
			{"batch member", droverdriver.FlowInsertParams{Batch: true, Jobs: []droverdriver.FlowJob{{InsertParams: job("q")}}}},
			{"job with dependants", droverdriver.FlowInsertParams{Jobs: []droverdriver.FlowJob{{InsertParams: job("q")}, {InsertParams: job("r"), After: []int{0}}}}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				d := setup(t)
				res, err := engine.InsertFlow(ctx, d.Executor(), tc.p)
				if err != nil {
					t.Fatal(err)
				}
				id := res.IDs[0]
				finish(t, d.Executor(), result(claimOne(t, d.Executor(), "q", id), droverdriver.OutcomeCompleted))
				if _, err := retry(ctx, d.Executor(), id, time.Now()); !errors.Is(err, engine.ErrNotRetryable) {
					t.Fatalf("retry: %v, want ErrNotRetryable", err)
				}
				wantState(t, d.Executor(), map[int64]drovertype.JobState{id: drovertype.JobStateCompleted})
			})
		}
	})

	t.Run("JobRetry/unique", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		first := insert(t, d.Executor(), unique("q", "k"))[0]
		finish(t, d.Executor(), result(claimOne(t, d.Executor(), "q", first), droverdriver.OutcomeCompleted))
		// The key is free: the retry takes it again.
		if j, err := retry(ctx, d.Executor(), first, time.Now()); err != nil || j.State != drovertype.JobStateAvailable {
			t.Fatalf("retry: %+v, %v", j, err)
		}
		if dup := insert(t, d.Executor(), unique("q", "k"))[0]; dup != 0 {
			t.Fatalf("insert stored job %d under the key its retried holder took again", dup)
		}
		// Once another job holds it, the retry is refused and changes nothing.
		finish(t, d.Executor(), result(claimOne(t, d.Executor(), "q", first), droverdriver.OutcomeCompleted))
		second := insert(t, d.Executor(), unique("q", "k"))[0]
		if second == 0 {
			t.Fatal("key still held after its job completed")
		}
		_, err := retry(ctx, d.Executor(), first, time.Now())
		if !errors.Is(err, droverdriver.ErrUniqueConflict) {
			t.Fatalf("retry while job %d holds the key: %v, want ErrUniqueConflict", second, err)
		}
		if !strings.Contains(err.Error(), "unique") {
			t.Errorf("error %q does not say why", err)
		}
		wantState(t, d.Executor(), map[int64]drovertype.JobState{first: drovertype.JobStateCompleted, second: drovertype.JobStateAvailable})
	})

	t.Run("JobCancel/many", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		// Queue r holds the jobs that run or ran, claimed in order.
		run := insert(t, d.Executor(), job("r"), job("r"), job("r"))
		running := claimOne(t, d.Executor(), "r", run[0]).ID
		flaggedBefore := claimOne(t, d.Executor(), "r", run[1]).ID
		if _, _, err := d.Executor().JobCancel(ctx, droverdriver.CancelParams{IDs: []int64{flaggedBefore}, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
		completed := run[2]
		finish(t, d.Executor(), result(claimOne(t, d.Executor(), "r", completed), droverdriver.OutcomeCompleted))
		wait := insert(t, d.Executor(), job("q"), keyed("q", "a"), keyed("q", "a"))
		for _, tc := range []struct {
			name        string
			leave       bool
			wantEnded   []int64
			wantFlagged []int64
			want        map[int64]drovertype.JobState
		}{
			{"leave running", true, []int64{wait[0], wait[2]}, nil, map[int64]drovertype.JobState{running: drovertype.JobStateRunning,
				completed: drovertype.JobStateCompleted, wait[0]: drovertype.JobStateCancelled, wait[2]: drovertype.JobStateCancelled}},
			{"flag running", false, nil, []int64{running}, map[int64]drovertype.JobState{running: drovertype.JobStateRunning}},
			{"flagged already", false, nil, nil, map[int64]drovertype.JobState{running: drovertype.JobStateRunning}},
		} {
			// Every job but the keyed first one, which stays available
			// once its blocked successor is gone, and an unknown ID.
			ids := []int64{running, flaggedBefore, completed, wait[0], wait[2], wait[2] + 1000}
			ended, flagged, err := d.Executor().JobCancel(ctx, droverdriver.CancelParams{IDs: ids, Now: time.Now(), LeaveRunning: tc.leave})
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			var endedIDs []int64
			for _, r := range ended {
				endedIDs = append(endedIDs, r.ID)
			}
			// A store may number the plain and keyed jobs of one insert
			// in any order.
			slices.Sort(endedIDs)
			slices.Sort(tc.wantEnded)
			if !slices.Equal(endedIDs, tc.wantEnded) || !slices.Equal(flagged, tc.wantFlagged) {
				t.Fatalf("%s: ended %v, flagged %v; want %v and %v", tc.name, endedIDs, flagged, tc.wantEnded, tc.wantFlagged)
			}
			wantState(t, d.Executor(), tc.want)
		}
		if j := get(t, d.Executor(), running); !j.CancelRequested {
			t.Errorf("running job %d not flagged", running)
		}
		wantState(t, d.Executor(), map[int64]drovertype.JobState{wait[1]: drovertype.JobStateAvailable})
	})

	t.Run("JobDiscard/many", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		running := insert(t, d.Executor(), job("r"))[0]
		claimOne(t, d.Executor(), "r", running)
		// Jobs waiting in other ways than available are left alone: a
		// discard ends work that was ready to run, and must not drop a
		// blocked job without moving it.
		got := insert(t, d.Executor(), job("q"), with(job("q"), func(p *droverdriver.InsertParams) { p.RunAt = time.Now().Add(time.Hour) }),
			keyed("q", "a"), keyed("q", "a"))
		ended, err := d.Executor().JobDiscard(ctx, []int64{got[0], got[1], got[3], running, got[3] + 1000}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, r := range ended {
			ids = append(ids, r.ID)
		}
		slices.Sort(ids)
		if !slices.Equal(ids, []int64{got[0], got[1]}) {
			t.Fatalf("discarded %v, want %v", ids, got[:2])
		}
		wantState(t, d.Executor(), map[int64]drovertype.JobState{got[0]: drovertype.JobStateDiscarded, got[1]: drovertype.JobStateDiscarded,
			got[2]: drovertype.JobStateAvailable, got[3]: drovertype.JobStateBlocked, running: drovertype.JobStateRunning})
	})

	t.Run("JobRetry/many", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		run := insert(t, d.Executor(), job("r"), job("r"), keyed("k", "a"))
		running := claimOne(t, d.Executor(), "r", run[0]).ID
		finish(t, d.Executor(), result(claimOne(t, d.Executor(), "r", run[1]), droverdriver.OutcomeCompleted))
		finish(t, d.Executor(), result(claimOne(t, d.Executor(), "k", run[2]), droverdriver.OutcomeCompleted))
		scheduled := insert(t, d.Executor(), with(job("q"), func(p *droverdriver.InsertParams) { p.RunAt = time.Now().Add(time.Hour) }))[0]
		rows, err := d.Executor().JobRetry(ctx, []int64{running, run[1], run[2], scheduled, scheduled + 1000}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		byID := map[int64]droverdriver.RetriedRow{}
		for _, r := range rows {
			byID[r.ID] = r
		}
		if len(rows) != 3 || byID[run[1]].Queue != "r" || byID[scheduled].Queue != "q" || byID[run[2]].Key != "a" {
			t.Fatalf("retried %+v; want jobs %d and %d, and %d with its key", rows, run[1], scheduled, run[2])
		}
		wantState(t, d.Executor(), map[int64]drovertype.JobState{run[1]: drovertype.JobStateAvailable, scheduled: drovertype.JobStateAvailable,
			run[2]: drovertype.JobStateBlocked, running: drovertype.JobStateRunning})
	})

	t.Run("UniqueRetake/many", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		// Four finished unique jobs: two share a key, one's key another
		// job holds now, one's is free.
		var got []int64
		for _, key := range []string{"shared", "shared", "held", "free"} {
			id := insert(t, d.Executor(), unique("q", key))[0]
			finish(t, d.Executor(), result(claimOne(t, d.Executor(), "q", id), droverdriver.OutcomeCompleted))
			got = append(got, id)
		}
		holder := insert(t, d.Executor(), unique("h", "held"))[0]
		err := d.Executor().Tx(ctx, func(ctx context.Context, tx droverdriver.Executor) error {
			if _, err := tx.JobRetry(ctx, got, time.Now()); err != nil {
				return err
			}
			conflicts, err := tx.UniqueRetake(ctx, got)
			if err != nil {
				return err
			}
			slices.SortFunc(conflicts, func(a, b droverdriver.UniqueConflict) int { return int(a.ID - b.ID) })
			want := []droverdriver.UniqueConflict{{ID: got[1], Holder: got[0]}, {ID: got[2], Holder: holder}}
			if !slices.Equal(conflicts, want) {
				t.Errorf("conflicts %+v, want %+v", conflicts, want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// The first of the shared key and the free one hold their keys:
		// new jobs with them are skipped as duplicates.
		if dups := insert(t, d.Executor(), unique("q", "shared"), unique("q", "free")); dups[0] != 0 || dups[1] != 0 {
			t.Fatalf("inserts under keys retaken stored %v", dups)
		}
	})

	t.Run("JobDelete", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		// A unique job that keeps its key once completed, inserted on its
		// own so that the IDs follow the claim order.
		got := insert(t, d.Executor(), job("q"))
		got = append(got, insert(t, d.Executor(), with(unique("q", "u"), func(p *droverdriver.InsertParams) {
			p.UniqueFinal = droverdriver.FinalCompleted
		}))...)
		got = append(got, insert(t, d.Executor(), job("q"), job("q"))...)
		finish(t, d.Executor(), result(claimOne(t, d.Executor(), "q", got[0]), droverdriver.OutcomeCompleted))
		finish(t, d.Executor(), result(claimOne(t, d.Executor(), "q", got[1]), droverdriver.OutcomeCompleted))
		if again := insert(t, d.Executor(), unique("q", "u"))[0]; again != 0 {
			t.Fatal("the completed job does not keep its unique key")
		}
		claimOne(t, d.Executor(), "q", got[2])
		deleted, err := d.Executor().JobDelete(ctx, []int64{got[0], got[1], got[2], got[3], got[3] + 1000})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(deleted)
		if !slices.Equal(deleted, got[:2]) {
			t.Fatalf("deleted %v, want the finished %v", deleted, got[:2])
		}
		for _, id := range got[:2] {
			if _, err := d.Executor().JobGet(ctx, id); !errors.Is(err, droverdriver.ErrNotFound) {
				t.Errorf("job %d after delete: %v, want ErrNotFound", id, err)
			}
		}
		wantState(t, d.Executor(), map[int64]drovertype.JobState{got[2]: drovertype.JobStateRunning, got[3]: drovertype.JobStateAvailable})
		if again := insert(t, d.Executor(), unique("q", "u"))[0]; again == 0 {
			t.Error("a deleted job's unique key is still held")
		}
	})
}
