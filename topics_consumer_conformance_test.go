package drover_test

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverfleet"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/engine"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// The topic consumer under broken and hostile consumers (issue 33): stale
// and forged acknowledgements, consumers that lose their lanes while
// paused, messages that kill their consumers, and consumers that take more
// than their share.

// topicHooks lets a test act inside a client's topic statements: count
// the reads, and run something after an ack returns (a consumer paused
// there, as by SIGSTOP, while the test moves the store on).
type topicHooks struct {
	reads, extends atomic.Int64
	mu             sync.Mutex
	afterAck       func(p droverdriver.TopicAckParams, acked []droverdriver.AckedLane)
}

func (h *topicHooks) acked(p droverdriver.TopicAckParams, acked []droverdriver.AckedLane) {
	h.mu.Lock()
	fn := h.afterAck
	h.mu.Unlock()
	if fn != nil {
		fn(p, acked)
	}
}

// hooked is a store's driver whose executor sends TopicAck, TopicRead and
// TopicExtend through the hooks.
type hooked[TTx any] struct {
	droverdriver.TxDriver[TTx]
	h *topicHooks
}

func (d hooked[TTx]) Executor() droverdriver.Executor {
	ex := d.TxDriver.Executor()
	return hookedExec{Executor: ex, TopicExecutor: ex.(droverdriver.TopicExecutor),
		PeriodicExecutor: ex.(droverdriver.PeriodicExecutor), RefusalReporter: ex.(droverdriver.RefusalReporter),
		UnavailableReporter: ex.(droverdriver.UnavailableReporter), h: d.h}
}

// hookedExec is a driver's executor, with every optional interface the
// bundled drivers implement, and the hooks in three topic statements.
type hookedExec struct {
	droverdriver.Executor
	droverdriver.TopicExecutor
	droverdriver.PeriodicExecutor
	droverdriver.RefusalReporter
	droverdriver.UnavailableReporter
	h *topicHooks
}

func (e hookedExec) TopicAck(ctx context.Context, p droverdriver.TopicAckParams) ([]droverdriver.AckedLane, error) {
	out, err := e.TopicExecutor.TopicAck(ctx, p)
	e.h.acked(p, out)
	return out, err
}

func (e hookedExec) TopicRead(ctx context.Context, p droverdriver.TopicReadParams) ([]*droverdriver.MessageRow, error) {
	e.h.reads.Add(1)
	return e.TopicExecutor.TopicRead(ctx, p)
}

func (e hookedExec) TopicExtend(ctx context.Context, p droverdriver.TopicExtendParams) ([]int, error) {
	e.h.extends.Add(1)
	return e.TopicExecutor.TopicExtend(ctx, p)
}

