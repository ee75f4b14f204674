package drover_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverfleet"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/maintenance"
	"github.com/droverhq/drover/internal/testkit/testdb"
	"github.com/droverhq/drover/internal/testkit/waitfor"
	"github.com/droverhq/drover/internal/testsignal"
)

// topicClient is what the topic tests need of a drover.Client, whatever its
// transaction type.
type topicClient interface {
	client
	CreateTopic(ctx context.Context, name string, opts *drover.TopicOpts) (*drover.Topic, error)
	Publish(ctx context.Context, topic string, msgs ...drover.Message) ([]int64, error)
	PublishMany(ctx context.Context, msgs []drover.Message) ([]int64, error)
	CreateSubscription(ctx context.Context, topic, name string, opts *drover.SubscriptionOpts) (bool, error)
	SubscriptionLag(ctx context.Context, topic string) ([]drovertype.SubscriptionLag, error)
	Receive(ctx context.Context, p drover.ReceiveParams) ([]*drover.ReceivedBatch, error)
	AckBatches(ctx context.Context, topic, sub string, acks []drover.BatchAck) ([]bool, error)
	ExtendBatches(ctx context.Context, topic, sub string, receipts []string, lease time.Duration) ([]bool, error)
	ReleaseBatches(ctx context.Context, topic, sub string, receipts []string) ([]bool, error)
	SubscriptionLanes(ctx context.Context, topic, sub string) ([]drover.SubscriptionLane, error)
	ReleaseLane(ctx context.Context, topic, sub string, lane int) (bool, error)
}

// topicSetup makes a driver with one topic of lanes lanes and the named
// subscriptions (from the earliest message), and a client that only
// publishes.
func topicSetup(t *testing.T, s store, lanes int, subs ...string) (droverdriver.Driver, topicClient) {
	t.Helper()
	ctx := context.Background()
	d := s.open(t)
	c := s.newClient(t, d, &drover.Config{}).(topicClient)
	if _, err := c.CreateTopic(ctx, "chat", &drover.TopicOpts{Lanes: lanes}); err != nil {
		t.Fatal(err)
	}
	for _, name := range subs {
		if _, err := c.CreateSubscription(ctx, "chat", name, &drover.SubscriptionOpts{FromEarliest: true}); err != nil {
			t.Fatal(err)
		}
	}
	return d, c
}

// consumer starts a client on d consuming subs with handler, stopped at
// the end of the test.
func consumer(t *testing.T, s store, d droverdriver.Driver, subs ...*drover.Subscription) client {
	t.Helper()
	c := s.newClient(t, d, &drover.Config{Subscriptions: subs, LeaseDuration: 5 * time.Second})
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop(context.Background()) })
	return c
}

// ledger records deliveries per subscription, in order.
type ledger struct {
	mu   sync.Mutex
	got  map[string][]int64
	keys map[string]map[string][]int64 // subscription → key → ids in delivery order
	// handled is signalled by each batch, once recorded.
	handled testsignal.Signal[int]
}

func newLedger() *ledger {
	l := &ledger{got: map[string][]int64{}, keys: map[string]map[string][]int64{}}
	l.handled.Init()
	return l
}

// waitFor waits until cond holds, checking it after each batch recorded.
func (l *ledger) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testsignal.Until(t, what, cond, &l.handled)
}

func (l *ledger) handler(ctx context.Context, batch []*drover.Delivery) error {
	defer l.handled.Send(len(batch))
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, d := range batch {
		l.got[d.Subscription] = append(l.got[d.Subscription], d.ID)
		if l.keys[d.Subscription] == nil {
			l.keys[d.Subscription] = map[string][]int64{}
		}
		l.keys[d.Subscription][d.Key] = append(l.keys[d.Subscription][d.Key], d.ID)
	}
	return nil
}

func (l *ledger) count(sub string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.got[sub])
}

func (l *ledger) ids(sub string) []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.got[sub])
}

// heldTx is a transaction of the store's own type that a test holds open
// while other things happen: it inserts jobs (an application's own rows)
// and publishes, and stores nothing until commit. A transaction the test
// did not commit is rolled back at its end.
type heldTx struct {
	insert  func(args drover.Args) int64
	publish func(msgs ...drover.Message) []int64
	commit  func()
}

func beginHeld(t *testing.T, d droverdriver.Driver, c topicClient) *heldTx {
	t.Helper()
	ctx := context.Background()
	switch d := d.(type) {
	case *droverpg.Driver, *droverfleet.Driver[pgx.Tx]:
		tx, err := pgPool(d).Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tx.Rollback(ctx) })
		return held(t, c.(*drover.Client[pgx.Tx]), tx, func() error { return tx.Commit(ctx) })
	case *droversqlite.Driver:
		tx, err := d.DB().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tx.Rollback() })
		return held(t, c.(*drover.Client[*sql.Tx]), tx, tx.Commit)
	}
	t.Fatalf("no transaction for %T", d)
	return nil
}

// held is the heldTx of tx, a transaction of client's store.
func held[TTx any](t *testing.T, client *drover.Client[TTx], tx TTx, commit func() error) *heldTx {
	ctx := context.Background()
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	return &heldTx{
		insert: func(args drover.Args) int64 {
			row, err := client.InsertTx(ctx, tx, args, nil)
			check(err)
			return row.ID
		},
		publish: func(msgs ...drover.Message) []int64 {
			ids, err := client.PublishTx(ctx, tx, "chat", msgs...)
			check(err)
			return ids
		},
		commit: func() { check(commit()) },
	}
}

