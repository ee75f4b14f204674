package drover_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/engine"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// Conformance tests for unique jobs whose keys outlive their unfinished
// life (InsertOpts.UniqueStates). Every check reads the store: which jobs
// were stored, in which state, and whether an insert of the key is stored
// or skipped.

// withFinal returns the unfinished states plus the final states given.
func withFinal(final ...drovertype.JobState) []drovertype.JobState {
	return append(drovertype.UnfinishedStates(), final...)
}

// holdsKey reports whether key of kind args is held, by inserting a probe
// job: a held key skips it. A probe that was stored takes the key, so it
// is cancelled at once (scheduled far ahead, it cannot have started),
// which frees the key again under the default states it is inserted with.
func holdsKey(t *testing.T, c client, args drover.Args, key string) bool {
	t.Helper()
	ctx := context.Background()
	row, err := c.Insert(ctx, args, &drover.InsertOpts{UniqueKey: key, RunAt: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if row.UniqueSkippedAsDuplicate {
		return true
	}
	if _, err := c.JobCancel(ctx, row.ID); err != nil {
		t.Fatal(err)
	}
	return false
}

// unfinishedOf returns the unfinished jobs of the store whose args carry tag.
func unfinishedOf(t *testing.T, c client, tag string) []*drovertype.JobRow {
	t.Helper()
	var out []*drovertype.JobRow
	for _, j := range byTag(t, allJobs(t, c))[tag] {
		if !j.State.Finished() {
			out = append(out, j)
		}
	}
	return out
}

// TestUniqueStatesAfterTheJobEnds ends a unique job in each final state,
// by each path that ends jobs (a worker's result, the rescuer, an admin's
// cancel or discard), and checks that the key is held afterwards exactly
// when UniqueStates lists that final state.
func TestUniqueStatesAfterTheJobEnds(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 4)
		ctx := context.Background()
		later := time.Now().Add(time.Hour)
		cases := []struct {
			name   string
			states []drovertype.JobState
			args   scriptArgs
			opts   drover.InsertOpts
			// end ends the job if its worker does not; nil lets it run.
			end      func(id int64) error
			want     drovertype.JobState
			wantHeld bool
		}{
			{name: "default, completed", want: drovertype.JobStateCompleted},
			{name: "completed listed, completed", states: withFinal(drovertype.JobStateCompleted),
				want: drovertype.JobStateCompleted, wantHeld: true},
			{name: "cancelled listed, completed", states: withFinal(drovertype.JobStateCancelled),
				want: drovertype.JobStateCompleted},
			{name: "default, cancelled by its worker", args: scriptArgs{Cancel: true}, want: drovertype.JobStateCancelled},
			{name: "cancelled listed, cancelled by its worker", states: withFinal(drovertype.JobStateCancelled),
				args: scriptArgs{Cancel: true}, want: drovertype.JobStateCancelled, wantHeld: true},
			{name: "default, cancelled while waiting", opts: drover.InsertOpts{RunAt: later},
				end: func(id int64) error { _, err := b.client.JobCancel(ctx, id); return err }, want: drovertype.JobStateCancelled},
			{name: "cancelled listed, cancelled while waiting", states: withFinal(drovertype.JobStateCancelled),
				opts: drover.InsertOpts{RunAt: later},
				end:  func(id int64) error { _, err := b.client.JobCancel(ctx, id); return err }, want: drovertype.JobStateCancelled,
				wantHeld: true},
			{name: "default, discarded out of attempts", args: scriptArgs{Fail: -1}, opts: drover.InsertOpts{MaxAttempts: 1},
				want: drovertype.JobStateDiscarded},
			{name: "discarded listed, discarded out of attempts", states: withFinal(drovertype.JobStateDiscarded),
				args: scriptArgs{Fail: -1}, opts: drover.InsertOpts{MaxAttempts: 1}, want: drovertype.JobStateDiscarded, wantHeld: true},
			{name: "completed listed, discarded by hand", states: withFinal(drovertype.JobStateCompleted),
				opts: drover.InsertOpts{RunAt: later},
				end:  func(id int64) error { _, err := b.client.JobDiscard(ctx, id); return err }, want: drovertype.JobStateDiscarded},
			{name: "discarded listed, discarded by hand", states: withFinal(drovertype.JobStateDiscarded),
				opts: drover.InsertOpts{RunAt: later},
				end:  func(id int64) error { _, err := b.client.JobDiscard(ctx, id); return err }, want: drovertype.JobStateDiscarded,
				wantHeld: true},
			{name: "default, discarded by the rescuer", opts: drover.InsertOpts{MaxAttempts: 1},
				end: func(id int64) error { return claimAndAbandon(b, id) }, want: drovertype.JobStateDiscarded},
			{name: "discarded listed, discarded by the rescuer", states: withFinal(drovertype.JobStateDiscarded),
				opts: drover.InsertOpts{MaxAttempts: 1},
				end:  func(id int64) error { return claimAndAbandon(b, id) }, want: drovertype.JobStateDiscarded, wantHeld: true},
		}
		// Every job is inserted, and its key checked, before the client
		// starts working, so that none can have ended already.
		ids := make([]int64, len(cases))
		keyArgs := make([]scriptArgs, len(cases))
		for i, tc := range cases {
			key := fmt.Sprintf("case-%d", i)
			opts := tc.opts
			opts.UniqueKey, opts.UniqueStates = key, tc.states
			if tc.end != nil && opts.RunAt.IsZero() {
				// Ended by the rescuer: keep the client's workers off it
				// until the dead worker below has claimed it.
				opts.Queue = "parked"
			}
			args := tc.args
			args.Tag = key
			ids[i], keyArgs[i] = b.insert(t, args, &opts), args
			if ids[i] == 0 {
				t.Fatalf("%s: first insert skipped", tc.name)
			}
			if !holdsKey(t, b.client, args, key) {
				t.Fatalf("%s: key free while the job waits", tc.name)
			}
		}
		b.start(t)
		for i, tc := range cases {
			id, args, key := ids[i], keyArgs[i], keyArgs[i].Tag
			if tc.end != nil {
				if err := tc.end(id); err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
			}
			waitState(t, b.client, id, tc.want)
			if held := holdsKey(t, b.client, args, key); held != tc.wantHeld {
				t.Errorf("%s: key held after the job ended %s: %v, want %v", tc.name, tc.want, held, tc.wantHeld)
			}
		}
	})
}