// hookedClient makes a client on d whose topic statements go through h.
func hookedClient(t *testing.T, d droverdriver.Driver, h *topicHooks, cfg *drover.Config) topicClient {
	t.Helper()
	var c topicClient
	var err error
	switch d := d.(type) {
	case *droverpg.Driver:
		c, err = drover.NewClient[pgx.Tx](hooked[pgx.Tx]{d, h}, cfg)
	case *droversqlite.Driver:
		c, err = drover.NewClient[*sql.Tx](hooked[*sql.Tx]{d, h}, cfg)
	case *droverfleet.Driver[pgx.Tx]:
		c, err = drover.NewClient[pgx.Tx](hooked[pgx.Tx]{d, h}, cfg)
	default:
		t.Fatalf("no hooked driver for %T", d)
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// receiveOne receives from sub of "chat" as owner until it gets a batch:
// after a lease the test let expire, or once a publish is readable.
func receiveOne(t *testing.T, c topicClient, sub, owner string, p drover.ReceiveParams) *drover.ReceivedBatch {
	t.Helper()
	p.Topic, p.Subscription, p.Owner = "chat", sub, owner
	var got []*drover.ReceivedBatch
	waitfor.Cond(t, owner+" received a batch of "+sub, func() bool {
		var err error
		if got, err = c.Receive(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		return len(got) > 0
	})
	return got[0]
}

// ids returns the IDs of deliveries, and their attempts.
func ids(ds []*drover.Delivery) ([]int64, []int) {
	var out []int64
	var attempts []int
	for _, d := range ds {
		out, attempts = append(out, d.ID), append(attempts, d.Attempt)
	}
	return out, attempts
}

// retryJobs returns the jobs of the chat topic's retry queue by message
// ID.
func retryJobs(t *testing.T, c client) map[int64]*drovertype.JobRow {
	t.Helper()
	jobs, err := c.JobList(context.Background(), drover.JobListParams{Queue: drover.RetryQueue("chat"), Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]*drovertype.JobRow{}
	for _, j := range jobs {
		var args struct{ ID int64 }
		if err := json.Unmarshal(j.EncodedArgs, &args); err != nil {
			t.Fatal(err)
		}
		out[args.ID] = j
	}
	return out
}

// TestTopicAckSameLaneFreshAndStale acks, in one call, the current batch
// of a lane with message 2 failed and a stale batch of the same lane (its
// lease expired) with message 1 failed: the current one is accepted and
// only message 2 becomes a retry job, on both stores (SQLite mapped the
// fence's answers back by lane, so that the stale ack took the current
// one's place: [false true], and message 2 was lost for the subscription).
func TestTopicAckSameLaneFreshAndStale(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		_, c := topicSetup(t, s, 1, "sub")
		msgs, err := c.Publish(ctx, "chat", drover.Message{Payload: []byte("1")}, drover.Message{Payload: []byte("2")})
		if err != nil {
			t.Fatal(err)
		}
		stale := receiveOne(t, c, "sub", "stale", drover.ReceiveParams{Lease: 50 * time.Millisecond, BatchSize: 10})
		if got, _ := ids(stale.Deliveries); !slices.Equal(got, msgs) {
			t.Fatalf("first batch %v, want %v", got, msgs)
		}
		// The lease expired: the lane delivers its batch again, one
		// message at a time.
		first := receiveOne(t, c, "sub", "fresh", drover.ReceiveParams{BatchSize: 10})
		if got, attempts := ids(first.Deliveries); !slices.Equal(got, msgs[:1]) || !slices.Equal(attempts, []int{2}) {
			t.Fatalf("batch after the expiry %v at attempts %v, want message %d alone at attempt 2", got, attempts, msgs[0])
		}
		if ok, err := c.AckBatches(ctx, "chat", "sub", []drover.BatchAck{{Receipt: first.Receipt}}); err != nil || !slices.Equal(ok, []bool{true}) {
			t.Fatalf("ack: %v, %v", ok, err)
		}
		fresh := receiveOne(t, c, "sub", "fresh", drover.ReceiveParams{BatchSize: 10})
		if got, attempts := ids(fresh.Deliveries); !slices.Equal(got, msgs[1:]) || !slices.Equal(attempts, []int{2}) {
			t.Fatalf("next batch %v at attempts %v, want message %d at attempt 2", got, attempts, msgs[1])
		}
		ok, err := c.AckBatches(ctx, "chat", "sub", []drover.BatchAck{
			{Receipt: fresh.Receipt, Failed: map[int64]string{msgs[1]: "fresh failure"}},
			{Receipt: stale.Receipt, Failed: map[int64]string{msgs[0]: "stale failure"}},
		})
		if err != nil || !slices.Equal(ok, []bool{true, false}) {
			t.Fatalf("AckBatches([fresh, stale]) = %v, %v; want [true false]", ok, err)
		}
		jobs := retryJobs(t, c)
		if len(jobs) != 1 || jobs[msgs[1]] == nil {
			t.Fatalf("retry jobs of messages %v, want message %d's alone", slices.Collect(mapsKeys(jobs)), msgs[1])
		}
		if l := lagOf(t, c, "chat", "sub"); l.Pending != 0 {
			t.Fatalf("lag %+v, want the lane past both messages", l)
		}
	})
}

// mapsKeys returns the keys of m.
func mapsKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestTopicForgedReceiptReadsNothing acks with a receipt made up by the
// consumer, with a genuine receipt whose range (u), start (f), count (n)
// or max attempts (m) it edited, and with a genuine receipt of another
// subscription: each fails the whole call, and nothing is read or written
// (the forged receipt made the server read whole lanes before the
// fence looked at its token).
func TestTopicForgedReceiptReadsNothing(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		d := s.open(t)
		hooks := &topicHooks{}
		c := hookedClient(t, d, hooks, &drover.Config{})
		if _, err := c.CreateTopic(ctx, "chat", &drover.TopicOpts{Lanes: 1}); err != nil {
			t.Fatal(err)
		}
		for _, sub := range []string{"sub", "other"} {
			if _, err := c.CreateSubscription(ctx, "chat", sub, &drover.SubscriptionOpts{FromEarliest: true}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.Publish(ctx, "chat", drover.Message{Payload: []byte("1")}, drover.Message{Payload: []byte("2")}); err != nil {
			t.Fatal(err)
		}
		genuine := receiveOne(t, c, "sub", "w", drover.ReceiveParams{BatchSize: 1})
		other := receiveOne(t, c, "other", "w", drover.ReceiveParams{BatchSize: 10})
		// edit returns the genuine receipt with one field of its JSON
		// replaced and its authentication kept.
		payload, mac, _ := strings.Cut(genuine.Receipt, ".")
		raw, err := base64.RawURLEncoding.DecodeString(payload)
		if err != nil {
			t.Fatalf("receipt %q: %v", genuine.Receipt, err)
		}
		edit := func(key string, v any) string {
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			m[key] = v
			b, _ := json.Marshal(m)
			return base64.RawURLEncoding.EncodeToString(b) + "." + mac
		}
		forged, _ := json.Marshal(map[string]any{"t": "chat", "s": "sub", "l": 0, "k": strings.Repeat("0", 32),
			"f": map[string]int64{"Xid": 0, "ID": 0}, "u": map[string]int64{"Xid": 1<<63 - 1, "ID": 1<<63 - 1}, "n": 2_000_000_000})
		reads := hooks.reads.Load()
		for name, receipt := range map[string]string{
			"forged":                  base64.RawURLEncoding.EncodeToString(forged),
			"forged with a mac":       base64.RawURLEncoding.EncodeToString(forged) + "." + mac,
			"u edited":                edit("u", map[string]int64{"Xid": 1<<63 - 1, "ID": 1<<63 - 1}),
			"f edited":                edit("f", map[string]int64{"Xid": 0, "ID": 0}),
			"n edited":                edit("n", 2_000_000_000),
			"m edited":                edit("m", 1_000_000),
			"of another subscription": other.Receipt,
		} {
			_, err := c.AckBatches(ctx, "chat", "sub", []drover.BatchAck{{Receipt: genuine.Receipt}, {Receipt: receipt, FailAll: "nack"}})
			if !errors.Is(err, drover.ErrInvalid) || !strings.Contains(err.Error(), "ack 2 of 2") {
				t.Fatalf("%s receipt: %v; want ErrInvalid naming ack 2", name, err)
			}
		}
		if n := hooks.reads.Load() - reads; n != 0 {
			t.Fatalf("%d reads for refused receipts, want none", n)
		}
		if jobs := retryJobs(t, c); len(jobs) != 0 {
			t.Fatalf("refused receipts made retry jobs %v", jobs)
		}
		// Nothing moved: the genuine receipt is still good.
		if ok, err := c.AckBatches(ctx, "chat", "sub", []drover.BatchAck{{Receipt: genuine.Receipt}}); err != nil || !slices.Equal(ok, []bool{true}) {
			t.Fatalf("the genuine ack after the refused ones: %v, %v", ok, err)
		}
		if l := lagOf(t, c, "chat", "sub"); l.Pending != 1 {
			t.Fatalf("lag of sub %+v, want message 2 pending (the ack covered message 1 alone)", l)
		}
	})
}

// TestTopicLostLaneStopsHandler takes a lane away from a consumer whose
// handler still runs (its lease expired, as when the process was paused,
// another consumer leased the lane and acked ahead): the handler's context
// is cancelled with ErrLaneLost, and its outcome is dropped (no retry job
// for the messages it was handling), as jobs cancel a lost attempt.
func TestTopicLostLaneStopsHandler(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		d, c := topicSetup(t, s, 1, "sub")
		started := make(chan []int64, 1)
		// proceed holds the cancelled handler until the other consumer
		// has read the lane: returned at once, it would free a's only
		// slot and a would lease the released lane again first.
		proceed := make(chan struct{})
		var cause atomic.Value
		handler := func(ctx context.Context, batch []*drover.Delivery) error {
			got, _ := ids(batch)
			select {
			case started <- got:
			default:
			}
			<-ctx.Done()
			cause.Store(context.Cause(ctx))
			<-proceed
			return ctx.Err()
		}
		a := s.newClient(t, d, &drover.Config{Subscriptions: []*drover.Subscription{drover.Subscribe("chat", "sub", handler, 1, 10)},
			LeaseDuration: 300 * time.Millisecond, StopTimeout: time.Second})
		if err := a.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.Stop(context.Background()) })
		msgs, err := c.Publish(ctx, "chat", drover.Message{Payload: []byte("1")}, drover.Message{Payload: []byte("2")})
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		waitfor.Cond(t, "a's handler started", func() bool {
			select {
			case got = <-started:
				return true
			default:
				return false
			}
		})
		if !slices.Equal(got, msgs) {
			t.Fatalf("a handles %v, want %v", got, msgs)
		}
		// The lease ends under the running handler, another consumer takes
		// the lane and acks both messages.
		if held, err := c.ReleaseLane(ctx, "chat", "sub", 0); err != nil || !held {
			t.Fatalf("release of a's lane: %v, %v", held, err)
		}
		got = drain(t, d, "sub")
		close(proceed)
		if !slices.Equal(got, msgs) {
			t.Fatalf("the other consumer read %v, want %v", got, msgs)
		}
		waitfor.Cond(t, "a's handler stopped with ErrLaneLost", func() bool {
			err, _ := cause.Load().(error)
			return errors.Is(err, drover.ErrLaneLost)
		})
		if err := a.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if jobs := retryJobs(t, c); len(jobs) != 0 {
			t.Fatalf("the lost batch's outcome made retry jobs %v", jobs)
		}
		if l := lagOf(t, c, "chat", "sub"); l.Pending != 0 {
			t.Fatalf("lag %+v", l)
		}
	})
}

