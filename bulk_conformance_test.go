package drover_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// TestJobBulk applies bulk actions to a filter that spans more than one
// page, over jobs the actions change and jobs they leave alone, and checks
// that each reports the jobs it changed, not the jobs its filter matched.
func TestJobBulk(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		b := setup(t, s, 1)
		const total, running = 1500, 500
		params := make([]drover.InsertManyParams, total)
		for i := range params {
			params[i] = drover.InsertManyParams{Args: drover.RawArgs{KindName: "test.noop", JSON: json.RawMessage(`{}`)},
				Opts: &drover.InsertOpts{Queue: "bulk"}}
		}
		if _, err := b.client.InsertMany(ctx, params); err != nil {
			t.Fatal(err)
		}
		other := b.insert(t, noopArgs{}, nil)
		if rows, err := b.d.Executor().JobClaim(ctx, droverdriver.ClaimParams{Queue: "bulk", Max: running, Owner: "w", Lease: time.Hour}); err != nil || len(rows) != running {
			t.Fatalf("claimed %d, %v", len(rows), err)
		}

		for _, tc := range []struct {
			action  drover.BulkAction
			states  []drovertype.JobState
			changed int64
			after   map[drovertype.JobState]int64
		}{
			// Discard leaves the running jobs alone.
			{drover.BulkDiscard, nil, total - running,
				map[drovertype.JobState]int64{drovertype.JobStateDiscarded: total - running, drovertype.JobStateRunning: running}},
			// Cancel asks the running ones to stop; finished ones stay.
			{drover.BulkCancel, nil, running,
				map[drovertype.JobState]int64{drovertype.JobStateDiscarded: total - running, drovertype.JobStateRunning: running}},
			// Retry the discarded ones only.
			{drover.BulkRetry, []drovertype.JobState{drovertype.JobStateDiscarded}, total - running,
				map[drovertype.JobState]int64{drovertype.JobStateAvailable: total - running, drovertype.JobStateRunning: running}},
			// Nothing left to retry among the running.
			{drover.BulkRetry, []drovertype.JobState{drovertype.JobStateRunning}, 0,
				map[drovertype.JobState]int64{drovertype.JobStateAvailable: total - running, drovertype.JobStateRunning: running}},
		} {
			var pages int
			p, err := b.client.JobBulk(ctx, tc.action, drover.JobListParams{Queue: "bulk", States: tc.states},
				func(drover.BulkProgress) { pages++ })
			if err != nil {
				t.Fatalf("%s: %v", tc.action, err)
			}
			if p.Changed != tc.changed {
				t.Errorf("%s %v: changed %d of %d scanned, want %d changed", tc.action, tc.states, p.Changed, p.Scanned, tc.changed)
			}
			if tc.states == nil && (p.Scanned != total || pages != 2) {
				t.Errorf("%s: scanned %d in %d pages, want %d in 2", tc.action, p.Scanned, pages, total)
			}
			counts, err := b.client.JobCountByState(ctx, "bulk")
			if err != nil {
				t.Fatal(err)
			}
			for st, n := range tc.after {
				if counts[st] != n {
					t.Errorf("after %s: %d %s, want %d (all: %v)", tc.action, counts[st], st, n, counts)
				}
			}
		}
		if j, err := b.client.JobGet(ctx, other); err != nil || j.State != drovertype.JobStateAvailable {
			t.Errorf("a job outside the filter: %v, %v", j, err)
		}
		// Delete refuses the running jobs and removes the rest of the
		// filter, in pages.
		var pages int
		p, err := b.client.JobBulk(ctx, drover.BulkDelete, drover.JobListParams{Queue: "bulk"}, func(drover.BulkProgress) { pages++ })
		if err != nil || p.Changed != total-running || p.Scanned != total || pages != 2 {
			t.Fatalf("delete: %+v in %d pages, %v; want %d of %d deleted in 2 pages", p, pages, err, total-running, total)
		}
		counts, err := b.client.JobCountByState(ctx, "bulk")
		if err != nil {
			t.Fatal(err)
		}
		for st, n := range counts {
			if n != 0 && (st != drovertype.JobStateRunning || n != running) {
				t.Errorf("after delete: %d %s jobs, want only the %d running (all: %v)", n, st, running, counts)
			}
		}
		if j, err := b.client.JobGet(ctx, other); err != nil || j.State != drovertype.JobStateAvailable {
			t.Errorf("a job outside the filter: %v, %v", j, err)
		}
		if _, err := b.client.JobBulk(ctx, "purge", drover.JobListParams{}, nil); !errors.Is(err, drover.ErrInvalid) {
			t.Errorf("unknown action: %v, want ErrInvalid", err)
		}
	})
}