// claimAndAbandon claims job id from queue "parked" as a worker that then
// dies: its short lease expires and the running client's rescuer ends the
// job, which has no attempt left.
func claimAndAbandon(b *bundle, id int64) error {
	claimed, err := b.d.Executor().JobClaim(context.Background(), droverdriver.ClaimParams{
		Queue: "parked", Max: 1, Owner: "dead-worker", Lease: 100 * time.Millisecond})
	if err != nil {
		return err
	}
	if len(claimed) != 1 || claimed[0].ID != id {
		return fmt.Errorf("claimed %v, want job %d", claimed, id)
	}
	return nil
}

// TestUniqueFinishRacesInsert finishes the job holding a key while other
// goroutines insert the same key, many times over. Whatever the timing, the
// store never holds two unfinished jobs of the key, and a key freed by the
// finish is never lost: when no racer stored a job, the key is free. With
// completed in UniqueStates the finished job keeps the key and every racer
// is skipped. Results that do not echo the claimed flow bits (as remote
// workers send them) must reach the same outcome.
func TestUniqueFinishRacesInsert(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		cases := []struct {
			name   string
			states []drovertype.JobState
			echo   bool // the result carries the claimed row's flow bits
		}{
			{"default states", nil, true},
			{"default states, remote result", nil, false},
			{"completed listed", withFinal(drovertype.JobStateCompleted), true},
			{"completed listed, remote result", withFinal(drovertype.JobStateCompleted), false},
		}
		const rounds, racers = 15, 4
		b := setup(t, s, 1)
		ctx := context.Background()
		for i, tc := range cases {
			for round := range rounds {
				// A key and a queue of its own per round: a completed job
				// may keep the key, and the claim below must find only
				// the job that holds it.
				tag := fmt.Sprintf("race-%d-%d", i, round)
				queue := fmt.Sprintf("race%d-%d", i, round)
				opts := &drover.InsertOpts{Queue: queue, UniqueKey: tag, UniqueStates: tc.states}
				if b.insert(t, scriptArgs{Tag: tag}, opts) == 0 {
					t.Fatalf("%s, round %d: holder not stored", tc.name, round)
				}
				claimed, err := b.d.Executor().JobClaim(ctx, droverdriver.ClaimParams{Queue: queue, Max: 10, Owner: "racer", Lease: time.Minute})
				if err != nil || len(claimed) != 1 {
					t.Fatalf("%s, round %d: claim = %v, %v", tc.name, round, claimed, err)
				}
				res := droverdriver.Result{ID: claimed[0].ID, Attempt: claimed[0].Attempt, LeaseToken: claimed[0].LeaseToken,
					Outcome: droverdriver.OutcomeCompleted}
				if tc.echo {
					res.Flow = claimed[0].Flow
				}
				var wg sync.WaitGroup
				stored := make([]int64, racers)
				errs := make([]error, racers+1)
				start := make(chan struct{})
				wg.Add(racers + 1)
				go func() {
					defer wg.Done()
					<-start
					var accepted []int64
					accepted, errs[racers] = engine.Finish(ctx, b.d.Executor(), []droverdriver.Result{res})
					if errs[racers] == nil && len(accepted) != 1 {
						errs[racers] = fmt.Errorf("finish accepted %v", accepted)
					}
				}()
				for r := range racers {
					go func() {
						defer wg.Done()
						<-start
						row, err := b.client.Insert(ctx, scriptArgs{Tag: tag}, opts)
						if err == nil {
							stored[r] = row.ID
						}
						errs[r] = err
					}()
				}
				close(start)
				wg.Wait()
				if err := errors.Join(errs...); err != nil {
					t.Fatalf("%s, round %d: %v", tc.name, round, err)
				}
				n := 0
				for _, id := range stored {
					if id != 0 {
						n++
					}
				}
				unfinished := unfinishedOf(t, b.client, tag)
				if n > 1 || len(unfinished) != n {
					t.Fatalf("%s, round %d: %d racers stored a job, %d unfinished jobs hold the key; want at most 1, and as many",
						tc.name, round, n, len(unfinished))
				}
				if tc.states != nil && n != 0 {
					t.Fatalf("%s, round %d: %d racers stored a job while a completed job keeps the key", tc.name, round, n)
				}
				if n == 0 && tc.states == nil {
					if row, err := b.client.Insert(ctx, scriptArgs{Tag: tag}, opts); err != nil || row.UniqueSkippedAsDuplicate {
						t.Fatalf("%s, round %d: key lost after the finish: %+v, %v", tc.name, round, row, err)
					}
				}
			}
		}
	})
}

