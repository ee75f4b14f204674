package drover_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// Keyed jobs inside workflows and batches, on every store: a keyed job
// pending on its parents holds its place in its key, so the key's jobs
// still start in insert order, and its parents still run before it. Every
// check reads the store.

// waitNoneWaiting waits until no job of the store is waiting or running.
func waitNoneWaiting(t *testing.T, c client) {
	t.Helper()
	waitfor.Cond(t, "every job to end", func() bool {
		counts, err := c.JobCountByState(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range []drovertype.JobState{drovertype.JobStatePending, drovertype.JobStateBlocked, drovertype.JobStateScheduled,
			drovertype.JobStateAvailable, drovertype.JobStateRetryable, drovertype.JobStateRunning} {
			if counts[st] > 0 {
				return false
			}
		}
		return true
	})
}

// assertKeyOrder checks from the store that the jobs ids (one key's, in
// insert order) completed, each starting no earlier than the one before it
// finished.
func assertKeyOrder(t *testing.T, c client, ids ...int64) {
	t.Helper()
	var prev *drovertype.JobRow
	for _, id := range ids {
		j := getJob(t, c, id)
		if j.State != drovertype.JobStateCompleted {
			t.Fatalf("job %d is %s, want completed", id, j.State)
		}
		if prev != nil && j.AttemptedAt.Before(*prev.FinalizedAt) {
			t.Fatalf("job %d started at %s, before job %d ahead of it in its key finished at %s",
				id, j.AttemptedAt, prev.ID, prev.FinalizedAt)
		}
		prev = j
	}
}

func assertStates(t *testing.T, c client, want map[int64]drovertype.JobState) {
	t.Helper()
	for id, st := range want {
		if got := getJob(t, c, id).State; got != st {
			t.Fatalf("job %d is %s, want %s", id, got, st)
		}
	}
}

// TestKeyedWorkflowStepHoldsItsPlace inserts a keyed workflow step that
// waits for a slow plain parent, then more jobs of its key: a plain keyed
// job and a batch of keyed jobs. While the step is pending the later jobs
// wait as blocked behind it; the step runs after its parent, and the key's
// jobs run one at a time in insert order; the batch counts its members and
// runs its callback.
func TestKeyedWorkflowStepHoldsItsPlace(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 8, flowWorkers(newRecorder()))
		ctx := context.Background()
		const key = "account:7"
		parent := b.insert(t, stepArgs{N: 1, Sleep: "100ms"}, nil)
		step := b.insert(t, stepArgs{N: 2, Parent: true}, &drover.InsertOpts{Key: key, DependsOn: []int64{parent}})
		next := b.insert(t, stepArgs{N: 3}, &drover.InsertOpts{Key: key})
		members := make([]drover.InsertManyParams, 3)
		for i := range members {
			members[i] = drover.InsertManyParams{Args: stepArgs{N: 4 + i}, Opts: &drover.InsertOpts{Key: key}}
		}
		batch, err := b.client.InsertBatch(ctx, members, &drover.BatchOpts{Callback: callbackArgs{}})
		if err != nil {
			t.Fatal(err)
		}
		before := map[int64]drovertype.JobState{
			parent: drovertype.JobStateAvailable, step: drovertype.JobStatePending, next: drovertype.JobStateBlocked,
			batch.CallbackID: drovertype.JobStatePending,
		}
		for _, id := range batch.JobIDs {
			before[id] = drovertype.JobStateBlocked
		}
		assertStates(t, b.client, before)

		b.start(t)
		for range 2 { // more processes' worth of clients, all knowing the flow kinds
			cfg := fastConfig(b.rec, 8)
			flowWorkers(b.rec)(cfg)
			startClient(t, b.s.newClient(t, b.d, cfg))
		}
		waitNoneWaiting(t, b.client)

		assertRanAfter(t, b.client, parent, step)
		assertKeyOrder(t, b.client, append([]int64{step, next}, batch.JobIDs...)...)
		got, err := b.client.BatchGet(ctx, batch.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Completed != 3 || !got.Finished() {
			t.Fatalf("batch: %+v, want 3 completed and finished", got)
		}
		if cb := getJob(t, b.client, batch.CallbackID); cb.State != drovertype.JobStateCompleted {
			t.Fatalf("callback is %s, want completed", cb.State)
		}
	})
}