// TestTopicPausedConsumerSkipsLostKeptLane pauses a consumer right after
// an ack that kept its lane (a full batch: the next read takes the lane
// again without a lease) until the lease has expired, another consumer has
// leased the lane and acked past the messages the paused one would read
// next. Resumed, the paused consumer must not deliver them: it handled
// messages behind another consumer's ack, a key's order run backwards,
// when it read kept lanes without a lease check.
func TestTopicPausedConsumerSkipsLostKeptLane(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		d, c := topicSetup(t, s, 1, "sub")
		msgs, err := c.Publish(ctx, "chat", drover.Message{Key: "k", Payload: []byte("1")}, drover.Message{Key: "k", Payload: []byte("2")},
			drover.Message{Key: "k", Payload: []byte("3")}, drover.Message{Key: "k", Payload: []byte("4")})
		if err != nil {
			t.Fatal(err)
		}
		led := newLedger()
		hooks := &topicHooks{}
		paused, resume := make(chan struct{}), make(chan struct{})
		var once sync.Once
		hooks.afterAck = func(p droverdriver.TopicAckParams, acked []droverdriver.AckedLane) {
			if len(acked) == 1 && acked[0].Kept {
				once.Do(func() {
					close(paused)
					<-resume
				})
			}
		}
		a := hookedClient(t, d, hooks, &drover.Config{Subscriptions: []*drover.Subscription{drover.Subscribe("chat", "sub", led.handler, 1, 2)},
			LeaseDuration: 200 * time.Millisecond})
		if err := a.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.Stop(context.Background()) })
		<-paused
		// The kept lane's lease runs out while the consumer is paused;
		// another consumer takes the lane and acks the rest.
		var rest []int64
		waitfor.Cond(t, "the kept lane leased by another consumer", func() bool {
			rest = drain(t, d, "sub")
			return len(rest) > 0
		})
		if !slices.Equal(rest, msgs[2:]) {
			t.Fatalf("the other consumer read %v, want %v", rest, msgs[2:])
		}
		// Resumed, the consumer's next statement takes up its kept lane:
		// a read of it, or an extend that finds it lost. Once the lane is
		// at its head, nothing later can deliver the messages again.
		before := hooks.reads.Load() + hooks.extends.Load()
		close(resume)
		waitfor.Cond(t, "the consumer resumed with its kept lane", func() bool { return hooks.reads.Load()+hooks.extends.Load() > before })
		if err := a.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if got := led.ids("sub"); !slices.Equal(got, msgs[:2]) {
			t.Fatalf("the paused consumer delivered %v, want %v: messages %v were acked by another consumer meanwhile", got, msgs[:2], msgs[2:])
		}
	})
}