// drain leases, reads and acks every readable message of sub of topic
// "chat" through the driver, as a consumer would, and returns the IDs it
// read in order.
func drain(t *testing.T, d droverdriver.Driver, sub string) []int64 {
	t.Helper()
	return drainTopic(t, d, "chat", sub)
}

// drainTopic is drain for any topic.
func drainTopic(t *testing.T, d droverdriver.Driver, topic, sub string) []int64 {
	t.Helper()
	ctx := context.Background()
	te := d.Executor().(droverdriver.TopicExecutor)
	var out []int64
	for {
		token := drovertype.NewLeaseToken()
		leased, err := te.TopicLease(ctx, droverdriver.TopicLeaseParams{Subscriptions: []droverdriver.SubscriptionRef{{Topic: topic, Name: sub}},
			Limits: []int{1000}, Owner: "drain", Token: token, Lease: time.Minute, Max: 100, Now: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		if len(leased) == 0 {
			return out
		}
		var p droverdriver.TopicReadParams
		for _, l := range leased {
			p.Topics, p.Lanes, p.Cursors = append(p.Topics, l.Topic), append(p.Lanes, l.Lane), append(p.Cursors, l.Cursor)
			p.Tos, p.Limits = append(p.Tos, l.To), append(p.Limits, l.Limit)
		}
		rows, err := te.TopicRead(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		ack := droverdriver.TopicAckParams{Now: time.Now()}
		for i, l := range leased {
			cursor, n := l.Cursor, 0
			for _, m := range rows {
				if m.Range == i {
					out = append(out, m.ID)
					cursor, n = m.Position(), n+1
				}
			}
			ack.Acks = append(ack.Acks, droverdriver.LaneAck{Topic: topic, Subscription: sub, Lane: l.Lane, Token: token, Cursor: cursor, Count: n})
		}
		if _, err := te.TopicAck(ctx, ack); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTopicPublisherHeldOpenSkipsNothing is the trap of issue 24: a
// publisher takes an ID, holds its transaction open while another
// publisher commits a later one, and a reader must not skip the first
// when it commits. Delivery follows commit order (issue 33): on
// PostgreSQL the later publisher's message is delivered while the first
// is still open, which delays only its own message; on SQLite the later
// publisher waits for the first's write lock. One lane puts both messages
// in the same cursor's way.
func TestTopicPublisherHeldOpenSkipsNothing(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		d, c := topicSetup(t, s, 1, "reader")
		tx := beginHeld(t, d, c)
		first := tx.publish(drover.Message{Payload: []byte("first")})[0]
		second := make(chan int64, 1)
		go func() {
			ids, err := c.Publish(ctx, "chat", drover.Message{Payload: []byte("second")})
			if err != nil {
				t.Error(err)
			}
			second <- ids[0]
		}()
		var early, want []int64
		if s.name != "sqlite" { // PostgreSQL, alone or as a fleet
			// The later publisher has committed; the earlier is in flight.
			secondID := <-second
			early = drain(t, d, "reader")
			tx.commit()
			want = []int64{secondID, first}
		} else {
			tx.commit()
			want = []int64{first, <-second}
		}
		if got := append(early, drain(t, d, "reader")...); !slices.Equal(got, want) {
			t.Fatalf("read %v (%v while the first publisher was open), want %v: every message, in commit order", got, early, want)
		}
		if again := drain(t, d, "reader"); len(again) != 0 {
			t.Fatalf("read %v again after acking everything", again)
		}
	})
}

// TestTopicKeyOrderIsCommitOrder is issue 33's outbox sequence: a
// transaction writes an application row, another publisher's message v1
// of the same key commits meanwhile, then the transaction publishes v2 and
// commits. v1 committed before v2 was published, so every subscription
// gets v1 first. On PostgreSQL positions came from the publishers'
// transaction ids, and the transaction that wrote first delivered v2
// first. On SQLite the transaction holds the write lock from its first
// write, so v1 commits after it: commit order is v2, v1 there.
func TestTopicKeyOrderIsCommitOrder(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		d, c := topicSetup(t, s, 4, "reader")
		tx := beginHeld(t, d, c)
		tx.insert(noopArgs{N: 1})
		v1 := make(chan int64, 1)
		go func() {
			ids, err := c.Publish(ctx, "chat", drover.Message{Key: "order-7", Payload: []byte("v1")})
			if err != nil {
				t.Error(err)
			}
			v1 <- ids[0]
		}()
		var want []int64
		if s.name != "sqlite" { // PostgreSQL, alone or as a fleet
			first := <-v1
			v2 := tx.publish(drover.Message{Key: "order-7", Payload: []byte("v2")})[0]
			tx.commit()
			want = []int64{first, v2}
		} else {
			v2 := tx.publish(drover.Message{Key: "order-7", Payload: []byte("v2")})[0]
			tx.commit()
			want = []int64{v2, <-v1}
		}
		if got := drain(t, d, "reader"); !slices.Equal(got, want) {
			t.Fatalf("delivered %v, want %v: the key's messages in commit order", got, want)
		}
	})
}

// TestTopicPublishMany publishes to two topics in one call: each
// subscription gets its topic's messages, and a call that names a topic
// not stored, or a message without one, stores nothing and says which.
func TestTopicPublishMany(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		d, c := topicSetup(t, s, 2, "reader")
		if _, err := c.CreateTopic(ctx, "news", &drover.TopicOpts{Lanes: 1}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.CreateSubscription(ctx, "news", "reader", &drover.SubscriptionOpts{FromEarliest: true}); err != nil {
			t.Fatal(err)
		}
		ids, err := c.PublishMany(ctx, []drover.Message{{Topic: "chat", Payload: []byte("c1")}, {Topic: "news", Payload: []byte("n1")},
			{Topic: "chat", Key: "room-1", Payload: []byte("c2")}})
		if err != nil || len(ids) != 3 {
			t.Fatalf("PublishMany: %v, %v", ids, err)
		}
		var chat, news []int64
		waitfor.Cond(t, "every message read", func() bool {
			chat, news = append(chat, drainTopic(t, d, "chat", "reader")...), append(news, drainTopic(t, d, "news", "reader")...)
			return len(chat)+len(news) >= 3
		})
		slices.Sort(chat)
		if !slices.Equal(chat, []int64{ids[0], ids[2]}) || !slices.Equal(news, []int64{ids[1]}) {
			t.Fatalf("chat read %v, news %v; want %v and %v", chat, news, []int64{ids[0], ids[2]}, ids[1:2])
		}
		for _, bad := range []struct {
			msgs []drover.Message
			want string
		}{
			{[]drover.Message{{Topic: "chat", Payload: []byte("x")}, {Topic: "none", Payload: []byte("y")}}, "none"},
			{[]drover.Message{{Topic: "chat", Payload: []byte("x")}, {Payload: []byte("y")}}, "message 2 of 2: no topic"},
		} {
			if _, err := c.PublishMany(ctx, bad.msgs); err == nil || !strings.Contains(err.Error(), bad.want) {
				t.Fatalf("PublishMany(%+v): %v; want an error naming %q", bad.msgs, err, bad.want)
			}
		}
		if _, err := c.Publish(ctx, "chat", drover.Message{Topic: "news", Payload: []byte("x")}); err == nil || !strings.Contains(err.Error(), `names topic "news", published to "chat"`) {
			t.Fatalf("Publish to chat of a message naming news: %v", err)
		}
		if got := drainTopic(t, d, "chat", "reader"); len(got) != 0 {
			t.Fatalf("refused publishes stored %v", got)
		}
	})
}