// TestJobBulkDelete deletes one page of jobs of every kind of wait and
// end, and checks exactly which jobs are gone, and that what their end
// asked for was done: a keyed job's successor starts, a unique key is
// free for a new job, a dependant is cancelled, a batch counts its member;
// the running job is refused and stays.
func TestJobBulkDelete(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		b := setup(t, s, 1)
		q := &drover.InsertOpts{Queue: "del"}
		in := func(opts drover.InsertOpts) int64 {
			t.Helper()
			opts.Queue = "del"
			return b.insert(t, noopArgs{}, &opts)
		}
		running := in(drover.InsertOpts{})
		if rows, err := b.d.Executor().JobClaim(ctx, droverdriver.ClaimParams{Queue: "del", Max: 1, Owner: "w", Lease: time.Hour}); err != nil || len(rows) != 1 || rows[0].ID != running {
			t.Fatalf("claimed %v, %v", rows, err)
		}
		// A keyed job and the next job of its key, of another kind, so
		// outside the filter: it waits blocked until the first ends.
		keyedFirst := in(drover.InsertOpts{Key: "k"})
		keyedNext := b.insert(t, scriptArgs{}, &drover.InsertOpts{Queue: "del", Key: "k"})
		if j, err := b.client.JobGet(ctx, keyedNext); err != nil || j.State != drovertype.JobStateBlocked {
			t.Fatalf("the key's next job: %+v, %v; want blocked", j, err)
		}
		keyedSame := in(drover.InsertOpts{Key: "k2"})
		keyedBlocked := in(drover.InsertOpts{Key: "k2"})
		uniqueDone := in(drover.InsertOpts{UniqueKey: "u", UniqueStates: append(drovertype.UnfinishedStates(), drovertype.JobStateCancelled)})
		if _, err := b.client.JobCancel(ctx, uniqueDone); err != nil {
			t.Fatal(err)
		}
		chain, err := b.client.InsertChain(ctx, []drover.InsertManyParams{{Args: noopArgs{N: 3}, Opts: q}, {Args: noopArgs{N: 4}, Opts: &drover.InsertOpts{Queue: "after"}}})
		if err != nil {
			t.Fatal(err)
		}
		batch, err := b.client.InsertBatch(ctx, []drover.InsertManyParams{{Args: noopArgs{N: 5}, Opts: q}, {Args: noopArgs{N: 6}, Opts: &drover.InsertOpts{Queue: "after"}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		scheduled := in(drover.InsertOpts{RunAt: time.Now().Add(time.Hour)})
		// The filter: queue del, kind test.noop, every state. keyedBlocked
		// is in it too, and goes with the rest; keyedNext is not.
		p, err := b.client.JobBulk(ctx, drover.BulkDelete, drover.JobListParams{Queue: "del", Kind: "test.noop"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		gone := []int64{keyedFirst, keyedSame, keyedBlocked, uniqueDone, chain[0], batch.JobIDs[0], scheduled}
		if p.Changed != int64(len(gone)) || p.Scanned != int64(len(gone)+1) {
			t.Fatalf("delete: %+v; want %d deleted of %d scanned", p, len(gone), len(gone)+1)
		}
		for _, id := range gone {
			if j, err := b.client.JobGet(ctx, id); !errors.Is(err, drover.ErrNotFound) {
				t.Errorf("job %d after delete: %+v, %v; want it gone", id, j, err)
			}
		}
		if j, err := b.client.JobGet(ctx, running); err != nil || j.State != drovertype.JobStateRunning {
			t.Errorf("running job after delete: %+v, %v; want it running still", j, err)
		}
		// The dependant of the deleted parent was cancelled, not deleted
		// (it is in another queue); the batch counted its member.
		if j, err := b.client.JobGet(ctx, chain[1]); err != nil || j.State != drovertype.JobStateCancelled {
			t.Errorf("dependant of a deleted job: %+v, %v; want cancelled", j, err)
		}
		if bt, err := b.client.BatchGet(ctx, batch.ID); err != nil || bt.Cancelled != 1 || bt.Pending() != 1 {
			t.Errorf("batch after deleting a member: %+v, %v; want 1 cancelled, 1 pending", bt, err)
		}
		// The key's next job may start.
		if j, err := b.client.JobGet(ctx, keyedNext); err != nil || j.State != drovertype.JobStateAvailable {
			t.Errorf("the key's next job after deleting the first: %+v, %v; want available", j, err)
		}
		// The unique key held by the cancelled job is free again.
		again, err := b.client.Insert(ctx, noopArgs{}, &drover.InsertOpts{Queue: "del", UniqueKey: "u"})
		if err != nil || again.UniqueSkippedAsDuplicate {
			t.Errorf("insert with the deleted job's unique key: %+v, %v; want it stored", again, err)
		}
	})
}

// TestJobBulkRetryUniqueHeld: a bulk retry of finished unique jobs whose
// keys are held, by a job outside the page or by an earlier job of the
// page that takes the same key, leaves those jobs and retries the rest,
// instead of stopping at the first.
func TestJobBulkRetryUniqueHeld(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		b := setup(t, s, 1)
		discarded := func(key string) int64 {
			t.Helper()
			id := b.insert(t, noopArgs{}, &drover.InsertOpts{Queue: "u", UniqueKey: key})
			if _, err := b.client.JobDiscard(ctx, id); err != nil {
				t.Fatal(err)
			}
			return id
		}
		first, second := discarded("shared"), discarded("shared")
		heldOut := discarded("held")
		holder := b.insert(t, noopArgs{}, &drover.InsertOpts{Queue: "elsewhere", UniqueKey: "held"})
		free := discarded("free")
		p, err := b.client.JobBulk(ctx, drover.BulkRetry, drover.JobListParams{Queue: "u", States: []drovertype.JobState{drovertype.JobStateDiscarded}}, nil)
		if err != nil || p.Changed != 2 || p.Scanned != 4 {
			t.Fatalf("retry: %+v, %v; want 2 of 4 retried", p, err)
		}
		for id, want := range map[int64]drovertype.JobState{first: drovertype.JobStateAvailable, second: drovertype.JobStateDiscarded,
			heldOut: drovertype.JobStateDiscarded, free: drovertype.JobStateAvailable, holder: drovertype.JobStateAvailable} {
			if j, err := b.client.JobGet(ctx, id); err != nil || j.State != want {
				t.Errorf("job %d: %v, %v; want %s", id, j.State, err, want)
			}
		}
	})
}

// TestJobBulkByID acts on the jobs a list of IDs names, as the dashboard's
// row selection does: exactly those jobs change, in one page or several,
// and the count is of the jobs changed, not of the IDs given. Retrying an
// available job changes nothing, not even its place in the claim order.
func TestJobBulkByID(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		b := setup(t, s, 1)
		running := b.insert(t, noopArgs{}, &drover.InsertOpts{Queue: "sel"})
		if rows, err := b.d.Executor().JobClaim(ctx, droverdriver.ClaimParams{Queue: "sel", Max: 1, Owner: "w", Lease: time.Hour}); err != nil || len(rows) != 1 {
			t.Fatalf("claimed %v, %v", rows, err)
		}
		discarded := b.insert(t, noopArgs{}, &drover.InsertOpts{Queue: "sel"})
		if _, err := b.client.JobDiscard(ctx, discarded); err != nil {
			t.Fatal(err)
		}
		available := b.insert(t, noopArgs{}, &drover.InsertOpts{Queue: "sel"})
		before, err := b.client.JobGet(ctx, available)
		if err != nil {
			t.Fatal(err)
		}
		unselected := b.insert(t, noopArgs{}, &drover.InsertOpts{Queue: "sel"})

		p, err := b.client.JobBulkByID(ctx, drover.BulkRetry, []int64{available, running}, nil)
		if err != nil || p.Changed != 0 || p.Scanned != 2 {
			t.Fatalf("retry of an available and a running job: %+v, %v; want none changed", p, err)
		}
		if j, err := b.client.JobGet(ctx, available); err != nil || !j.RunAt.Equal(before.RunAt) {
			t.Fatalf("retried available job: run at %v, %v; want it kept at %v", j.RunAt, err, before.RunAt)
		}
		var pages int
		p, err = b.client.JobBulkByID(ctx, drover.BulkDelete, []int64{running, discarded, available, unselected + 1000}, func(drover.BulkProgress) { pages++ })
		if err != nil || p.Changed != 2 || p.Scanned != 4 || pages != 1 {
			t.Fatalf("delete by ID: %+v in %d pages, %v; want 2 of 4 deleted in 1 page", p, pages, err)
		}
		for id, want := range map[int64]drovertype.JobState{running: drovertype.JobStateRunning, unselected: drovertype.JobStateAvailable} {
			if j, err := b.client.JobGet(ctx, id); err != nil || j.State != want {
				t.Errorf("job %d after delete: %+v, %v; want %s", id, j, err, want)
			}
		}
		for _, id := range []int64{discarded, available} {
			if _, err := b.client.JobGet(ctx, id); !errors.Is(err, drover.ErrNotFound) {
				t.Errorf("selected job %d after delete: %v; want it gone", id, err)
			}
		}
		if _, err := b.client.JobBulkByID(ctx, "purge", []int64{running}, nil); !errors.Is(err, drover.ErrInvalid) {
			t.Errorf("unknown action: %v, want ErrInvalid", err)
		}
	})
}