// TestTopicPoisonMessageGoesDead publishes a message that kills every
// consumer that receives it, between two good ones: each delivery's lease
// expires without an ack. The lane delivers its batch again one message at
// a time, counting every delivery (Delivery.Attempt); the poison message
// goes dead after the subscription's max attempts, a discarded job of the
// retry queue that a retry brings back, and the lane moves on to the
// messages behind it (it stalled on the poison message for good).
func TestTopicPoisonMessageGoesDead(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		_, c := topicSetup(t, s, 1)
		if _, err := c.CreateSubscription(ctx, "chat", "sub", &drover.SubscriptionOpts{FromEarliest: true, MaxAttempts: 3}); err != nil {
			t.Fatal(err)
		}
		msgs, err := c.Publish(ctx, "chat", drover.Message{Payload: []byte("good")}, drover.Message{Payload: []byte("poison")},
			drover.Message{Payload: []byte("after")})
		if err != nil {
			t.Fatal(err)
		}
		attempts := map[int64][]int{}
		for n := 0; lagOf(t, c, "chat", "sub").Pending > 0; n++ {
			if n == 20 {
				t.Fatalf("still delivering after 20 batches: attempts %v", attempts)
			}
			b := receiveOne(t, c, "sub", "w", drover.ReceiveParams{BatchSize: 10, Lease: 50 * time.Millisecond})
			poisoned := false
			for _, d := range b.Deliveries {
				attempts[d.ID] = append(attempts[d.ID], d.Attempt)
				poisoned = poisoned || string(d.Payload) == "poison"
			}
			if poisoned {
				continue // the consumer dies: its lease expires
			}
			if ok, err := c.AckBatches(ctx, "chat", "sub", []drover.BatchAck{{Receipt: b.Receipt}}); err != nil || !ok[0] {
				t.Fatalf("ack: %v, %v", ok, err)
			}
		}
		// The first batch held all three; after its lease expired, each
		// came alone.
		want := map[int64][]int{msgs[0]: {1, 2}, msgs[1]: {1, 2, 3}, msgs[2]: {1, 2}}
		for id, w := range want {
			if !slices.Equal(attempts[id], w) {
				t.Fatalf("message %d delivered at attempts %v, want %v (all: %v)", id, attempts[id], w, attempts)
			}
		}
		jobs := retryJobs(t, c)
		dead := jobs[msgs[1]]
		if len(jobs) != 1 || dead == nil || dead.State != drovertype.JobStateDiscarded || !strings.Contains(string(dead.Metadata), "dead") {
			t.Fatalf("retry jobs %v, want the poison message's, discarded as dead", jobs)
		}
		retried, err := c.JobRetry(ctx, dead.ID)
		if err != nil || retried.State != drovertype.JobStateAvailable {
			t.Fatalf("retry of the dead message: %+v, %v; want available", retried, err)
		}
		// A message published now is a first delivery again.
		more, err := c.Publish(ctx, "chat", drover.Message{Payload: []byte("later")})
		if err != nil {
			t.Fatal(err)
		}
		b := receiveOne(t, c, "sub", "w", drover.ReceiveParams{})
		if got, att := ids(b.Deliveries); !slices.Equal(got, more) || !slices.Equal(att, []int{1}) {
			t.Fatalf("next batch %v at attempts %v, want %v at attempt 1", got, att, more)
		}
	})
}

