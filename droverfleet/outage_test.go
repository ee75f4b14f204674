package droverfleet_test

import (
	"context"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// TestShardDownWhileOthersWork: shard 1 is a server of its own, stopped
// while a client works both shards and started again. While it is down,
// new jobs go to shard 0 and run; once it is back, its jobs run too, and
// every job inserted ran.
func TestShardDownWhileOthersWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c1, url1 := shardServer(t)
	client, r := workingFleet(t, url1, 0, 5*time.Second)
	insert := func(n int) []int64 {
		var ids []int64
		for range n {
			row, err := client.Insert(ctx, noop{}, nil)
			if err != nil {
				t.Fatalf("insert: %v", err)
			}
			ids = append(ids, row.ID)
		}
		return ids
	}
	allRan := func(what string, ids []int64) {
		t.Helper()
		waitfor.Cond(t, what, func() bool {
			r.mu.Lock()
			defer r.mu.Unlock()
			for _, id := range ids {
				if len(r.runs[id]) == 0 {
					return false
				}
			}
			return true
		})
	}
	before := insert(20)
	if got := shardsOf(before); got[0] == 0 || got[1] == 0 {
		t.Fatalf("jobs before the outage on shards %v, want both", got)
	}
	allRan("the jobs inserted before the outage to run", before)

	if err := c1.StopServer(); err != nil {
		t.Fatal(err)
	}
	// Jobs of shard 1 inserted now would wait for it; new ones go to
	// shard 0 and run.
	during := insert(40)
	if got := shardsOf(during); got[1] != 0 {
		t.Fatalf("jobs inserted while shard 1 is down went to shards %v, want shard 0 only", got)
	}
	allRan("the jobs inserted while shard 1 is down to run on shard 0", during)

	if err := c1.StartServer(ctx); err != nil {
		t.Fatal(err)
	}
	var after []int64
	waitfor.Cond(t, "a job placed on shard 1 once it is back", func() bool {
		after = append(after, insert(1)...)
		return shardsOf(after)[1] > 0
	})
	allRan("the jobs inserted after shard 1 came back to run", after)
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, ts := range r.runs {
		if len(ts) != 1 {
			t.Errorf("job %d ran %d times", id, len(ts))
		}
	}
}