// TestKeyedWorkflowWithinOneCall stores one workflow whose keyed steps share
// a key with a limit of two: the step that waits for its parent holds its
// place, so the step after it in the key waits as blocked although the key
// has room, and starts only once the waiting step started.
func TestKeyedWorkflowWithinOneCall(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 8, flowWorkers(newRecorder()))
		ctx := context.Background()
		opts := &drover.InsertOpts{Key: "tenant:1", KeyLimit: 2}
		w := drover.NewWorkflow()
		first := w.Add(stepArgs{N: 1, Sleep: "50ms"}, opts)
		second := w.Add(stepArgs{N: 2, Parent: true}, opts, first)
		third := w.Add(stepArgs{N: 3}, opts)
		ids, err := b.client.InsertWorkflow(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		a, p, c := ids[first.Index()], ids[second.Index()], ids[third.Index()]
		assertStates(t, b.client, map[int64]drovertype.JobState{
			a: drovertype.JobStateAvailable, p: drovertype.JobStatePending, c: drovertype.JobStateBlocked,
		})

		b.start(t)
		waitNoneWaiting(t, b.client)

		assertRanAfter(t, b.client, a, p)
		pj, cj := getJob(t, b.client, p), getJob(t, b.client, c)
		if cj.State != drovertype.JobStateCompleted || cj.AttemptedAt.Before(*pj.AttemptedAt) {
			t.Fatalf("job %d is %s, started at %v, before job %d ahead of it in its key started at %s",
				c, cj.State, cj.AttemptedAt, p, pj.AttemptedAt)
		}
	})
}

// TestKeyedWorkflowStepCancelledFreesKey discards a parent whose keyed
// dependant then is cancelled with it: the job behind the dependant in its
// key must run, promoted by the same transaction.
func TestKeyedWorkflowStepCancelledFreesKey(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 4, flowWorkers(newRecorder()))
		const key = "order:9"
		parent := b.insert(t, stepArgs{N: 1, Fail: true}, &drover.InsertOpts{MaxAttempts: 1})
		step := b.insert(t, stepArgs{N: 2}, &drover.InsertOpts{Key: key, DependsOn: []int64{parent}})
		next := b.insert(t, stepArgs{N: 3}, &drover.InsertOpts{Key: key})
		assertStates(t, b.client, map[int64]drovertype.JobState{step: drovertype.JobStatePending, next: drovertype.JobStateBlocked})

		b.start(t)
		waitNoneWaiting(t, b.client)

		assertStates(t, b.client, map[int64]drovertype.JobState{
			parent: drovertype.JobStateDiscarded, step: drovertype.JobStateCancelled, next: drovertype.JobStateCompleted,
		})
	})
}

// TestFlowRejectsUniqueJobs: a unique job skipped as a duplicate would
// leave dependants waiting on nothing and a batch short of a member.
func TestFlowRejectsUniqueJobs(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 1, flowWorkers(newRecorder()))
		ctx := context.Background()
		parent := b.insert(t, stepArgs{N: 1}, nil)
		unique := &drover.InsertOpts{UniqueKey: "u1", DependsOn: []int64{parent}}
		if _, err := b.client.Insert(ctx, stepArgs{N: 2}, unique); !errors.Is(err, drover.ErrInvalid) {
			t.Fatalf("unique workflow step: %v, want ErrInvalid", err)
		}
		members := []drover.InsertManyParams{{Args: stepArgs{N: 3}, Opts: &drover.InsertOpts{UniqueKey: "u2"}}}
		if _, err := b.client.InsertBatch(ctx, members, nil); !errors.Is(err, drover.ErrInvalid) {
			t.Fatalf("unique batch member: %v, want ErrInvalid", err)
		}
		counts, err := b.client.JobCountByState(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if counts[drovertype.JobStateAvailable] != 1 || len(counts) != 1 {
			t.Fatalf("stored %v, want only the parent", counts)
		}
	})
}

// TestKeyedWorkflowsUnderConcurrency stores, for several keys, chains of a
// plain parent and a keyed child, in calls that interleave the keys, and
// works them with three clients: parents end in any order, and the settles
// that release children race with the finishes of other children of their
// keys. Every child must run after its parent, and each key's children one
// at a time in insert order.
func TestKeyedWorkflowsUnderConcurrency(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		const keys, perKey = 6, 12
		b := setup(t, s, 8, flowWorkers(newRecorder()))
		ctx := context.Background()
		children := map[string][]int64{}
		parentOf := map[int64]int64{}
		for i := range perKey {
			w := drover.NewWorkflow()
			type pair struct{ parent, child drover.Step }
			var pairs []pair
			for k := range keys {
				p := w.Add(stepArgs{N: i, Sleep: fmt.Sprintf("%dms", (i*7+k*3)%5)}, nil)
				c := w.Add(stepArgs{N: k, Parent: true}, &drover.InsertOpts{Key: fmt.Sprintf("k%d", k)}, p)
				pairs = append(pairs, pair{p, c})
			}
			ids, err := b.client.InsertWorkflow(ctx, w)
			if err != nil {
				t.Fatal(err)
			}
			for k, pr := range pairs {
				key := fmt.Sprintf("k%d", k)
				child := ids[pr.child.Index()]
				children[key] = append(children[key], child)
				parentOf[child] = ids[pr.parent.Index()]
			}
		}
		b.start(t)
		for range 2 {
			cfg := fastConfig(b.rec, 8)
			flowWorkers(b.rec)(cfg)
			startClient(t, b.s.newClient(t, b.d, cfg))
		}
		waitNoneWaiting(t, b.client)

		for _, ids := range children {
			for _, id := range ids {
				assertRanAfter(t, b.client, parentOf[id], id)
			}
			assertKeyOrder(t, b.client, ids...)
		}
	})
}