// TestTopicDeadConsumerRedeliveredAndFenced leases a lane as a consumer
// that then dies: after its lease, a running client delivers the batch,
// and the dead consumer's late ack is rejected without moving the cursor.
func TestTopicDeadConsumerRedeliveredAndFenced(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		d, c := topicSetup(t, s, 1, "sub")
		te := d.Executor().(droverdriver.TopicExecutor)
		ids, err := c.Publish(ctx, "chat", drover.Message{Payload: []byte("a")}, drover.Message{Payload: []byte("b")})
		if err != nil {
			t.Fatal(err)
		}
		dead := drovertype.NewLeaseToken()
		leased, err := te.TopicLease(ctx, droverdriver.TopicLeaseParams{Subscriptions: []droverdriver.SubscriptionRef{{Topic: "chat", Name: "sub"}},
			Limits: []int{10}, Owner: "dead", Token: dead, Lease: 100 * time.Millisecond, Max: 10, Now: time.Now()})
		if err != nil || len(leased) != 1 {
			t.Fatalf("lease: %v, %v", leased, err)
		}
		led := newLedger()
		cons := consumer(t, s, d, drover.Subscribe("chat", "sub", led.handler, 1, 10))
		led.waitFor(t, "both messages redelivered after the dead consumer's lease", func() bool { return led.count("sub") == 2 })
		if got := led.ids("sub"); !slices.Equal(got, ids) {
			t.Fatalf("delivered %v, want %v", got, ids)
		}
		accepted, err := te.TopicAck(ctx, droverdriver.TopicAckParams{Now: time.Now(),
			Acks: []droverdriver.LaneAck{{Topic: "chat", Subscription: "sub", Lane: 0, Token: dead, Cursor: leased[0].Cursor}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(accepted) != 0 {
			t.Fatalf("the dead consumer's late ack was accepted: %v", accepted)
		}
		testsignal.Until(t, "no lag once the batch is acked", func() bool {
			lag, err := c.SubscriptionLag(ctx, "chat")
			return err == nil && len(lag) == 1 && lag[0].Pending == 0
		}, &signals(cons).Topics.Acked)
	})
}

// publishKeyed publishes n messages to "chat", message i of key "k" + i %
// keys, perChunk per call, and returns their IDs in order.
func publishKeyed(t *testing.T, c topicClient, n, keys, perChunk int) []int64 {
	t.Helper()
	var msgs []drover.Message
	for i := range n {
		msgs = append(msgs, drover.Message{Key: "k" + strconv.Itoa(i%keys), Payload: []byte(strconv.Itoa(i))})
	}
	var ids []int64
	for chunk := range slices.Chunk(msgs, perChunk) {
		got, err := c.Publish(context.Background(), "chat", chunk...)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, got...)
	}
	return ids
}

