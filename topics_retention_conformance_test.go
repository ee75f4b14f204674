package drover_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/maintenance"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// publishN publishes n keyless messages on topic and returns their IDs.
func publishN(t *testing.T, c topicClient, topic string, n int) []int64 {
	t.Helper()
	msgs := make([]drover.Message, n)
	for i := range msgs {
		msgs[i] = drover.Message{Payload: []byte(strconv.Itoa(i))}
	}
	ids, err := c.Publish(context.Background(), topic, msgs...)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// createTopic creates topic with lanes and retention and the named
// subscriptions, from the earliest message.
func createTopic(t *testing.T, c topicClient, topic string, lanes int, retention time.Duration, subs ...string) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.CreateTopic(ctx, topic, &drover.TopicOpts{Lanes: lanes, Retention: retention}); err != nil {
		t.Fatal(err)
	}
	for _, sub := range subs {
		if _, err := c.CreateSubscription(ctx, topic, sub, &drover.SubscriptionOpts{FromEarliest: true}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTopicRetentionPerTopic puts three topics in one generation: "brief"
// keeps messages 1 ms, "week" the default 7 days and "forever" until read,
// and none of their subscriptions reads anything. Once the generation is
// sealed, brief's messages leave by its own retention, counted as dropped
// for its subscription, while week's and forever's stay, and so does the
// generation they still hold. Before, a generation left only when every
// topic in it was passed or past retention: brief's subscription still
// had its whole lag, and nothing dropped, for as long as week's or
// forever's subscription lagged.
func TestTopicRetentionPerTopic(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		d := s.open(t)
		c := s.newClient(t, d, &drover.Config{}).(topicClient)
		te := d.Executor().(droverdriver.TopicExecutor)
		createTopic(t, c, "brief", 2, time.Millisecond, "laggard")
		createTopic(t, c, "week", 2, 0, "stalled")
		createTopic(t, c, "forever", 2, -1, "stalled")
		publishN(t, c, "brief", 7)
		publishN(t, c, "week", 5)
		publishN(t, c, "forever", 3)

		r := &maintenance.TopicRetainer{Exec: te, MaxMessages: 1}
		first := generations(t, te)[0]
		waitfor.Cond(t, "brief's messages past its retention removed", func() bool {
			if _, _, err := r.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
			return lagOf(t, c, "brief", "laggard").Dropped == 7
		})
		if l := lagOf(t, c, "brief", "laggard"); l.Pending != 0 {
			t.Fatalf("brief/laggard lag %+v, want nothing pending once its messages are past retention", l)
		}
		for _, topic := range []string{"week", "forever"} {
			if l := lagOf(t, c, topic, "stalled"); l.Dropped != 0 {
				t.Fatalf("%s/stalled lag %+v, want nothing dropped within retention", topic, l)
			}
		}
		if gens := generations(t, te); gens[0] != first {
			t.Fatalf("generations %v: %d went, though week and forever still hold messages in it", gens, first)
		}
		if got := drainN(t, d, "week", "stalled", 5); len(got) != 5 {
			t.Fatalf("week/stalled read %v, want its 5 messages", got)
		}
		if got := drainN(t, d, "forever", "stalled", 3); len(got) != 3 {
			t.Fatalf("forever/stalled read %v, want its 3 messages", got)
		}
		waitfor.Cond(t, "the generation every topic passed dropped", func() bool {
			if _, _, err := r.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
			return generations(t, te)[0] != first
		})
	})
}

// racingRetainer is a store on which a subscription is created between the
// retainer's look at a generation's topics and its drop: the race of a
// subscription created from the earliest message just before a drop.
type racingRetainer struct {
	droverdriver.Executor
	droverdriver.TopicExecutor
	once  sync.Once
	after func()
}

func (r *racingRetainer) TopicGenerationTopics(ctx context.Context, gen int64) ([]droverdriver.GenerationTopic, error) {
	topics, err := r.TopicExecutor.TopicGenerationTopics(ctx, gen)
	r.once.Do(r.after)
	return topics, err
}

// TestTopicRetentionKeepsEarliestPromise creates a subscription from the
// earliest message after the retainer found every subscription past a
// sealed generation and before it dropped it: the generation stays until
// the new subscription has read it, and no message is dropped. Before,
// the drop went ahead on what the retainer had read, and the new
// subscription lost messages the topic kept when it was created
// (SubscriptionOpts.FromEarliest: every message the topic still keeps).
func TestTopicRetentionKeepsEarliestPromise(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		d, c := topicSetup(t, s, 2, "reader")
		ids := publishN(t, c, "chat", 6)
		if got := drainN(t, d, "chat", "reader", len(ids)); len(got) != len(ids) {
			t.Fatalf("reader read %v, want %d messages", got, len(ids))
		}
		te := d.Executor().(droverdriver.TopicExecutor)
		if _, _, err := (&maintenance.TopicRetainer{Exec: te, MaxMessages: 1}).RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		first := generations(t, te)[0]
		waitfor.Cond(t, "the sealed generation settled", func() bool {
			gens, err := te.TopicGenerations(ctx)
			return err == nil && gens[0].Settled
		})
		racing := &racingRetainer{Executor: d.Executor(), TopicExecutor: te, after: func() {
			if _, err := c.CreateSubscription(ctx, "chat", "late", &drover.SubscriptionOpts{FromEarliest: true}); err != nil {
				t.Error(err)
			}
		}}
		if _, _, err := (&maintenance.TopicRetainer{Exec: racing, MaxMessages: 1 << 40}).RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if gens := generations(t, te); gens[0] != first {
			t.Fatalf("generations %v: %d was dropped under the subscription created from the earliest message", gens, first)
		}
		if l := lagOf(t, c, "chat", "late"); l.Pending != int64(len(ids)) || l.Dropped != 0 {
			t.Fatalf("late lag %+v, want all %d messages pending, none dropped", l, len(ids))
		}
		if got := drainN(t, d, "chat", "late", len(ids)); len(got) != len(ids) {
			t.Fatalf("late read %v, want %d messages", got, len(ids))
		}
		waitfor.Cond(t, "the generation both subscriptions passed dropped", func() bool {
			_, _, err := (&maintenance.TopicRetainer{Exec: te, MaxMessages: 1 << 40}).RunOnce(ctx)
			return err == nil && generations(t, te)[0] != first
		})
	})
}
