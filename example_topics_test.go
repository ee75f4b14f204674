package drover_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droversqlite"
)

// Example_topics publishes chat messages once to a topic with two
// subscriptions: each subscription receives every message, and the
// messages of one key (a room) in publish order.
func Example_topics() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "drover-example-topics")
	defer os.RemoveAll(dir)
	d, err := droversqlite.Open(ctx, filepath.Join(dir, "app.db"))
	if err != nil {
		panic(err)
	}
	defer d.Close()
	if _, err := drover.Migrate(ctx, d); err != nil {
		panic(err)
	}

	var mu sync.Mutex
	var wg sync.WaitGroup
	got := map[string][]string{} // subscription → payloads, in delivery order
	handler := func(ctx context.Context, batch []*drover.Delivery) error {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range batch {
			got[m.Subscription] = append(got[m.Subscription], string(m.Payload))
			wg.Done()
		}
		return nil // every message of the batch is acknowledged
	}
	client, err := drover.NewClient(d, &drover.Config{
		Subscriptions: []*drover.Subscription{
			drover.Subscribe("chat", "alice", handler, 1, 100),
			drover.Subscribe("chat", "bob", handler, 1, 100),
		},
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		panic(err)
	}
	if _, err := client.CreateTopic(ctx, "chat", nil); err != nil {
		panic(err)
	}
	for _, member := range []string{"alice", "bob"} {
		if _, err := client.CreateSubscription(ctx, "chat", member, nil); err != nil {
			panic(err)
		}
	}
	if err := client.Start(ctx); err != nil {
		panic(err)
	}

	wg.Add(3 * 2) // three messages, two subscriptions
	_, err = client.Publish(ctx, "chat",
		drover.Message{Key: "room-1", Payload: []byte("hi")},
		drover.Message{Key: "room-1", Payload: []byte("how are you?")},
		drover.Message{Key: "room-1", Payload: []byte("bye")})
	if err != nil {
		panic(err)
	}
	wg.Wait()
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := client.Stop(stopCtx); err != nil {
		panic(err)
	}
	fmt.Println("alice:", got["alice"])
	fmt.Println("bob:", got["bob"])
	// Output:
	// alice: [hi how are you? bye]
	// bob: [hi how are you? bye]
}
