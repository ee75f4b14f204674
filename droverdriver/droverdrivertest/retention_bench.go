package droverdrivertest

import (
	"context"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// BenchmarkRetention measures what retention's removals cost a store (docs/
// design/topics.md, "Retention"): two topics of 16 lanes with five
// subscriptions each, none of which reads, share a sealed generation of
// 200,000 messages; one topic's messages are purged (TopicPurge, chunks
// of chunk messages), then the rest of the generation dropped (TopicDrop).
// It reports messages removed a second by each, and the longest call,
// which on a store with one writer is how long others wait for it. open
// returns a migrated driver on a store of its own that implements
// droverdriver.TopicExecutor.
func BenchmarkRetention(b *testing.B, open func(b *testing.B) droverdriver.Driver, chunk int) {
	ctx := context.Background()
	var purged, dropped int64
	var purgeTime, dropTime, longest time.Duration
	for b.Loop() {
		b.StopTimer()
		te := open(b).Executor().(droverdriver.TopicExecutor)
		for _, topic := range []string{"short", "long"} {
			if _, err := te.TopicCreate(ctx, droverdriver.TopicParams{Name: topic, Lanes: 16, Now: time.Now()}); err != nil {
				b.Fatal(err)
			}
			for _, sub := range []string{"a", "b", "c", "d", "e"} {
				if _, err := te.SubscriptionCreate(ctx, droverdriver.SubscriptionParams{Topic: topic, Name: sub, MaxAttempts: 3,
					Start: droverdriver.StartEarliest, Now: time.Now()}); err != nil {
					b.Fatal(err)
				}
			}
		}
		batch := make([]droverdriver.PublishParams, 1000)
		for i := range batch {
			batch[i] = droverdriver.PublishParams{Topic: []string{"short", "long"}[i%2], Lane: (i / 2) % 16, Payload: make([]byte, 100)}
		}
		for range 200 {
			if _, err := te.TopicPublish(ctx, batch); err != nil {
				b.Fatal(err)
			}
		}
		gens, err := te.TopicGenerations(ctx)
		if err != nil {
			b.Fatal(err)
		}
		gen := gens[len(gens)-1].Gen
		if err := te.TopicRotate(ctx, gen+1); err != nil {
			b.Fatal(err)
		}
		waitfor.Cond(b, "the sealed generation settled", func() bool {
			gens, err := te.TopicGenerations(ctx)
			return err == nil && gens[0].Gen == gen && gens[0].Settled
		})
		b.StartTimer()

		start := time.Now()
		p := droverdriver.TopicPurgeParams{Gen: gen, Topic: "short", Limit: chunk}
		for {
			call := time.Now()
			res, err := te.TopicPurge(ctx, p)
			if err != nil {
				b.Fatal(err)
			}
			longest = max(longest, time.Since(call))
			purged += res.Deleted
			if res.Done {
				break
			}
			p.After = res.Last
		}
		purgeTime += time.Since(start)

		start = time.Now()
		if err := te.TopicDropMark(ctx, gen); err != nil {
			b.Fatal(err)
		}
		for {
			call := time.Now()
			res, err := te.TopicDrop(ctx, droverdriver.TopicDropParams{Gen: gen, Limit: chunk})
			if err != nil {
				b.Fatal(err)
			}
			longest = max(longest, time.Since(call))
			if res.Done {
				break
			}
		}
		dropTime += time.Since(start)
		dropped += 100000
	}
	b.ReportMetric(float64(purged)/purgeTime.Seconds(), "purged/s")
	b.ReportMetric(float64(dropped)/dropTime.Seconds(), "dropped/s")
	b.ReportMetric(float64(longest.Microseconds())/1000, "longest-call-ms")
}