// TestTopicKeyOrderUnderEightConsumers publishes messages of 20 keys and
// consumes them with eight clients at once: each key's messages arrive
// once, in publish order, one batch at a time.
func TestTopicKeyOrderUnderEightConsumers(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		d, c := topicSetup(t, s, 16, "sub")
		ids := publishKeyed(t, c, 1000, 20, 100)
		led := newLedger()
		var mu sync.Mutex
		active := map[string]int{}
		handler := func(ctx context.Context, batch []*drover.Delivery) error {
			mu.Lock()
			for _, d := range batch {
				if active[d.Key]++; active[d.Key] > 1 && d == batch[0] {
					t.Errorf("key %s handled by two consumers at once", d.Key)
				}
			}
			mu.Unlock()
			err := led.handler(ctx, batch)
			mu.Lock()
			for _, d := range batch {
				active[d.Key]--
			}
			mu.Unlock()
			return err
		}
		for range 8 {
			consumer(t, s, d, drover.Subscribe("chat", "sub", handler, 1, 7))
		}
		led.waitFor(t, "every message delivered", func() bool { return led.count("sub") >= len(ids) })
		if n := led.count("sub"); n != len(ids) {
			t.Fatalf("%d deliveries of %d messages", n, len(ids))
		}
		led.mu.Lock()
		defer led.mu.Unlock()
		for key, got := range led.keys["sub"] {
			if !slices.IsSorted(got) {
				t.Fatalf("key %s delivered out of order: %v", key, got)
			}
		}
	})
}

// TestTopicSubscriptionsSharedByConsumers has four clients, as consumer
// processes, each serving the same five subscriptions of a topic of four
// lanes with a backlog: every subscription is contested, so each lease
// takes a fair share of each and the clients left short wait for lanes.
// Every subscription gets every message once, each key's in order.
func TestTopicSubscriptionsSharedByConsumers(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		subs := []string{"s0", "s1", "s2", "s3", "s4"}
		d, c := topicSetup(t, s, 4, subs...)
		ids := publishKeyed(t, c, 400, 40, 50)
		led := newLedger()
		for range 4 {
			var list []*drover.Subscription
			for _, sub := range subs {
				list = append(list, drover.Subscribe("chat", sub, led.handler, 1, 9))
			}
			consumer(t, s, d, list...)
		}
		led.waitFor(t, "every subscription got every message", func() bool {
			for _, sub := range subs {
				if led.count(sub) < len(ids) {
					return false
				}
			}
			return true
		})
		for _, sub := range subs {
			got := led.ids(sub)
			slices.Sort(got)
			if !slices.Equal(got, ids) {
				t.Fatalf("%s: %d deliveries of %d messages, not each once", sub, len(got), len(ids))
			}
			led.mu.Lock()
			for key, order := range led.keys[sub] {
				if !slices.IsSorted(order) {
					t.Errorf("%s: key %s delivered out of order: %v", sub, key, order)
				}
			}
			led.mu.Unlock()
		}
	})
}

// TestTopicManyPositionsReadInSmallerBatches gives 50 subscriptions of a
// topic 50 different positions and a backlog of 1,000 messages: with
// batches of 500, one read of every lane would take 25,000 rows, over a
// fetch's bound, so each lane's batch is cut shorter (and the lane kept
// for the next fetch). Every subscription still gets every message once.
func TestTopicManyPositionsReadInSmallerBatches(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		d, c := topicSetup(t, s, 1)
		var subs []*drover.Subscription
		led := newLedger()
		for i := range 50 {
			name := fmt.Sprintf("s%02d", i)
			if _, err := c.Publish(ctx, "chat", drover.Message{Payload: []byte("before " + name)}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.CreateSubscription(ctx, "chat", name, nil); err != nil {
				t.Fatal(err)
			}
			subs = append(subs, drover.Subscribe("chat", name, led.handler, 1, 500))
		}
		var backlog []int64
		for range 10 {
			msgs := make([]drover.Message, 100)
			for i := range msgs {
				msgs[i] = drover.Message{Payload: []byte("backlog")}
			}
			ids, err := c.Publish(ctx, "chat", msgs...)
			if err != nil {
				t.Fatal(err)
			}
			backlog = append(backlog, ids...)
		}
		consumer(t, s, d, subs...)
		last := backlog[len(backlog)-1]
		led.waitFor(t, "the backlog delivered to every subscription", func() bool {
			for _, sub := range subs {
				// One key per lane and one lane: the last message comes
				// last.
				if !slices.Contains(led.ids(sub.Name), last) {
					return false
				}
			}
			return true
		})
		for _, sub := range subs {
			got := led.ids(sub.Name)
			seen := map[int64]bool{}
			for _, id := range got {
				if seen[id] {
					t.Fatalf("%s got message %d twice", sub.Name, id)
				}
				seen[id] = true
			}
			for _, id := range backlog {
				if !seen[id] {
					t.Fatalf("%s never got message %d", sub.Name, id)
				}
			}
		}
	})
}

// TestTopicSlowSubscriptionDoesNotSlowOthers blocks one subscription's
// handler: the other subscription of the topic, served by the same
// client, still receives every message.
func TestTopicSlowSubscriptionDoesNotSlowOthers(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		d, c := topicSetup(t, s, 4, "slow", "fast")
		release := make(chan struct{})
		slow := func(ctx context.Context, batch []*drover.Delivery) error {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil
		}
		led := newLedger()
		consumer(t, s, d, drover.Subscribe("chat", "slow", slow, 4, 10), drover.Subscribe("chat", "fast", led.handler, 4, 10))
		for i := range 5 {
			if _, err := c.Publish(ctx, "chat", drover.Message{Payload: []byte(fmt.Sprint(i))}); err != nil {
				t.Fatal(err)
			}
		}
		led.waitFor(t, "the fast subscription got all five while the slow one is stuck", func() bool { return led.count("fast") == 5 })
		close(release)
	})
}

