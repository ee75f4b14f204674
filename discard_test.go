package drover_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
)

func TestJobDiscard(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := remoteSetup(t, s)
		ctx := context.Background()
		raw := drover.RawArgs{KindName: "k", JSON: []byte(`{}`)}
		running := b.insert(t, raw, nil)
		if jobs, err := b.remote.Claim(ctx, drover.ClaimParams{Queue: "default", Max: 1, Owner: "w", Lease: time.Minute}); err != nil || len(jobs) != 1 {
			t.Fatalf("claim: %v, %v", jobs, err)
		}
		waiting := b.insert(t, raw, nil)
		scheduled := b.insert(t, raw, &drover.InsertOpts{RunAt: time.Now().Add(time.Hour)})
		for id, want := range map[int64]drovertype.JobState{waiting: drovertype.JobStateDiscarded, scheduled: drovertype.JobStateDiscarded,
			running: drovertype.JobStateRunning} {
			row, err := b.client.JobDiscard(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if row.State != want {
				t.Errorf("discard job %d: now %s, want %s", id, row.State, want)
			}
			if stored, _ := b.client.JobGet(ctx, id); stored.State != want {
				t.Errorf("job %d is stored %s, want %s", id, stored.State, want)
			}
		}
		// A discarded job is never claimed; a finished one stays as it is.
		if jobs, err := b.remote.Claim(ctx, drover.ClaimParams{Queue: "default", Max: 10, Owner: "w", Lease: time.Minute}); err != nil || len(jobs) != 0 {
			t.Fatalf("claimed %d jobs after the discards", len(jobs))
		}
		if row, err := b.client.JobDiscard(ctx, waiting); err != nil || row.State != drovertype.JobStateDiscarded {
			t.Fatalf("second discard = %+v, %v", row, err)
		}
		if _, err := b.client.JobDiscard(ctx, 999_999); !errors.Is(err, drover.ErrNotFound) {
			t.Fatalf("discard of a missing job = %v, want ErrNotFound", err)
		}
	})
}