// TestTopicRedeliveryCountsExpiredLease lets a consumer that leased a
// batch die: a client's consumer delivers it again with Delivery.Attempt 2,
// one message at a time, and the retry job of a message that then fails
// carries the count on (its first run is the message's third delivery).
func TestTopicRedeliveryCountsExpiredLease(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		d, c := topicSetup(t, s, 1)
		if _, err := c.CreateSubscription(ctx, "chat", "sub", &drover.SubscriptionOpts{FromEarliest: true, MaxAttempts: 4}); err != nil {
			t.Fatal(err)
		}
		msgs, err := c.Publish(ctx, "chat", drover.Message{Payload: []byte("a")}, drover.Message{Payload: []byte("b")})
		if err != nil {
			t.Fatal(err)
		}
		receiveOne(t, c, "sub", "dead", drover.ReceiveParams{Lease: 50 * time.Millisecond, BatchSize: 10})
		var mu sync.Mutex
		var batches [][]int64
		attempts := map[int64][]int{}
		handler := func(ctx context.Context, batch []*drover.Delivery) error {
			mu.Lock()
			defer mu.Unlock()
			got, att := ids(batch)
			batches = append(batches, got)
			for i, id := range got {
				attempts[id] = append(attempts[id], att[i])
			}
			if id := batch[0].ID; id == msgs[1] && len(attempts[id]) == 1 {
				return errors.New("fails once")
			}
			return nil
		}
		cl := s.newClient(t, d, &drover.Config{Subscriptions: []*drover.Subscription{drover.Subscribe("chat", "sub", handler, 1, 10)},
			RetryPolicy: func(int) time.Duration { return 0 }})
		if err := cl.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cl.Stop(context.Background()) })
		waitfor.Cond(t, "b retried once", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(attempts[msgs[1]]) == 2
		})
		mu.Lock()
		defer mu.Unlock()
		if len(batches) < 2 || !slices.Equal(batches[0], msgs[:1]) || !slices.Equal(batches[1], msgs[1:]) {
			t.Fatalf("batches %v, want each message alone after the expired lease", batches)
		}
		if !slices.Equal(attempts[msgs[0]], []int{2}) || !slices.Equal(attempts[msgs[1]], []int{2, 3}) {
			t.Fatalf("attempts %v, want a at 2; b at 2, then 3 as a retry job", attempts)
		}
	})
}