// TestTopicFailedMessageRetriedThenDead fails a message on every delivery:
// it is retried as a job of the subscription's retry queue and ends
// discarded after the subscription's stored MaxAttempts (not the client's
// job default), while the lane moves on.
func TestTopicFailedMessageRetriedThenDead(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		d, c := topicSetup(t, s, 1)
		if _, err := c.CreateSubscription(ctx, "chat", "sub", &drover.SubscriptionOpts{FromEarliest: true, MaxAttempts: 3}); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		attempts := map[int64][]int{}
		handler := func(ctx context.Context, batch []*drover.Delivery) error {
			mu.Lock()
			defer mu.Unlock()
			failed := drover.FailedMessages{}
			for _, d := range batch {
				attempts[d.ID] = append(attempts[d.ID], d.Attempt)
				if string(d.Payload) == "poison" {
					failed[d.ID] = errors.New("poison")
				}
			}
			return failed
		}
		cl := s.newClient(t, d, &drover.Config{Subscriptions: []*drover.Subscription{drover.Subscribe("chat", "sub", handler, 1, 10)},
			RetryPolicy: func(int) time.Duration { return 0 }, MaxAttempts: 7})
		if err := cl.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cl.Stop(context.Background()) })
		ids, err := c.Publish(ctx, "chat", drover.Message{Payload: []byte("poison")}, drover.Message{Payload: []byte("fine")})
		if err != nil {
			t.Fatal(err)
		}
		queue := drover.RetryQueue("chat")
		s.untilWorked(t, "the poison message discarded in the retry queue", func() bool {
			n, err := cl.JobCountByState(ctx, queue)
			return err == nil && n[drovertype.JobStateDiscarded] == 1
		})
		mu.Lock()
		defer mu.Unlock()
		if len(attempts[ids[1]]) != 1 {
			t.Fatalf("the good message was delivered %d times", len(attempts[ids[1]]))
		}
		if got := attempts[ids[0]]; !slices.Equal(got, []int{1, 2, 3}) {
			t.Fatalf("poison attempts %v, want 1, 2, 3 (the subscription's MaxAttempts)", got)
		}
	})
}

// TestTopicConsumerRestartLosesNothing stops a consumer half way and
// starts another on a fresh driver of the same store: it delivers the
// rest, and every message is delivered at least once.
func TestTopicConsumerRestartLosesNothing(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		d, c := topicSetup(t, s, 4, "sub")
		led := newLedger()
		first := s.newClient(t, d, &drover.Config{Subscriptions: []*drover.Subscription{drover.Subscribe("chat", "sub", led.handler, 2, 10)}})
		if err := first.Start(ctx); err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for i := range 10 {
			got, err := c.Publish(ctx, "chat", drover.Message{Payload: []byte(strconv.Itoa(i))})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, got...)
		}
		led.waitFor(t, "some delivered", func() bool { return led.count("sub") > 0 })
		if err := first.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			got, err := c.Publish(ctx, "chat", drover.Message{Payload: []byte(strconv.Itoa(10 + i))})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, got...)
		}
		consumer(t, s, d, drover.Subscribe("chat", "sub", led.handler, 2, 10))
		led.waitFor(t, "every message delivered after the restart", func() bool {
			got := led.ids("sub")
			for _, id := range ids {
				if !slices.Contains(got, id) {
					return false
				}
			}
			return true
		})
	})
}

// drainN drains sub of topic until it has read n messages, and returns
// them: on PostgreSQL a committed message is readable only once every older
// transaction of the cluster has ended, which other tests may delay.
func drainN(t *testing.T, d droverdriver.Driver, topic, sub string, n int) []int64 {
	t.Helper()
	var got []int64
	waitfor.Cond(t, fmt.Sprintf("%d messages read by %s", n, sub), func() bool {
		got = append(got, drainTopic(t, d, topic, sub)...)
		return len(got) >= n
	})
	return got
}