// TestUniqueRetryRetakesTheKey retries finished unique jobs by hand: one
// that gave its key up takes it again, or, while another job holds it, is
// refused with ErrUniqueConflict and stays as it was; one that kept its key
// still holds it. The jobs wait in a queue no client serves, and the test
// works them itself, so that it can look at the key between the steps.
func TestUniqueRetryRetakesTheKey(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 2)
		ctx := context.Background()
		// complete works the one job waiting in the parked queue.
		complete := func(id int64) {
			t.Helper()
			claimed, err := b.d.Executor().JobClaim(ctx, droverdriver.ClaimParams{Queue: "parked", Max: 10, Owner: "test", Lease: time.Minute})
			if err != nil || len(claimed) != 1 || claimed[0].ID != id {
				t.Fatalf("claim = %v, %v; want job %d", claimed, err, id)
			}
			c := claimed[0]
			res := droverdriver.Result{ID: c.ID, Attempt: c.Attempt, LeaseToken: c.LeaseToken, Outcome: droverdriver.OutcomeCompleted, Flow: c.Flow}
			if _, err := engine.Finish(ctx, b.d.Executor(), []droverdriver.Result{res}); err != nil {
				t.Fatal(err)
			}
		}
		args := scriptArgs{Tag: "retry"}
		opts := &drover.InsertOpts{Queue: "parked", UniqueKey: "retry"}
		first := b.insert(t, args, opts)
		complete(first)
		if holdsKey(t, b.client, args, "retry") {
			t.Fatal("key held after the first job completed")
		}

		second := b.insert(t, args, opts)
		if second == 0 {
			t.Fatal("second job skipped after the first completed")
		}
		_, err := b.client.JobRetry(ctx, first)
		if !errors.Is(err, drover.ErrUniqueConflict) || !strings.Contains(err.Error(), fmt.Sprint(second)) {
			t.Fatalf("retry while job %d holds the key: %v, want ErrUniqueConflict naming it", second, err)
		}
		if row, err := b.client.JobGet(ctx, first); err != nil || row.State != drovertype.JobStateCompleted || row.Attempt != 1 {
			t.Fatalf("refused retry changed the job: %+v, %v", row, err)
		}

		// Once the holder is gone, the retry takes the key back and holds
		// it until the job completes again.
		if _, err := b.client.JobCancel(ctx, second); err != nil {
			t.Fatal(err)
		}
		if row, err := b.client.JobRetry(ctx, first); err != nil || row.State != drovertype.JobStateAvailable {
			t.Fatalf("retry of a job whose key is free: %+v, %v", row, err)
		}
		if !holdsKey(t, b.client, args, "retry") {
			t.Fatal("key free while the retried job waits")
		}
		complete(first)
		if holdsKey(t, b.client, args, "retry") {
			t.Fatal("key held after the retried job completed")
		}

		// A job that keeps its key when completed still holds it through a
		// retry and after it completes again.
		kept := scriptArgs{Tag: "kept"}
		keptOpts := &drover.InsertOpts{Queue: "parked", UniqueKey: "kept", UniqueStates: withFinal(drovertype.JobStateCompleted)}
		id := b.insert(t, kept, keptOpts)
		complete(id)
		if _, err := b.client.JobRetry(ctx, id); err != nil {
			t.Fatal(err)
		}
		complete(id)
		if !holdsKey(t, b.client, kept, "kept") {
			t.Fatal("key free after the retried job completed again, though completed keeps it")
		}
	})
}

