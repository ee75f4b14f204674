package droverpg_test

import (
	"context"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/maintenance"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// TestTopicRetentionStallsNoTraffic holds a reader's transaction open on
// topic_messages (a consumer's long read, an analyst's query) while the
// leader rotates generations and drops one that every subscription has
// passed: the rotation completes at once, and while the drop waits for
// the reader, publishes and reads go on; the drop completes once the
// reader is done. Before, creating a partition and dropping one took
// ACCESS EXCLUSIVE on topic_messages: each waited behind the reader,
// queued every publish and read behind itself for up to its 2 s lock
// timeout, and then failed.
func TestTopicRetentionStallsNoTraffic(t *testing.T) {
	ctx := context.Background()
	d := migrated(t)
	if _, err := d.Executor().(droverdriver.TopicExecutor).TopicCreate(ctx, droverdriver.TopicParams{Name: "t", Lanes: 1, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Executor().(droverdriver.TopicExecutor).SubscriptionCreate(ctx, droverdriver.SubscriptionParams{Topic: "t", Name: "s", MaxAttempts: 3,
		Start: droverdriver.StartEarliest, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	publish := func(payload string) {
		t.Helper()
		if _, err := d.Executor().(droverdriver.TopicExecutor).TopicPublish(ctx, []droverdriver.PublishParams{{Topic: "t", Payload: []byte(payload)}}); err != nil {
			t.Fatal(err)
		}
	}
	// read leases s's lane and reads it, acking what it read when ack.
	read := func(ack bool) int {
		t.Helper()
		token := drovertype.NewLeaseToken()
		leased, err := d.Executor().(droverdriver.TopicExecutor).TopicLease(ctx, droverdriver.TopicLeaseParams{Subscriptions: []droverdriver.SubscriptionRef{{Topic: "t", Name: "s"}},
			Limits: []int{100}, Owner: "o", Token: token, Lease: time.Minute, Max: 1, Now: time.Now()})
		if err != nil || len(leased) == 0 {
			return 0
		}
		rows, err := d.Executor().(droverdriver.TopicExecutor).TopicRead(ctx, droverdriver.TopicReadParams{Topics: []string{"t"}, Lanes: []int{0},
			Cursors: []droverdriver.Position{leased[0].Cursor}, Tos: []droverdriver.Position{leased[0].To}, Limits: []int{leased[0].Limit}})
		if err != nil {
			t.Fatal(err)
		}
		cursor := leased[0].Cursor
		if ack && len(rows) > 0 {
			cursor = rows[len(rows)-1].Position()
		}
		if _, err := d.Executor().(droverdriver.TopicExecutor).TopicAck(ctx, droverdriver.TopicAckParams{Now: time.Now(),
			Acks: []droverdriver.LaneAck{{Topic: "t", Subscription: "s", Lane: 0, Token: token, Cursor: cursor}}}); err != nil {
			t.Fatal(err)
		}
		return len(rows)
	}
	publish("old")
	waitfor.Cond(t, "s read the first generation", func() bool { return read(true) == 1 })

	reader, err := d.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Rollback(ctx)
	if _, err := reader.Exec(ctx, "SELECT count(*) FROM "+d.Schema()+".topic_messages"); err != nil {
		t.Fatal(err)
	}
	r := &maintenance.TopicRetainer{Exec: d.Executor().(droverdriver.TopicExecutor), MaxMessages: 1}
	if _, _, err := r.RunOnce(ctx); err != nil {
		t.Fatalf("rotation with a reader open: %v", err)
	}
	var first droverdriver.Generation
	waitfor.Cond(t, "the first generation sealed and settled", func() bool {
		gens, err := d.Executor().(droverdriver.TopicExecutor).TopicGenerations(ctx)
		if err != nil {
			t.Fatal(err)
		}
		first = gens[0]
		return len(gens) == 2 && first.Settled
	})

	done := make(chan error, 1)
	go func() {
		_, _, err := r.RunOnce(ctx)
		done <- err
	}()
	waitfor.Cond(t, "the drop waiting for the open reader", func() bool {
		var n int
		err := d.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND strpos(query, $1) > 0 AND pid <> pg_backend_pid()`, d.Schema()).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n > 0
	})
	start := time.Now()
	publish("during the drop")
	waitfor.Cond(t, "s read the message published during the drop", func() bool { return read(true) == 1 })
	t.Logf("a publish and a read took %v while the drop waited for the reader", time.Since(start))
	select {
	case err := <-done:
		t.Fatalf("the drop ended (%v) before the reader, so the publish and the read waited for it", err)
	default:
	}
	if err := reader.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("drop: %v", err)
	}
	gens, err := d.Executor().(droverdriver.TopicExecutor).TopicGenerations(ctx)
	if err != nil || len(gens) != 1 || gens[0].Gen == first.Gen {
		t.Fatalf("generations %+v, %v; want generation %d dropped", gens, err, first.Gen)
	}
}