// generations returns the numbers of the stored generations.
func generations(t *testing.T, te droverdriver.TopicExecutor) []int64 {
	t.Helper()
	gens, err := te.TopicGenerations(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, g := range gens {
		out = append(out, g.Gen)
	}
	return out
}

// lagOf returns the lag line of sub on topic.
func lagOf(t *testing.T, c topicClient, topic, sub string) drovertype.SubscriptionLag {
	t.Helper()
	lag, err := c.SubscriptionLag(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lag {
		if l.Subscription == sub {
			return l
		}
	}
	t.Fatalf("no lag for %s/%s in %v", topic, sub, lag)
	return drovertype.SubscriptionLag{}
}

// TestTopicRetentionKeepsUnackedMessages seals a generation that one
// subscription has read and another has not: the leader's retention pass
// keeps it, whatever the number of passes, until the second has read and
// acked every message of it; then it drops it whole.
func TestTopicRetentionKeepsUnackedMessages(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		d, c := topicSetup(t, s, 2, "fast", "slow")
		te := d.Executor().(droverdriver.TopicExecutor)
		var ids []int64
		for i := range 10 {
			got, err := c.Publish(ctx, "chat", drover.Message{Key: strconv.Itoa(i % 3), Payload: []byte(strconv.Itoa(i))})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, got...)
		}
		r := &maintenance.TopicRetainer{Exec: te, MaxMessages: 1}
		if _, _, err := r.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if gens := generations(t, te); len(gens) != 2 {
			t.Fatalf("generations %v after a rotation, want two", gens)
		}
		if got := drainN(t, d, "chat", "fast", len(ids)); len(got) != len(ids) {
			t.Fatalf("fast read %d messages, want %d", len(got), len(ids))
		}
		first := generations(t, te)[0]
		// Settling may take a pass or more on PostgreSQL (publishers open
		// at the seal must end); every pass must keep the generation.
		for range 5 {
			if _, _, err := r.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
			if gens := generations(t, te); gens[0] != first {
				t.Fatalf("generation %d dropped while subscription slow had not read it (now %v)", first, gens)
			}
		}
		got := drainN(t, d, "chat", "slow", len(ids))
		slices.Sort(got)
		if !slices.Equal(got, ids) {
			t.Fatalf("slow read %v, want %v", got, ids)
		}
		waitfor.Cond(t, "the generation both subscriptions passed dropped", func() bool {
			_, _, err := r.RunOnce(ctx)
			return err == nil && generations(t, te)[0] != first
		})
		for _, sub := range []string{"fast", "slow"} {
			if l := lagOf(t, c, "chat", sub); l.Pending != 0 || l.Dropped != 0 {
				t.Fatalf("lag of %s after the drop: %+v", sub, l)
			}
		}
		// New messages land in the new generation and are delivered.
		more, err := c.Publish(ctx, "chat", drover.Message{Payload: []byte("after")})
		if err != nil {
			t.Fatal(err)
		}
		if got := drainN(t, d, "chat", "slow", 1); !slices.Equal(got, more) {
			t.Fatalf("slow read %v after the drop, want %v", got, more)
		}
	})
}

// briefTopicSetup is topicSetup with a second topic, "brief", of two
// lanes and a retention of a millisecond, and the named subscriptions of
// it (from the earliest message).
func briefTopicSetup(t *testing.T, s store, subs ...string) (droverdriver.Driver, topicClient) {
	t.Helper()
	ctx := context.Background()
	d, c := topicSetup(t, s, 2)
	if _, err := c.CreateTopic(ctx, "brief", &drover.TopicOpts{Lanes: 2, Retention: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	for _, sub := range subs {
		if _, err := c.CreateSubscription(ctx, "brief", sub, &drover.SubscriptionOpts{FromEarliest: true}); err != nil {
			t.Fatal(err)
		}
	}
	return d, c
}

// TestTopicRetentionDropsLaggard lets one subscription lag past a short
// retention: the generation is dropped although it never read it, which
// its lag reports as dropped messages, and the other subscription, which
// read everything, is untouched.
func TestTopicRetentionDropsLaggard(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		d, c := briefTopicSetup(t, s, "reader", "laggard")
		te := d.Executor().(droverdriver.TopicExecutor)
		var msgs []drover.Message
		for i := range 5 {
			msgs = append(msgs, drover.Message{Payload: []byte(strconv.Itoa(i))})
		}
		if _, err := c.Publish(ctx, "brief", msgs...); err != nil {
			t.Fatal(err)
		}
		if got := drainN(t, d, "brief", "reader", 5); len(got) != 5 {
			t.Fatalf("reader read %d messages, want 5", len(got))
		}
		r := &maintenance.TopicRetainer{Exec: te, MaxMessages: 1}
		first := generations(t, te)[0]
		waitfor.Cond(t, "the generation past retention dropped", func() bool {
			_, _, err := r.RunOnce(ctx)
			return err == nil && generations(t, te)[0] != first
		})
		if l := lagOf(t, c, "brief", "laggard"); l.Dropped != 5 || l.Pending != 0 {
			t.Fatalf("laggard lag %+v, want 5 dropped, none pending", l)
		}
		if l := lagOf(t, c, "brief", "reader"); l.Dropped != 0 || l.Pending != 0 {
			t.Fatalf("reader lag %+v, want nothing dropped or pending", l)
		}
		if got := drainTopic(t, d, "brief", "laggard"); len(got) != 0 {
			t.Fatalf("laggard read %v from a dropped generation", got)
		}
	})
}

// TestTopicLagAtSeveralCursors reads the lag of subscriptions standing at
// different cursors of the same lanes, as consumer processes that lease
// different subscriptions leave them: each subscription's count and oldest
// message are its own, a cursor on a message does not count it, and one
// that read everything has none pending.
func TestTopicLagAtSeveralCursors(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		_, c := topicSetup(t, s, 2, "none", "some", "all")
		keys := laneKeys(2)
		for i := range 6 {
			// One publish per message, so that each has its own time.
			if _, err := c.Publish(ctx, "chat", drover.Message{Key: keys[i%2], Payload: []byte(strconv.Itoa(i))}); err != nil {
				t.Fatal(err)
			}
		}
		published := receiveLanes(t, c, "chat", "none", 10, 6, false) // "none" only looks
		receiveLanes(t, c, "chat", "some", 1, 2, true)                // the first message of each lane
		receiveLanes(t, c, "chat", "all", 10, 6, true)
		for _, tc := range []struct {
			sub     string
			pending int64
			oldest  *time.Time
		}{
			{"none", 6, &published[0]},
			{"some", 4, &published[2]},
			{"all", 0, nil},
		} {
			l := lagOf(t, c, "chat", tc.sub)
			if l.Pending != tc.pending || (l.OldestPending == nil) != (tc.oldest == nil) ||
				tc.oldest != nil && !l.OldestPending.Equal(*tc.oldest) {
				t.Errorf("lag of %s: %d pending, oldest %v; want %d, oldest %v", tc.sub, l.Pending, l.OldestPending, tc.pending, tc.oldest)
			}
		}
	})
}

