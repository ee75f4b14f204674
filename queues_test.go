package drover_test

import (
	"context"
	"testing"
	"time"

	"github.com/droverhq/drover"
)

func TestQueueStats(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := remoteSetup(t, s)
		ctx := context.Background()
		raw := drover.RawArgs{KindName: "k", JSON: []byte(`{}`)}
		first := b.insert(t, raw, nil)
		b.insert(t, raw, nil)
		b.insert(t, raw, &drover.InsertOpts{RunAt: time.Now().Add(time.Hour)})
		b.insert(t, raw, &drover.InsertOpts{Queue: "b"})
		retried := b.insert(t, raw, &drover.InsertOpts{Queue: "b"})
		if _, err := b.client.Claim(ctx, drover.ClaimParams{Queue: "b", Max: 2, Owner: "w", Lease: time.Minute}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.client.Finish(ctx, []drover.AttemptResult{{ID: retried, Attempt: 1, MaxAttempts: 5, Outcome: drover.AttemptFailed,
			RetryAt: time.Now().Add(time.Hour)}}); err != nil {
			t.Fatal(err)
		}
		stats, err := b.client.QueueStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(stats) != 2 || stats[0].Queue != "b" || stats[1].Queue != "default" {
			t.Fatalf("stats = %+v, want queues b and default", stats)
		}
		if q := stats[0]; q.Available != 0 || q.Scheduled != 0 || q.Retryable != 1 || q.Running != 1 || q.OldestAvailable != nil {
			t.Errorf("queue b = %+v", q)
		}
		row, _ := b.client.JobGet(ctx, first)
		if q := stats[1]; q.Available != 2 || q.Scheduled != 1 || q.Retryable != 0 || q.Running != 0 ||
			q.OldestAvailable == nil || !q.OldestAvailable.Equal(row.RunAt) {
			t.Errorf("queue default = %+v, oldest want %v", q, row.RunAt)
		}
	})
}
