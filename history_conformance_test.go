package drover_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// TestStatsHistory checks the history behind the dashboard's charts: once
// a client leads, it records the queues' figures in the store, which a
// client that never led reads back, per queue and per kind; a bad range
// or series is refused.
func TestStatsHistory(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		b := setup(t, s, 1)
		for range 3 {
			b.insert(t, noopArgs{}, &drover.InsertOpts{Queue: "hist"})
		}
		b.insert(t, scriptArgs{}, &drover.InsertOpts{Queue: "hist"})
		reader := s.newClient(t, b.d, fastConfig(newRecorder(), 1))
		b.start(t)
		var h *drover.StatsHistory
		waitfor.Cond(t, "the leader to record a sample of queue hist", func() bool {
			var err error
			h, err = reader.StatsHistory(ctx, drover.StatsHistoryParams{From: time.Now().Add(-5 * time.Minute), Queue: "hist"})
			if err != nil {
				t.Fatal(err)
			}
			// A fleet's leader records each shard's sample in that shard,
			// each in a transaction of its own: a read between them sums one shard's.
			return len(h.Samples) > 0 && (s.name != "fleet" || h.Samples[len(h.Samples)-1].Available == 4)
		})
		if got := h.Samples[len(h.Samples)-1]; h.Bucket != time.Minute || got.Queue != "hist" || got.Kind != "" || got.Available != 4 {
			t.Fatalf("history of queue hist: bucket %s, last sample %+v; want minutes, 4 jobs available", h.Bucket, got)
		}
		kinds, err := reader.StatsHistory(ctx, drover.StatsHistoryParams{From: time.Now().Add(-5 * time.Minute), Queue: "hist", Kind: drover.StatsEach})
		if err != nil {
			t.Fatal(err)
		}
		byKind := map[string]int64{}
		for _, k := range kinds.Samples {
			byKind[k.Kind] = k.Available
		}
		if byKind["test.noop"] != 3 || byKind["test.script"] != 1 || len(byKind) != 2 {
			t.Fatalf("history of hist's kinds: %v", byKind)
		}
		week, err := reader.StatsHistory(ctx, drover.StatsHistoryParams{From: time.Now().Add(-7 * 24 * time.Hour)})
		if err != nil || week.Bucket != time.Hour {
			t.Fatalf("a week: bucket %v, %v; want hours", week, err)
		}
		for _, bad := range []drover.StatsHistoryParams{
			{From: time.Now(), To: time.Now().Add(-time.Hour)},
			{From: time.Now().Add(-time.Hour), Queue: "no such queue!"},
			{From: time.Now().Add(-time.Hour), Kind: "?"},
			{From: time.Now().Add(-time.Hour), MaxPoints: 1},
			{From: time.Now().Add(-10000 * 24 * time.Hour)},
		} {
			if _, err := reader.StatsHistory(ctx, bad); !errors.Is(err, drover.ErrInvalid) {
				t.Errorf("%+v: %v, want ErrInvalid", bad, err)
			}
		}
	})
}