// receiveLanes receives batches of sub of at most batchSize messages from
// every lane until it has want messages, and acks them, or with ack false
// releases them unacked. It returns the publish times of the messages, in
// order.
func receiveLanes(t *testing.T, c topicClient, topic, sub string, batchSize, want int, ack bool) []time.Time {
	t.Helper()
	ctx := context.Background()
	var got []*drover.ReceivedBatch
	waitfor.Cond(t, sub+" received", func() bool {
		b, err := c.Receive(ctx, drover.ReceiveParams{Topic: topic, Subscription: sub, Owner: sub, MaxBatches: 2, BatchSize: batchSize})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b...)
		n := 0
		for _, b := range got {
			n += len(b.Deliveries)
		}
		return n >= want
	})
	var published []time.Time
	acks, receipts := make([]drover.BatchAck, len(got)), make([]string, len(got))
	for i, b := range got {
		acks[i], receipts[i] = drover.BatchAck{Receipt: b.Receipt}, b.Receipt
		for _, d := range b.Deliveries {
			published = append(published, d.PublishedAt)
		}
	}
	slices.SortFunc(published, time.Time.Compare)
	if !ack {
		if ok, err := c.ReleaseBatches(ctx, topic, sub, receipts); err != nil || slices.Contains(ok, false) {
			t.Fatalf("release %s: %v, %v", sub, ok, err)
		}
		return published
	}
	if ok, err := c.AckBatches(ctx, topic, sub, acks); err != nil || slices.Contains(ok, false) {
		t.Fatalf("ack %s: %v, %v", sub, ok, err)
	}
	return published
}

// wantLags checks the pending count of each subscription of topic, and
// that the oldest pending message is reported when one is pending.
func wantLags(t *testing.T, c topicClient, topic string, pending map[string]int64) {
	t.Helper()
	for sub, n := range pending {
		l := lagOf(t, c, topic, sub)
		if l.Pending != n || (l.OldestPending != nil) != (n > 0) {
			t.Errorf("lag of %s: %d pending, oldest %v; want %d", sub, l.Pending, l.OldestPending, n)
		}
	}
}

// TestTopicLagAfterRetention reads the lag of subscriptions at several
// cursors after retention dropped the generation their cursors stand in:
// a cursor whose message is gone counts the lane's kept messages past it,
// and the messages published after the drop count once each.
func TestTopicLagAfterRetention(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		d, c := briefTopicSetup(t, s, "none", "some", "all")
		te := d.Executor().(droverdriver.TopicExecutor)
		keys := laneKeys(2)
		publish := func(n int) {
			t.Helper()
			for i := range n {
				if _, err := c.Publish(ctx, "brief", drover.Message{Key: keys[i%2], Payload: []byte(strconv.Itoa(i))}); err != nil {
					t.Fatal(err)
				}
			}
		}
		publish(6)
		receiveLanes(t, c, "brief", "some", 1, 2, true)
		receiveLanes(t, c, "brief", "all", 10, 6, true)
		wantLags(t, c, "brief", map[string]int64{"none": 6, "some": 4, "all": 0})
		r := &maintenance.TopicRetainer{Exec: te, MaxMessages: 1}
		first := generations(t, te)[0]
		waitfor.Cond(t, "the generation past retention dropped", func() bool {
			_, _, err := r.RunOnce(ctx)
			return err == nil && generations(t, te)[0] != first
		})
		wantLags(t, c, "brief", map[string]int64{"none": 0, "some": 0, "all": 0})
		publish(8)
		wantLags(t, c, "brief", map[string]int64{"none": 8, "some": 8, "all": 8})
		receiveLanes(t, c, "brief", "some", 1, 2, true)
		wantLags(t, c, "brief", map[string]int64{"none": 8, "some": 6, "all": 8})
		receiveLanes(t, c, "brief", "all", 10, 8, true)
		wantLags(t, c, "brief", map[string]int64{"none": 8, "some": 6, "all": 0})
		if l := lagOf(t, c, "brief", "none"); l.Dropped != 6 {
			t.Errorf("none dropped %d, want 6", l.Dropped)
		}
	})
}

