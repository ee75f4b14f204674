package droversqlite

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// TestWriterNotStarvedByBusyPublisher runs two drivers on one file, as two
// processes would (each its own writer connection and lock file): one
// publishes batches of 500 messages back to back, the other makes small
// writes, as a consumer's leases and acks are. Each small write gets in
// while the publisher commits a handful of batches at most. Before, the
// small writer's look at the lock (SQLite's busy handler: 1, 2, 5 … up to
// 100 ms apart) rarely fell between two of the publisher's transactions:
// it waited through hundreds of them, seconds, long enough for its leases
// to lapse and, with a short retention, for messages to be dropped unread.
func TestWriterNotStarvedByBusyPublisher(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "writers.db")
	busy := open(t, path)
	migrate(t, busy)
	small := open(t, path)
	if _, err := busy.exec.TopicCreate(ctx, droverdriver.TopicParams{Name: "t", Lanes: 4, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	// The small writer's first call prepares its statements.
	if _, err := small.exec.TopicPublish(ctx, []droverdriver.PublishParams{{Topic: "t"}}); err != nil {
		t.Fatal(err)
	}
	batch := make([]droverdriver.PublishParams, 500)
	for i := range batch {
		batch[i] = droverdriver.PublishParams{Topic: "t", Lane: i % 4, Payload: make([]byte, 200)}
	}
	var stop atomic.Bool
	var published atomic.Int64
	done := make(chan error, 1)
	go func() {
		for !stop.Load() {
			if _, err := busy.exec.TopicPublish(ctx, batch); err != nil {
				done <- err
				return
			}
			published.Add(1)
		}
		done <- nil
	}()
	// The publisher has the lock most of the time from here on.
	waitfor.Cond(t, "the publisher's first batches", func() bool { return published.Load() >= 3 })
	// Waiting starts with SQLite's busy handler and announces itself after
	// writerStarved: the publisher then commits the batch it is writing
	// and stands aside. A bound of 20 batches leaves room for a fast
	// machine (a batch in 1 ms) and a slow scheduler.
	const bound = 20
	worst := int64(0)
	for range 50 {
		before := published.Load()
		if _, err := small.exec.TopicPublish(ctx, batch[:1]); err != nil {
			t.Fatal(err)
		}
		worst = max(worst, published.Load()-before)
	}
	stop.Store(true)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if worst > bound {
		t.Fatalf("a small write waited while the publisher committed %d batches, want at most %d", worst, bound)
	}
	t.Logf("a small write waited through %d of the publisher's batches at most (%d published)", worst, published.Load())
}
