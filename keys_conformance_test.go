package drover_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/droverhq/drover"
)

// Conformance tests for what keys do beyond order and limits (issue 7):
// retries of finished keyed jobs, per-key rate limits, fairness across keys
// and catch-up of periodic jobs. Every check reads the store.

// TestJobRetryKeyedJobRejoinsKey retries a finished keyed job while its
// key is full: it waits as blocked behind the running job, then runs
// before the key's job that was blocked before it (its ID is older), one
// at a time. Retried while the key has room, it is available at once.
func TestJobRetryKeyedJobRejoinsKey(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 4)
		b.start(t)
		ctx := context.Background()
		key := &drover.InsertOpts{Key: "k"}
		first := b.insert(t, scriptArgs{Tag: "k"}, key)
		waitState(t, b.client, first, drover.JobStateCompleted)
		holder := b.insert(t, scriptArgs{Tag: "k", Block: true}, key)
		waitState(t, b.client, holder, drover.JobStateRunning)
		behind := b.insert(t, scriptArgs{Tag: "k"}, key)

		row, err := b.client.JobRetry(ctx, first)
		if err != nil {
			t.Fatal(err)
		}
		if row.State != drover.JobStateBlocked || row.Key != "k" {
			t.Fatalf("retried while the key is full: %s with key %q, want blocked in key k", row.State, row.Key)
		}
		assertStates(t, b.client, map[int64]drover.JobState{
			first: drover.JobStateBlocked, holder: drover.JobStateRunning, behind: drover.JobStateBlocked,
		})

		if _, err := b.client.JobCancel(ctx, holder); err != nil {
			t.Fatal(err)
		}
		waitState(t, b.client, behind, drover.JobStateCompleted)
		// From the store: the retried job ran after the holder ended and
		// before the job behind it started, and the key ran one at a time.
		assertKeyOrder(t, b.client, first, behind)
		h, f := getJob(t, b.client, holder), getJob(t, b.client, first)
		if h.State != drover.JobStateCancelled || f.AttemptedAt.Before(*h.FinalizedAt) {
			t.Fatalf("holder %s, finished at %s; retried job started at %s, want after the holder was cancelled",
				h.State, h.FinalizedAt, f.AttemptedAt)
		}
		if f.State != drover.JobStateCompleted || f.Attempt != 2 || f.Key != "k" {
			t.Fatalf("retried job = %s, attempt %d, key %q; want completed on attempt 2 in key k", f.State, f.Attempt, f.Key)
		}
		var keyed []*drover.JobRow
		for _, id := range []int64{holder, first, behind} {
			keyed = append(keyed, getJob(t, b.client, id))
		}
		if got := maxOverlap(t, keyed); got != 1 {
			t.Fatalf("%d jobs of key k ran at once, limit 1", got)
		}

		// The key is idle now: a retry makes the job available at once.
		row, err = b.client.JobRetry(ctx, behind)
		if err != nil {
			t.Fatal(err)
		}
		if row.State != drover.JobStateAvailable || row.Key != "k" {
			t.Fatalf("retried while the key is idle: %s with key %q, want available in key k", row.State, row.Key)
		}
		row = waitState(t, b.client, behind, drover.JobStateCompleted)
		if row.Attempt != 2 {
			t.Fatalf("attempt = %d, want 2", row.Attempt)
		}
	})
}

// TestJobRetryRefusesSettledFlowJobs: a finished batch member and a
// finished workflow step with dependants cannot be retried (their end was
// counted and settled) and stay as they were; a step without dependants
// can.
func TestJobRetryRefusesSettledFlowJobs(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		rec := newRecorder()
		b := setup(t, s, 4, flowWorkers(rec))
		b.start(t)
		ctx := context.Background()
		batch, err := b.client.InsertBatch(ctx, []drover.InsertManyParams{{Args: stepArgs{N: 1}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		chain, err := b.client.InsertChain(ctx, []drover.InsertManyParams{{Args: stepArgs{N: 2}}, {Args: stepArgs{N: 3, Parent: true}}})
		if err != nil {
			t.Fatal(err)
		}
		member, parent, leaf := batch.JobIDs[0], chain[0], chain[1]
		for _, id := range []int64{member, parent, leaf} {
			waitState(t, b.client, id, drover.JobStateCompleted)
		}
		cases := []struct {
			name string
			id   int64
			want string
		}{
			{"batch member", member, "batch member"},
			{"step with dependants", parent, "dependants"},
		}
		for _, tc := range cases {
			_, err := b.client.JobRetry(ctx, tc.id)
			if !errors.Is(err, drover.ErrNotRetryable) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%s: error %v, want ErrNotRetryable naming %q", tc.name, err, tc.want)
			}
			if row := getJob(t, b.client, tc.id); row.State != drover.JobStateCompleted || row.Attempt != 1 {
				t.Fatalf("%s after the refused retry: %s, attempt %d", tc.name, row.State, row.Attempt)
			}
		}
		prog, err := b.client.BatchGet(ctx, batch.ID)
		if err != nil {
			t.Fatal(err)
		}
		if prog.Completed != 1 || !prog.Finished() {
			t.Fatalf("batch after the refused retry = %+v", prog)
		}
		if _, err := b.client.JobRetry(ctx, leaf); err != nil {
			t.Fatal(err)
		}
		if row := waitState(t, b.client, leaf, drover.JobStateCompleted); row.Attempt != 2 {
			t.Fatalf("leaf step attempt = %d, want 2", row.Attempt)
		}
	})
}