// TestTopicReceiveAndAck is the remote consumer's path (the HTTP API's
// receive and ack): a batch received with a receipt, acknowledged with one
// failed message, which becomes a retry job; the same receipt a second
// time is rejected, and so is a receipt whose lease another consumer took
// over.
func TestTopicReceiveAndAck(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		_, c := topicSetup(t, s, 1, "remote")
		ids, err := c.Publish(ctx, "chat", drover.Message{Key: "a", Payload: []byte("1")}, drover.Message{Key: "a", Payload: []byte("2")})
		if err != nil {
			t.Fatal(err)
		}
		var batches []*drover.ReceivedBatch
		waitfor.Cond(t, "a batch received", func() bool {
			batches, err = c.Receive(ctx, drover.ReceiveParams{Topic: "chat", Subscription: "remote", Owner: "http-1", BatchSize: 10})
			if err != nil {
				t.Fatal(err)
			}
			return len(batches) > 0
		})
		if len(batches) != 1 || len(batches[0].Deliveries) != 2 || batches[0].Deliveries[0].ID != ids[0] {
			t.Fatalf("received %+v, want one batch of both messages", batches)
		}
		again, err := c.Receive(ctx, drover.ReceiveParams{Topic: "chat", Subscription: "remote", Owner: "http-2"})
		if err != nil || len(again) != 0 {
			t.Fatalf("a second consumer received %v (%v) while the lane is leased", again, err)
		}
		ok, err := c.AckBatches(ctx, "chat", "remote", []drover.BatchAck{{Receipt: batches[0].Receipt, Failed: map[int64]string{ids[1]: "boom"}}})
		if err != nil || !slices.Equal(ok, []bool{true}) {
			t.Fatalf("ack: %v, %v", ok, err)
		}
		ok, err = c.AckBatches(ctx, "chat", "remote", []drover.BatchAck{{Receipt: batches[0].Receipt}})
		if err != nil || !slices.Equal(ok, []bool{false}) {
			t.Fatalf("second ack of one receipt: %v, %v; want rejected", ok, err)
		}
		n, err := c.JobCountByState(ctx, drover.RetryQueue("chat"))
		if err != nil {
			t.Fatal(err)
		}
		if n[drovertype.JobStateAvailable]+n[drovertype.JobStateScheduled] != 1 {
			t.Fatalf("retry queue %v, want the failed message as one job", n)
		}
		if l := lagOf(t, c, "chat", "remote"); l.Pending != 0 {
			t.Fatalf("lag %+v after the ack", l)
		}
	})
}

// TestTopicLagAfterOrdinalBackfill stores messages the way a store at
// migration 028 did, with no ordinals, then migrates: the migration gives
// them their lanes' ordinals, so that the lag of a store upgraded with a
// backlog counts it, at several cursors, and the messages published after
// the upgrade follow them in each lane.
func TestTopicLagAfterOrdinalBackfill(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		// A topic of two lanes and its messages, stored as migration 028's
		// drivers stored them (whose statements a driver of this version
		// cannot prepare on that schema).
		var (
			d       droverdriver.Driver
			create  func()
			publish func(lanes []int)
		)
		switch s.name {
		case "postgres":
			pd, err := droverpg.New(testdb.NewPool(t), droverpg.WithSchema(testdb.NewSchema(t)))
			if err != nil {
				t.Fatal(err)
			}
			schema := pgx.Identifier{pd.Schema()}.Sanitize()
			d = pd
			create = func() {
				if _, err := pd.Pool().Exec(ctx, `INSERT INTO `+schema+`.topics (name, lanes, retention_ms) VALUES ('chat', 2, 0)`); err != nil {
					t.Fatal(err)
				}
			}
			publish = func(lanes []int) {
				for _, lane := range lanes {
					if _, err := pd.Pool().Exec(ctx, `INSERT INTO `+schema+`.topic_messages (topic, lane, payload) VALUES ('chat', $1, '\x00')`, lane); err != nil {
						t.Fatal(err)
					}
				}
				// Migration 028's sequencing pass gives them positions.
				if _, err := pd.Pool().Exec(ctx, `SELECT `+schema+`.topic_sequence(1000)`); err != nil {
					t.Fatal(err)
				}
			}
		case "sqlite":
			sd, err := droversqlite.Open(ctx, filepath.Join(t.TempDir(), "drover.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { sd.Close() })
			d = sd
			create = func() {
				if _, err := sd.DB().ExecContext(ctx, `INSERT INTO `+sd.Schema()+`_topics (name, lanes, retention_ms, created_at)
					VALUES ('chat', 2, 0, ?)`, time.Now().UnixMicro()); err != nil {
					t.Fatal(err)
				}
			}
			publish = func(lanes []int) {
				for _, lane := range lanes {
					if _, err := sd.DB().ExecContext(ctx, `INSERT INTO `+sd.Schema()+`_topic_messages (topic, lane, payload, created_at)
						VALUES ('chat', ?, x'00', ?)`, lane, time.Now().UnixMicro()); err != nil {
						t.Fatal(err)
					}
				}
			}
		default:
			t.Skip("a fleet's shards are PostgreSQL stores, each migrated as the postgres case")
		}
		const before = 28 // the last migration without ordinals
		if _, _, err := droverdriver.MigrateUpTo(ctx, d, before); err != nil {
			t.Fatal(err)
		}
		create()
		publish([]int{0, 1, 0, 1, 0, 1, 0}) // 4 messages in lane 0, 3 in lane 1
		migrate(t, d)
		c := s.newClient(t, d, &drover.Config{}).(topicClient)
		for _, sub := range []string{"none", "some", "all"} {
			if _, err := c.CreateSubscription(ctx, "chat", sub, &drover.SubscriptionOpts{FromEarliest: true}); err != nil {
				t.Fatal(err)
			}
		}
		wantLags(t, c, "chat", map[string]int64{"none": 7, "some": 7, "all": 7})
		receiveLanes(t, c, "chat", "some", 1, 2, true) // the first message of each lane
		receiveLanes(t, c, "chat", "all", 10, 7, true)
		wantLags(t, c, "chat", map[string]int64{"none": 7, "some": 5, "all": 0})
		keys := laneKeys(2)
		for i := range 3 {
			if _, err := c.Publish(ctx, "chat", drover.Message{Key: keys[i%2], Payload: []byte(strconv.Itoa(i))}); err != nil {
				t.Fatal(err)
			}
		}
		wantLags(t, c, "chat", map[string]int64{"none": 10, "some": 8, "all": 3})
	})
}
