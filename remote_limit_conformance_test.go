package drover_test

import (
	"context"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
)

// TestRemoteClaimRespectsStoredLimits: a queue's cluster-wide limits are
// written to the store by the limited claims of the Go clients configured
// with them; a remote worker, which brings no configuration, must be held
// to them too. Before, a remote claim ignored them (GlobalMaxWorkers 1, a
// remote claim took 5 jobs).
func TestRemoteClaimRespectsStoredLimits(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := remoteSetup(t, s)
		ctx := context.Background()
		raw := drover.RawArgs{KindName: "remote", JSON: []byte(`{}`)}
		for range 6 {
			b.insert(t, raw, &drover.InsertOpts{Queue: "limited"})
		}
		// A Go client configured with GlobalMaxWorkers 2 claims one job:
		// its claim stores the queue's limits.
		held, err := b.d.JobClaim(ctx, droverdriver.ClaimParams{Queue: "limited", Max: 1, Owner: "go-client", Lease: time.Minute,
			Limit: &droverdriver.QueueLimit{MaxRunning: 2}})
		if err != nil || len(held) != 1 {
			t.Fatalf("limited claim = %d jobs, %v", len(held), err)
		}
		jobs, err := b.remote.Claim(ctx, drover.ClaimParams{Queue: "limited", Max: 5, Owner: "py-1", Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != 1 {
			t.Fatalf("remote claim took %d jobs, want 1: the queue may run 2 and 1 already runs", len(jobs))
		}
		if jobs, err = b.remote.Claim(ctx, drover.ClaimParams{Queue: "limited", Max: 5, Owner: "py-2", Lease: time.Minute}); err != nil || len(jobs) != 0 {
			t.Fatalf("a second remote claim took %d jobs (%v), want none while 2 run", len(jobs), err)
		}
		counts, err := b.client.JobCountByState(ctx, "limited")
		if err != nil {
			t.Fatal(err)
		}
		if counts[drover.JobStateRunning] != 2 || counts[drover.JobStateAvailable] != 4 {
			t.Fatalf("counts %v, want 2 running and 4 available", counts)
		}
		// A queue without stored limits is claimed as before.
		for range 3 {
			b.insert(t, raw, &drover.InsertOpts{Queue: "free"})
		}
		if jobs, err = b.remote.Claim(ctx, drover.ClaimParams{Queue: "free", Max: 5, Owner: "py-1", Lease: time.Minute}); err != nil || len(jobs) != 3 {
			t.Fatalf("claim of an unlimited queue took %d jobs (%v), want 3", len(jobs), err)
		}
	})
}