// TestTopicFairShare has two remote consumers compete for four lanes with
// messages: one asking for every lane while the other holds one gets its
// share (2), not all three left; and one that took every lane, while the
// other found none and waits, gets half of them at its next receive.
func TestTopicFairShare(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		_, c := topicSetup(t, s, 4, "sub")
		publishAll := func(per int) {
			t.Helper()
			var msgs []drover.Message
			for lane := range 4 {
				for range per {
					// Keys that land on each of the four lanes.
					msgs = append(msgs, drover.Message{Key: laneKeys(4)[lane], Payload: []byte("m")})
				}
			}
			if _, err := c.Publish(ctx, "chat", msgs...); err != nil {
				t.Fatal(err)
			}
		}
		receive := func(owner string, maxBatches int) []*drover.ReceivedBatch {
			t.Helper()
			b, err := c.Receive(ctx, drover.ReceiveParams{Topic: "chat", Subscription: "sub", Owner: owner, MaxBatches: maxBatches, BatchSize: 1})
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		ack := func(batches ...*drover.ReceivedBatch) {
			t.Helper()
			for _, b := range batches {
				if ok, err := c.AckBatches(ctx, "chat", "sub", []drover.BatchAck{{Receipt: b.Receipt}}); err != nil || !ok[0] {
					t.Fatalf("ack: %v, %v", ok, err)
				}
			}
		}
		publishAll(2)
		var b []*drover.ReceivedBatch
		waitfor.Cond(t, "b holds a lane", func() bool {
			b = receive("b", 1)
			return len(b) == 1
		})
		a := receive("a", 4)
		if len(a) != 2 {
			t.Fatalf("a received %d batches while b holds a lane, want its share of 2 (4 lanes, 2 consumers)", len(a))
		}
		ack(append(a, b...)...)
		// Alone, a takes every lane; b, finding none, waits.
		if a = receive("a", 4); len(a) != 4 {
			t.Fatalf("a alone received %d batches, want all 4", len(a))
		}
		if b = receive("b", 4); len(b) != 0 {
			t.Fatalf("b received %d batches with every lane held", len(b))
		}
		ack(a...)
		publishAll(1)
		waitfor.Cond(t, "a holds lanes again", func() bool {
			a = receive("a", 4)
			return len(a) > 0
		})
		if len(a) != 2 {
			t.Fatalf("a received %d batches while b waits, want its share of 2", len(a))
		}
		if b = receive("b", 4); len(b) != 2 {
			t.Fatalf("b received %d batches, want the other 2", len(b))
		}
	})
}

