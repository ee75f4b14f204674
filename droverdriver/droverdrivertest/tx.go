package droverdrivertest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// testTx checks UnwrapExecutor: statements run in the caller's
// transaction, which stays the caller's to end. While it is open the
// tests call only its executor, since a store with one writer (SQLite)
// makes any other write wait for it.
func testTx[TTx any](t *testing.T, f Factory[TTx]) {
	setup := func(t *testing.T) (droverdriver.TxDriver[TTx], func() (TTx, droverdriver.Executor)) {
		t.Helper()
		d := migrate(t, f.Open(t))
		begin := func() (TTx, droverdriver.Executor) {
			t.Helper()
			tx, err := f.Begin(context.Background(), d)
			if err != nil {
				t.Fatalf("begin: %v", err)
			}
			t.Cleanup(func() { _ = f.Rollback(context.Background(), tx) })
			return tx, d.UnwrapExecutor(tx)
		}
		return d, begin
	}
	commit := func(t *testing.T, tx TTx) {
		t.Helper()
		if err := f.Commit(context.Background(), tx); err != nil {
			t.Fatalf("commit: %v", err)
		}
	}
	rollback := func(t *testing.T, tx TTx) {
		t.Helper()
		if err := f.Rollback(context.Background(), tx); err != nil {
			t.Fatalf("rollback: %v", err)
		}
	}

	t.Run("UnwrapExecutor/rollback", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d, begin := setup(t)
		kept := insert(t, d.Executor(), job("q"), job("q"))
		tx, e := begin()
		rolled := insert(t, e, job("q"))
		if j := get(t, e, rolled[0]); j.State != drovertype.JobStateAvailable {
			t.Fatalf("job in its own transaction: %s", j.State)
		}
		rows := claim(t, e, "q", 10)
		if !slices.Equal(ids(rows), append(slices.Clone(kept), rolled...)) {
			t.Fatalf("claimed %v in the transaction", ids(rows))
		}
		finish(t, e, result(rows[0], droverdriver.OutcomeCompleted))
		if _, err := d.Executor().JobGet(ctx, rolled[0]); !errors.Is(err, droverdriver.ErrNotFound) {
			t.Fatalf("outside the open transaction, its job: %v, want ErrNotFound", err)
		}
		rollback(t, tx)
		if _, err := d.Executor().JobGet(ctx, rolled[0]); !errors.Is(err, droverdriver.ErrNotFound) {
			t.Fatalf("rolled back job: %v, want ErrNotFound", err)
		}
		wantState(t, d.Executor(), map[int64]drovertype.JobState{kept[0]: drovertype.JobStateAvailable, kept[1]: drovertype.JobStateAvailable})
		// A rolled-back ID names no later job, as with a sequence.
		if next := insert(t, d.Executor(), job("q"))[0]; next <= rolled[0] {
			t.Fatalf("ID %d reuses the rolled-back %d", next, rolled[0])
		}
	})

	t.Run("UnwrapExecutor/commit", func(t *testing.T) {
		t.Parallel()
		d, begin := setup(t)
		heard := listen(t, d)
		tx, e := begin()
		committed := insert(t, e, job("intx"), job("intx"))
		commit(t, tx)
		heardOf(t, heard, "intx")
		if rows := claim(t, d.Executor(), "intx", 10); !slices.Equal(ids(rows), committed) {
			t.Fatalf("claimed %v after the commit, want %v", ids(rows), committed)
		}
	})

	t.Run("UnwrapExecutor/finish with a stale result", func(t *testing.T) {
		t.Parallel()
		// A result the fence turns away, among others, must not spoil the
		// caller's transaction: what was applied commits with it.
		d, begin := setup(t)
		got := insert(t, d.Executor(), job("q"), job("q"))
		rows := claim(t, d.Executor(), "q", 2)
		tx, e := begin()
		stale := result(rows[1], droverdriver.OutcomeCompleted)
		stale.Attempt++
		if applied := finish(t, e, result(rows[0], droverdriver.OutcomeCompleted), stale); !slices.Equal(applied, got[:1]) {
			t.Fatalf("applied %v in the transaction, want %v", applied, got[:1])
		}
		after := insert(t, e, job("q"))
		commit(t, tx)
		wantState(t, d.Executor(), map[int64]drovertype.JobState{
			got[0]: drovertype.JobStateCompleted, got[1]: drovertype.JobStateRunning, after[0]: drovertype.JobStateAvailable,
		})
	})

	t.Run("UnwrapExecutor/finish rolled back", func(t *testing.T) {
		t.Parallel()
		d, begin := setup(t)
		got := insert(t, d.Executor(), keyed("q", "a"), keyed("q", "a"))
		r := claimOne(t, d.Executor(), "q", got[0])
		tx, e := begin()
		finish(t, e, result(r, droverdriver.OutcomeCompleted))
		rollback(t, tx)
		wantState(t, d.Executor(), map[int64]drovertype.JobState{got[0]: drovertype.JobStateRunning, got[1]: drovertype.JobStateBlocked})
		// The attempt is still the claimer's to finish.
		if applied := finish(t, d.Executor(), result(r, droverdriver.OutcomeCompleted)); !slices.Equal(applied, got[:1]) {
			t.Fatalf("applied %v after the rollback", applied)
		}
		wantState(t, d.Executor(), map[int64]drovertype.JobState{got[1]: drovertype.JobStateAvailable})
	})
}
