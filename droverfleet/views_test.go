package droverfleet_test

import (
	"context"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// TestHistory: each shard records the samples of its own jobs, and a read
// of the history sums them into one sample per series and minute.
func TestHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := threeJobs(t)
	now := time.Now()
	p := droverdriver.StatsRecordParams{At: now.Truncate(time.Minute).Add(time.Minute), Since: now.Add(-time.Hour), Until: now, Now: now}
	// Each shard: its q/k, q and all-queues samples.
	if n, err := f.ex.StatsRecord(ctx, p); err != nil || n != 6 {
		t.Fatalf("stored %d samples, %v; want 3 on each shard", n, err)
	}
	for _, sel := range []struct{ queue, kind string }{{"", ""}, {"q", ""}, {"q", "k"}} {
		got, err := f.ex.StatsHistory(ctx, droverdriver.StatsHistoryParams{From: p.At.Add(-time.Minute), To: p.At, Bucket: time.Minute,
			Queue: sel.queue, Kind: sel.kind})
		if err != nil || len(got) != 1 || got[0].Available != 3 || got[0].Queue != sel.queue || got[0].Kind != sel.kind {
			t.Fatalf("history of %q/%q: %+v, %v; want one sample of the 3 available jobs", sel.queue, sel.kind, got, err)
		}
	}
}

// TestMatchCountByState: per-state counts are summed over the shards, and
// the jobs examined stay within Examine across them.
func TestMatchCountByState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := threeJobs(t)
	for _, tc := range []struct{ examine, matched int64 }{{100, 3}, {2, 2}} {
		c, err := f.ex.JobMatchCountByState(ctx, droverdriver.MatchCountParams{Examine: int(tc.examine), Waiting: true, Finished: true})
		if err != nil || c.Waiting.Examined != tc.matched || c.Waiting.Matched[drovertype.JobStateAvailable] != tc.matched ||
			len(c.Waiting.Matched) != 1 || c.Finished.Examined != 0 {
			t.Fatalf("examine %d: %+v, %v; want %d available jobs examined and matched", tc.examine, c, err, tc.matched)
		}
	}
}

// threeJobs returns a fleet of two shards holding three available jobs of
// queue q (kind k), on both shards.
func threeJobs(t *testing.T) *fleet {
	t.Helper()
	f := migrated(t, 2)
	ids := insertEach(t, f.ex, job("q"), job("q"), job("q"))
	if droverdriver.ShardOf(ids[0]) == droverdriver.ShardOf(ids[1]) {
		t.Fatalf("jobs %v on one shard; want them spread over both", ids)
	}
	return f
}