// TestTopicExtendAndRelease extends a received batch's lease, and releases
// batches: a released batch is delivered again at once, and its delivery
// is not counted. A batch whose lane was lost answers false to both.
func TestTopicExtendAndRelease(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		_, c := topicSetup(t, s, 1, "sub")
		msgs, err := c.Publish(ctx, "chat", drover.Message{Payload: []byte("1")})
		if err != nil {
			t.Fatal(err)
		}
		first := receiveOne(t, c, "sub", "w", drover.ReceiveParams{Lease: time.Second})
		lanes, err := c.SubscriptionLanes(ctx, "chat", "sub")
		if err != nil || lanes[0].Holder != "w" || lanes[0].LeaseExpiresAt == nil {
			t.Fatalf("lanes %+v, %v; want lane 0 held by w", lanes, err)
		}
		until := *lanes[0].LeaseExpiresAt
		if ok, err := c.ExtendBatches(ctx, "chat", "sub", []string{first.Receipt}, time.Minute); err != nil || !slices.Equal(ok, []bool{true}) {
			t.Fatalf("extend: %v, %v", ok, err)
		}
		lanes, err = c.SubscriptionLanes(ctx, "chat", "sub")
		if err != nil || lanes[0].LeaseExpiresAt == nil || lanes[0].LeaseExpiresAt.Sub(until) < 30*time.Second {
			t.Fatalf("lease until %v after the extend, was %v: want about a minute from now", lanes, until)
		}
		if _, err := c.ExtendBatches(ctx, "chat", "sub", []string{first.Receipt}, time.Hour); !errors.Is(err, drover.ErrInvalid) {
			t.Fatalf("extend by an hour: %v, want ErrInvalid (at most %s)", err, drover.MaxReceiveLease)
		}
		if ok, err := c.ReleaseBatches(ctx, "chat", "sub", []string{first.Receipt}); err != nil || !slices.Equal(ok, []bool{true}) {
			t.Fatalf("release: %v, %v", ok, err)
		}
		again := receiveOne(t, c, "sub", "v", drover.ReceiveParams{})
		if got, att := ids(again.Deliveries); !slices.Equal(got, msgs) || !slices.Equal(att, []int{1}) {
			t.Fatalf("after the release: %v at attempts %v, want %v at attempt 1 (a release counts no delivery)", got, att, msgs)
		}
		// The first receipt's lane is v's now.
		if ok, err := c.ExtendBatches(ctx, "chat", "sub", []string{first.Receipt}, 0); err != nil || !slices.Equal(ok, []bool{false}) {
			t.Fatalf("extend of a lost batch: %v, %v; want false", ok, err)
		}
		if ok, err := c.ReleaseBatches(ctx, "chat", "sub", []string{first.Receipt, again.Receipt}); err != nil || !slices.Equal(ok, []bool{false, true}) {
			t.Fatalf("release of a lost and a held batch: %v, %v; want [false true]", ok, err)
		}
		if _, err := c.Receive(ctx, drover.ReceiveParams{Topic: "chat", Subscription: "sub", Owner: "w", Lease: 6 * time.Minute}); !errors.Is(err, drover.ErrInvalid) {
			t.Fatalf("receive with a lease of 6 minutes: %v, want ErrInvalid", err)
		}
	})
}

