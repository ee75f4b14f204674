package droverfleet_test

import (
	"context"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// TestShardHealth: a fleet reports each shard's health and figures.
// Shard 1 is a server of its own, stopped and started again: while it is
// down, a probe reports it down with the error that made it unreachable,
// claims and queue figures go on from shard 0 alone, and shard 1's part
// of the figures is marked unread; once it is back, a probe reports it up
// and keeps the last error.
func TestShardHealth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c1, url1 := shardServer(t)
	f := twoShards(t, url1, nil)
	ids := insertEach(t, f.Executor(), job("q"), job("q"), job("q"), job("q"))
	if got := shardsOf(ids); got[0] != 2 || got[1] != 2 {
		t.Fatalf("4 jobs on shards %v, want 2 and 2", got)
	}
	claim := func(max int) []*drovertype.JobRow {
		t.Helper()
		rows, err := f.Executor().JobClaim(ctx, droverdriver.ClaimParams{Queue: "q", Max: max, Owner: "w", Lease: time.Minute})
		if err != nil {
			t.Fatalf("claim: %v", err)
		}
		return rows
	}
	if rows := claim(2); len(rows) != 2 {
		t.Fatalf("claimed %d jobs, want 2", len(rows))
	}
	if _, err := f.Executor().QueueStats(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	h, err := f.Probe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range h {
		if s.Down != nil || s.Record == nil || s.Record.Index != i || s.RoundTrip <= 0 || s.ProbedAt.IsZero() {
			t.Fatalf("shard %d before the outage: %+v; want up, attached as shard %d, with a round trip", i, s, i)
		}
		if s.Claims == 0 || s.ClaimedJobs != 1 || s.ClaimErrors != 0 {
			t.Fatalf("shard %d: %d claims took %d jobs (%d failed); want one job claimed from each shard", i, s.Claims, s.ClaimedJobs, s.ClaimErrors)
		}
		if !s.QueuesRead || len(s.Queues) != 1 || s.Queues[0].Available != 1 || s.Queues[0].Running != 1 {
			t.Fatalf("shard %d's queues: %+v (read %t); want q with 1 available and 1 running", i, s.Queues, s.QueuesRead)
		}
	}

	if err := c1.StopServer(); err != nil {
		t.Fatal(err)
	}
	h, err = f.Probe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h[1].Down == nil || h[1].LastError == nil || h[1].LastErrorAt.IsZero() || h[1].Unreachable == 0 {
		t.Fatalf("shard 1 stopped: %+v; want it down, with its last error", h[1])
	}
	if h[0].Down != nil || h[0].LastError != nil {
		t.Fatalf("shard 0 while shard 1 is down: %+v; want it up with no error", h[0])
	}
	// Shard 0 still claims and counts; shard 1 is skipped, not failed.
	if rows := claim(10); len(rows) != 1 || droverdriver.ShardOf(rows[0].ID) != 0 {
		t.Fatalf("claim while shard 1 is down: %d jobs; want shard 0's last one", len(rows))
	}
	if _, err := f.Executor().QueueStats(ctx, time.Now()); err != nil {
		t.Fatalf("queue figures while shard 1 is down: %v", err)
	}
	h = f.Health()
	if h[0].ClaimedJobs != 2 || !h[0].QueuesRead || h[0].Queues[0].Running != 2 {
		t.Fatalf("shard 0 while shard 1 is down: claimed %d, queues %+v (read %t); want 2 claimed, 2 running", h[0].ClaimedJobs, h[0].Queues, h[0].QueuesRead)
	}
	if h[1].QueuesRead || len(h[1].Queues) != 0 || h[1].ClaimedJobs != 1 {
		t.Fatalf("shard 1 while down: queues %+v (read %t), claimed %d; want its figures unread and its one earlier claim", h[1].Queues, h[1].QueuesRead, h[1].ClaimedJobs)
	}

	if err := c1.StartServer(ctx); err != nil {
		t.Fatal(err)
	}
	// The pool's first call may meet a connection the restart closed.
	waitfor.Cond(t, "a probe to find shard 1 back", func() bool {
		if h, err = f.Probe(ctx); err != nil {
			t.Fatal(err)
		}
		return h[1].Down == nil
	})
	if h[1].LastError == nil {
		t.Fatalf("shard 1 back: %+v; want its last error kept", h[1])
	}
}