// TestUniquePrunerFreesKeptKeys completes a job that keeps its key when
// completed and lets the pruner remove it: the key goes with the job.
func TestUniquePrunerFreesKeptKeys(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 2, func(c *drover.Config) {
			c.CompletedRetention = 300 * time.Millisecond
			c.PruneInterval = 50 * time.Millisecond
		})
		b.start(t)
		ctx := context.Background()
		args := scriptArgs{Tag: "pruned"}
		opts := &drover.InsertOpts{UniqueKey: "pruned", UniqueStates: withFinal(drovertype.JobStateCompleted)}
		id := b.insert(t, args, opts)
		waitState(t, b.client, id, drovertype.JobStateCompleted)
		if row, err := b.client.Insert(ctx, args, opts); err != nil || !row.UniqueSkippedAsDuplicate {
			t.Fatalf("insert while the completed job keeps the key: %+v, %v; want skipped", row, err)
		}
		waitfor.Cond(t, "the completed job to be pruned", func() bool {
			_, err := b.client.JobGet(ctx, id)
			return errors.Is(err, drover.ErrNotFound)
		})
		row, err := b.client.Insert(ctx, args, opts)
		if err != nil || row.UniqueSkippedAsDuplicate || row.ID == 0 {
			t.Fatalf("insert after the holder was pruned: %+v, %v; want stored", row, err)
		}
	})
}
