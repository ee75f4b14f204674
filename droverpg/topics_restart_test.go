package droverpg_test

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/testkit/testdb"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// TestTopicSurvivesServerRestart stops PostgreSQL while a client consumes a
// subscription, starts it again, and publishes more: the consumer
// reconnects on its own and every message, from before and after the
// restart, is delivered (at least once: a batch whose ack the restart lost
// comes again).
func TestTopicSurvivesServerRestart(t *testing.T) {
	if os.Getenv(testdb.EnvURL) != "" {
		t.Skip("restarts the server: needs the throwaway cluster, not " + testdb.EnvURL)
	}
	ctx := context.Background()
	cluster := testdb.Cluster(t)
	d := migrated(t)
	var mu sync.Mutex
	got := map[string]int{}
	handler := func(ctx context.Context, batch []*drover.Delivery) error {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range batch {
			got[string(m.Payload)]++
		}
		return nil
	}
	delivered := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(got)
	}
	client, err := drover.NewClient(d, &drover.Config{
		Logger:        slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError + 1})),
		LeaseDuration: 2 * time.Second,
		PollInterval:  100 * time.Millisecond,
		LeaderTTL:     2 * time.Second,
		Subscriptions: []*drover.Subscription{drover.Subscribe("room", "member", handler, 4, 50)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CreateTopic(ctx, "room", &drover.TopicOpts{Lanes: 4}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CreateSubscription(ctx, "room", "member", nil); err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Stop(context.Background()) })
	publish := func(from, to int) {
		t.Helper()
		var msgs []drover.Message
		for i := from; i < to; i++ {
			msgs = append(msgs, drover.Message{Key: strconv.Itoa(i % 7), Payload: []byte(strconv.Itoa(i))})
		}
		// The pool may still hand out a connection the restart broke.
		if !waitfor.Within(30*time.Second, func() bool { _, err = client.Publish(ctx, "room", msgs...); return err == nil }) {
			t.Fatalf("publish after the restart: %v", err)
		}
	}
	publish(0, 500)
	if !waitfor.Within(30*time.Second, func() bool { return delivered() > 0 }) {
		t.Fatal("nothing delivered before the restart")
	}
	if err := cluster.StopServer(); err != nil {
		t.Fatal(err)
	}
	if err := cluster.StartServer(ctx); err != nil {
		t.Fatal(err)
	}
	publish(500, 1000)
	if !waitfor.Within(60*time.Second, func() bool { return delivered() == 1000 }) {
		t.Fatalf("%d of 1000 messages delivered after the restart", delivered())
	}
}