// TestTopicUnknownSubscription receives from, reads the lag of and the
// lanes of a topic or subscription that is not stored: each says so
// (ErrTopicNotFound, ErrSubscriptionNotFound) instead of answering
// nothing, which left a typo waiting forever.
func TestTopicUnknownSubscription(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		_, c := topicSetup(t, s, 1, "sub")
		if _, err := c.Receive(ctx, drover.ReceiveParams{Topic: "chat", Subscription: "typo", Owner: "w"}); !errors.Is(err, drover.ErrSubscriptionNotFound) {
			t.Fatalf("receive of a missing subscription: %v", err)
		}
		if _, err := c.Receive(ctx, drover.ReceiveParams{Topic: "none", Subscription: "sub", Owner: "w"}); !errors.Is(err, drover.ErrTopicNotFound) {
			t.Fatalf("receive of a missing topic: %v", err)
		}
		if _, err := c.SubscriptionLag(ctx, "none"); !errors.Is(err, drover.ErrTopicNotFound) {
			t.Fatalf("lag of a missing topic: %v", err)
		}
		if _, err := c.SubscriptionLanes(ctx, "chat", "typo"); !errors.Is(err, drover.ErrSubscriptionNotFound) {
			t.Fatalf("lanes of a missing subscription: %v", err)
		}
		if _, err := c.ReleaseLane(ctx, "chat", "sub", 1); !errors.Is(err, drover.ErrInvalid) {
			t.Fatalf("release of lane 1 of a topic of 1 lane: %v", err)
		}
		if _, err := c.CreateTopic(ctx, "empty", nil); err != nil {
			t.Fatal(err)
		}
		if lag, err := c.SubscriptionLag(ctx, "empty"); err != nil || len(lag) != 0 {
			t.Fatalf("lag of a topic without subscriptions: %v, %v", lag, err)
		}
	})
}

// laneKeys returns, for a topic of n lanes, a key that lands on each lane.
func laneKeys(n int) []string {
	out := make([]string, n)
	for i, found := 0, 0; found < n; i++ {
		k := "k" + strconv.Itoa(i)
		if l := engine.KeyLane(k, n); out[l] == "" {
			out[l] = k
			found++
		}
	}
	return out
}
