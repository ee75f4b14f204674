package drover_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
)

// TestDeleteCompleted finishes one batch of results mixing every kind of
// job under Config.DeleteCompleted, and checks from the store which jobs
// were deleted and which were kept, and in which state.
func TestDeleteCompleted(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 1, func(c *drover.Config) {
			c.Queues, c.Workers = nil, nil
			c.DeleteCompleted = true
		})
		ctx := context.Background()
		raw := func(n int) drover.RawArgs {
			return drover.RawArgs{KindName: "k", JSON: []byte(`{"n":` + strconv.Itoa(n) + `}`)}
		}
		batch, err := b.client.InsertBatch(ctx, []drover.InsertManyParams{{Args: raw(0)}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		chain, err := b.client.InsertChain(ctx, []drover.InsertManyParams{{Args: raw(1)}, {Args: raw(2)}})
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name    string
			id      int64
			outcome drover.AttemptOutcome
			result  json.RawMessage
			want    drovertype.JobState // "" for deleted
		}{
			{name: "plain completed", id: b.insert(t, raw(3), nil), outcome: drover.AttemptCompleted},
			{name: "keyed completed", id: b.insert(t, raw(4), &drover.InsertOpts{Key: "a"}), outcome: drover.AttemptCompleted},
			{name: "with a result", id: b.insert(t, raw(5), nil), outcome: drover.AttemptCompleted, result: json.RawMessage(`{"ok":1}`),
				want: drovertype.JobStateCompleted},
			{name: "unique", id: b.insert(t, raw(6), &drover.InsertOpts{UniqueKey: "u"}), outcome: drover.AttemptCompleted,
				want: drovertype.JobStateCompleted},
			{name: "batch member", id: batch.JobIDs[0], outcome: drover.AttemptCompleted, want: drovertype.JobStateCompleted},
			{name: "workflow parent", id: chain[0], outcome: drover.AttemptCompleted, want: drovertype.JobStateCompleted},
			{name: "failed for good", id: b.insert(t, raw(7), &drover.InsertOpts{MaxAttempts: 1}), outcome: drover.AttemptFailed,
				want: drovertype.JobStateDiscarded},
			{name: "cancelled", id: b.insert(t, raw(8), nil), outcome: drover.AttemptCancelled, want: drovertype.JobStateCancelled},
		}
		claimed, err := b.remote.Claim(ctx, drover.ClaimParams{Queue: drover.DefaultQueue, Max: 100, Owner: "w", Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if len(claimed) != len(tests) {
			t.Fatalf("claimed %d jobs, want %d", len(claimed), len(tests))
		}
		tokens := map[int64]drovertype.LeaseToken{}
		for _, c := range claimed {
			tokens[c.ID] = c.LeaseToken
		}
		var results []drover.AttemptResult
		for _, tt := range tests {
			results = append(results, drover.AttemptResult{ID: tt.id, Attempt: 1, LeaseToken: tokens[tt.id], Outcome: tt.outcome,
				Result: tt.result, Error: "no"})
			if tt.outcome == drover.AttemptCompleted {
				results[len(results)-1].Error = ""
			}
		}
		// A result for a job never claimed is rejected and deletes nothing.
		stale := b.insert(t, raw(9), nil)
		results = append(results, drover.AttemptResult{ID: stale, Attempt: 1, Outcome: drover.AttemptCompleted})
		rep, err := b.remote.Finish(ctx, results)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Accepted) != len(tests) || len(rep.Rejected) != 1 || rep.Rejected[0] != stale {
			t.Fatalf("report = %+v, want %d accepted and job %d rejected", rep, len(tests), stale)
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				row, err := b.client.JobGet(ctx, tt.id)
				if tt.want == "" {
					if !errors.Is(err, drover.ErrNotFound) {
						t.Fatalf("job %d: got %+v, %v; want it deleted", tt.id, row, err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if row.State != tt.want {
					t.Fatalf("job %d is %s, want %s", tt.id, row.State, tt.want)
				}
			})
		}
		if row, err := b.client.JobGet(ctx, stale); err != nil || row.State != drovertype.JobStateAvailable {
			t.Fatalf("stale job = %+v, %v; want it available", row, err)
		}
		// The parent's completion released its child, which still runs.
		if row, err := b.client.JobGet(ctx, chain[1]); err != nil || row.State != drovertype.JobStateAvailable {
			t.Fatalf("chain child = %+v, %v; want it available", row, err)
		}
	})
}
