package drover_test

import (
	"context"
	"sort"
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
		claimed, err := b.remote.Claim(ctx, drover.ClaimParams{Queue: "b", Max: 2, Owner: "w", Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.remote.Finish(ctx, []drover.AttemptResult{{ID: retried, Attempt: 1, LeaseToken: claimed[0].LeaseToken, Outcome: drover.AttemptFailed,
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

func TestFinishedStats(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := remoteSetup(t, s)
		ctx := context.Background()
		raw := drover.RawArgs{KindName: "k", JSON: []byte(`{}`)}
		since := time.Now().Add(-time.Second)
		var ids []int64
		for range 5 {
			ids = append(ids, b.insert(t, raw, &drover.InsertOpts{MaxAttempts: 1}))
		}
		b.insert(t, raw, &drover.InsertOpts{Queue: "other"})
		cancelled := b.insert(t, raw, nil)
		if _, err := b.client.JobCancel(ctx, cancelled); err != nil {
			t.Fatal(err)
		}
		// Claim one at a time: each waited a little longer.
		var results []drover.AttemptResult
		for i := range ids {
			jobs, err := b.remote.Claim(ctx, drover.ClaimParams{Queue: "default", Max: 1, Owner: "w", Lease: time.Minute})
			if err != nil || len(jobs) != 1 {
				t.Fatalf("claim %d: %v, %v", i, jobs, err)
			}
			outcome := drover.AttemptCompleted
			if i == len(ids)-1 {
				outcome = drover.AttemptFailed
			}
			results = append(results, drover.AttemptResult{ID: jobs[0].ID, Attempt: 1, LeaseToken: jobs[0].LeaseToken, Outcome: outcome})
		}
		if _, err := b.remote.Finish(ctx, results); err != nil {
			t.Fatal(err)
		}
		var lat []time.Duration
		for _, r := range results[:4] {
			row, _ := b.client.JobGet(ctx, r.ID)
			lat = append(lat, row.AttemptedAt.Sub(row.RunAt))
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })

		stats, err := b.client.FinishedStats(ctx, since, time.Now().Add(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if len(stats) != 1 || stats[0].Queue != "default" {
			t.Fatalf("stats = %+v, want only queue default (other has nothing finished)", stats)
		}
		f := stats[0]
		if f.Completed != 4 || f.Discarded != 1 || f.Cancelled != 1 {
			t.Fatalf("counts = %+v, want 4 completed, 1 discarded, 1 cancelled", f)
		}
		// Nearest rank of 4: p50 is the 2nd, p95 and p99 the 4th.
		near := func(got, want time.Duration) bool {
			d := got - want
			return d > -time.Millisecond && d < time.Millisecond
		}
		if !near(f.PickupP50, lat[1]) || !near(f.PickupP95, lat[3]) || !near(f.PickupP99, lat[3]) {
			t.Fatalf("percentiles = %s/%s/%s, latencies %v", f.PickupP50, f.PickupP95, f.PickupP99, lat)
		}
		if later, err := b.client.FinishedStats(ctx, time.Now().Add(time.Second), time.Now().Add(time.Minute)); err != nil || len(later) != 0 {
			t.Fatalf("a window after every finish = %+v, %v", later, err)
		}
		if earlier, err := b.client.FinishedStats(ctx, since.Add(-time.Minute), since); err != nil || len(earlier) != 0 {
			t.Fatalf("a window before every finish = %+v, %v", earlier, err)
		}
	})
}

func TestLeaseOwners(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := remoteSetup(t, s)
		ctx := context.Background()
		raw := drover.RawArgs{KindName: "k", JSON: []byte(`{}`)}
		for range 3 {
			b.insert(t, raw, nil)
		}
		claim := func(owner string, n int, lease time.Duration) {
			if jobs, err := b.remote.Claim(ctx, drover.ClaimParams{Queue: "default", Max: n, Owner: owner, Lease: lease}); err != nil || len(jobs) != n {
				t.Fatalf("claim for %s: %v, %v", owner, jobs, err)
			}
		}
		before := time.Now()
		claim("alpha", 2, time.Minute)
		claim("beta", 1, time.Hour)
		owners, err := b.client.LeaseOwners(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(owners) != 2 || owners[0].Owner != "alpha" || owners[0].Running != 2 || owners[1].Owner != "beta" || owners[1].Running != 1 {
			t.Fatalf("owners = %+v", owners)
		}
		if d := owners[1].LeaseExpiresAt.Sub(before); d < 59*time.Minute || d > 61*time.Minute {
			t.Fatalf("beta's lease runs until %v, want about an hour after %v", owners[1].LeaseExpiresAt, before)
		}
	})
}
