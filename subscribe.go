package drover

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/engine"
)

// SubscriptionHandler handles a batch of deliveries of one lane of a
// subscription, in order. Returning nil acknowledges every message;
// returning FailedMessages fails the messages it names and acknowledges
// the rest; any other error fails them all. A failed message is retried
// for this subscription alone, as a job of its topic's retry queue
// (RetryQueue),
// and is dead, a discarded job that `drover jobs retry` brings back, after
// the subscription's MaxAttempts.
type SubscriptionHandler func(ctx context.Context, batch []*Delivery) error

// FailedMessages is the error a SubscriptionHandler returns to fail some
// messages of its batch (by Delivery.ID) and acknowledge the others.
type FailedMessages map[int64]error

func (f FailedMessages) Error() string { return fmt.Sprintf("%d messages failed", len(f)) }

// Subscription makes a client consume a subscription (Config.Subscriptions).
// The subscription must be stored (Client.CreateSubscription); every client
// that lists it competes for its lanes.
type Subscription struct {
	Topic, Name string
	Handler     SubscriptionHandler
	// Consumers is how many batches of the subscription this client
	// handles at once (default 1; more than the topic's lanes gain
	// nothing). It also sizes the worker pool of the retry queue.
	Consumers int
	// BatchSize bounds the messages of one batch (default 100): with
	// Consumers, what a client holds undelivered at most.
	BatchSize int
}

// Subscribe returns the Subscription of handler for the stored subscription
// name of topic, for Config.Subscriptions.
func Subscribe(topic, name string, handler SubscriptionHandler, consumers, batchSize int) *Subscription {
	return &Subscription{Topic: topic, Name: name, Handler: handler, Consumers: consumers, BatchSize: batchSize}
}

// topicRetryArgs is a failed message in its subscription's retry queue.
type topicRetryArgs struct {
	Topic        string          `json:"topic"`
	Subscription string          `json:"subscription"`
	ID           int64           `json:"id"`
	Key          string          `json:"key,omitempty"`
	Payload      []byte          `json:"payload"`
	Metadata     json.RawMessage `json:"metadata,omitempty"`
	PublishedAt  time.Time       `json:"published_at"`
}

func (topicRetryArgs) Kind() string { return topicRetryKind }

// prepareSubscriptions validates cfg.Subscriptions and gives each one its
// retry queue and the worker that runs its retry jobs, in copies of the
// caller's Queues and Workers.
func (c *Client[TTx]) prepareSubscriptions() error {
	cfg := c.config
	if len(cfg.Subscriptions) == 0 {
		return nil
	}
	c.subs = map[string]*Subscription{}
	queues := maps.Clone(cfg.Queues)
	if queues == nil {
		queues = map[string]QueueConfig{}
	}
	for _, s := range cfg.Subscriptions {
		if err := ValidateTopic(s.Topic); err != nil {
			return fmt.Errorf("config: %w", err)
		}
		if err := ValidateSubscription(s.Name); err != nil {
			return fmt.Errorf("config: %w", err)
		}
		if s.Handler == nil {
			return invalidf("config: subscription %s/%s has no handler", s.Topic, s.Name)
		}
		sub := *s
		sub.Consumers = max(sub.Consumers, 1)
		if sub.BatchSize == 0 {
			sub.BatchSize = 100
		}
		if sub.BatchSize < 1 || sub.BatchSize > 10_000 {
			return invalidf("config: subscription %s/%s: BatchSize %d must be between 1 and 10000", s.Topic, s.Name, s.BatchSize)
		}
		key := s.Topic + "/" + s.Name
		if c.subs[key] != nil {
			return invalidf("config: subscription %s listed twice", key)
		}
		c.subs[key] = &sub
		q := queues[RetryQueue(s.Topic)]
		q.MaxWorkers = min(q.MaxWorkers+sub.Consumers, 100)
		queues[RetryQueue(s.Topic)] = q
	}
	workers := NewWorkers()
	if cfg.Workers != nil {
		maps.Copy(workers.byKind, cfg.Workers.byKind)
	}
	if err := AddWorkerSafely(workers, WorkFunc(c.workRetry)); err != nil {
		return fmt.Errorf("config: subscriptions: %w", err)
	}
	cfg.Queues, cfg.Workers = queues, workers
	return nil
}

// workRetry runs a failed message again through its subscription's handler,
// as a batch of one; the job machinery retries it with backoff and
// discards it after its attempts.
func (c *Client[TTx]) workRetry(ctx context.Context, job *Job[topicRetryArgs]) error {
	a := job.Args
	sub := c.subs[a.Topic+"/"+a.Subscription]
	if sub == nil {
		return fmt.Errorf("no handler for subscription %s/%s in client %s", a.Topic, a.Subscription, c.config.ID)
	}
	d := &Delivery{ID: a.ID, Topic: a.Topic, Subscription: a.Subscription, Key: a.Key, Payload: a.Payload,
		Metadata: a.Metadata, PublishedAt: a.PublishedAt, Attempt: job.Attempt + 1}
	err := safeHandle(ctx, sub.Handler, []*Delivery{d})
	var failed FailedMessages
	if errors.As(err, &failed) {
		if e, ok := failed[a.ID]; ok {
			return e
		}
		return nil
	}
	return err
}

// safeHandle runs a handler, turning a panic into an error.
func safeHandle(ctx context.Context, h SubscriptionHandler, batch []*Delivery) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("subscription handler panicked: %v", r)
		}
	}()
	return h(ctx, batch)
}

// newTopicConsumer makes the one consumer that serves every subscription of
// the client, or nil when it has none.
func (c *Client[TTx]) newTopicConsumer() (*topicConsumer, error) {
	if len(c.subs) == 0 {
		return nil, nil
	}
	te, err := c.topicExec(c.driver)
	if err != nil {
		return nil, err
	}
	tc := &topicConsumer{exec: te, owner: c.config.ID, lease: c.config.LeaseDuration, poll: c.config.PollInterval,
		logger: c.config.Logger, subs: map[droverdriver.SubscriptionRef]*Subscription{}, stopTimeout: c.config.StopTimeout,
		retryDelay: c.config.RetryPolicy, wake: make(chan struct{}, 1), metrics: c.metrics}
	for _, s := range c.subs {
		ref := droverdriver.SubscriptionRef{Topic: s.Topic, Name: s.Name}
		tc.subs[ref] = s
		tc.refs = append(tc.refs, ref)
		tc.capacity += s.Consumers
	}
	slices.SortFunc(tc.refs, func(a, b droverdriver.SubscriptionRef) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Name, b.Name))
	})
	tc.topicRefs = map[string][]droverdriver.SubscriptionRef{}
	for _, ref := range tc.refs {
		tc.topicRefs[ref.Topic] = append(tc.topicRefs[ref.Topic], ref)
	}
	return tc, nil
}

// startTopics starts the client's topic consumer; it stops when ctx ends.
func (c *Client[TTx]) startTopics(ctx context.Context, wg *sync.WaitGroup) error {
	if c.topics == nil {
		return nil
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.topics.run(ctx)
	}()
	return nil
}

// A consumer woken by a publish whose lease finds nothing looks again
// after topicRecheckMin, then after twice as long while it still finds
// nothing, up to topicRecheckMax (4 + 8 + 16 + 32 ms), and then waits for
// the next wake-up or its poll: on PostgreSQL a committed message becomes
// readable when a sequencing pass commits, and the lease's own pass gives
// way to one another consumer is running, which a wake-up may precede by
// a few milliseconds.
const (
	topicRecheckMin = 4 * time.Millisecond
	topicRecheckMax = 32 * time.Millisecond
)

// topicAckDelay is how long finished batches wait for the others still
// running before they are acked together: under a steady rate the batches
// of one fetch finish within a millisecond or two of each other, and
// acking each group as it came made several small write transactions per
// fetch (500 a second at 12,000 messages/s, each queueing for SQLite's
// single writer).
const topicAckDelay = 2 * time.Millisecond

// topicConsumer consumes every subscription a client serves, of any
// topics. One goroutine leases lanes (one statement for all of them),
// reads them (one statement, each distinct range once), starts one handler
// goroutine per lane's batch, and acks the batches that finished (one
// statement): three statements per cycle however many topics,
// subscriptions and lanes it covers, so that a client's cost in statements
// does not grow with them. It wakes when a publish to any topic is
// announced (droverdriver.TopicWake, through the client's listener), and
// polls at the client's PollInterval in case an announcement is lost.
type topicConsumer struct {
	exec        droverdriver.TopicExecutor
	owner       string
	lease, poll time.Duration
	stopTimeout time.Duration
	retryDelay  func(attempt int) time.Duration
	logger      *slog.Logger
	subs        map[droverdriver.SubscriptionRef]*Subscription
	refs        []droverdriver.SubscriptionRef
	// topicRefs are refs by topic, for leases of the topics woken.
	topicRefs map[string][]droverdriver.SubscriptionRef
	capacity  int
	wake      chan struct{}
	// woken names the topics announced since the last lease began; all
	// says that something not tied to a topic was (a wake-up of another
	// process's publish on SQLite, say). Wake writes them from the
	// listener's goroutine.
	wokenMu  sync.Mutex
	woken    map[string]bool
	wokenAll bool
	metrics  *clientMetrics
	// dropped is the Dropped count of each lane last reported, so that
	// a lag past retention is reported once per loss.
	dropped map[laneKey]int64
	// kept are lanes whose last batch was full and whose ack kept them
	// leased (LaneAck.Keep): the next fetch reads them again without a
	// lease statement. Under a backlog a consumer's cycle is then a read
	// and an ack, and leases only pick up lanes no one holds.
	kept []keptLane
	// news says that lanes may have become leasable since the last lease
	// began: a publish woke the consumer, the poll or a recheck came
	// due, or the last lease took all it was allowed to. Without news a
	// lease would find nothing, so a cycle reads kept lanes and acks
	// without one; a lease is still due once per poll interval, for
	// lanes freed by other consumers or by expired leases. newsAll says
	// that the news is not only wake-ups of some topics: the lease looks
	// at every subscription (leaseRefs).
	news, newsAll bool
	lastLease     time.Time
	// leasedTopics are the topics the last lease looked at (nil: all),
	// which its rechecks look at again.
	leasedTopics []string
	// leased is how many lanes the last fetch leased, -1 when it leased
	// none for want of news or room.
	leased int
}

// keptLane is a lane held on after its ack, at its new cursor.
type keptLane struct {
	lane  droverdriver.LeasedLane
	token droverdriver.LeaseToken
}

// laneKey names a lane of a subscription.
type laneKey struct {
	ref  droverdriver.SubscriptionRef
	lane int
}

// Wake makes the consumer look for messages of topic now, of every topic
// when topic is "". It never blocks.
func (tc *topicConsumer) Wake(topic string) {
	if topic != "" && tc.topicRefs[topic] == nil {
		return // a topic this client does not consume
	}
	tc.wakeTopics(topic)
	select {
	case tc.wake <- struct{}{}:
	default:
	}
}

// wakeTopics records that topics (all of them for "") may have news.
func (tc *topicConsumer) wakeTopics(topics ...string) {
	tc.wokenMu.Lock()
	defer tc.wokenMu.Unlock()
	for _, topic := range topics {
		if topic == "" {
			tc.wokenAll = true
			continue
		}
		if tc.woken == nil {
			tc.woken = map[string]bool{}
		}
		tc.woken[topic] = true
	}
}

// leaseRefs are the subscriptions the lease about to begin looks at, and
// their topics (nil for all): every subscription when news came from
// something not tied to a topic (the poll, a lease that took all it was
// allowed, a failure, a wake-up of any topic: all), else those of the
// topics woken since the last lease. A lease's cost grows with the lanes
// it looks at, and under a steady rate each lease follows a publish or two
// of one topic. The record of wake-ups starts again.
func (tc *topicConsumer) leaseRefs(all bool) ([]droverdriver.SubscriptionRef, []string) {
	tc.wokenMu.Lock()
	woken, wokenAll := tc.woken, tc.wokenAll
	tc.woken, tc.wokenAll = nil, false
	tc.wokenMu.Unlock()
	if all || wokenAll || len(woken) == 0 {
		return tc.refs, nil
	}
	var refs []droverdriver.SubscriptionRef
	var topics []string
	for topic := range woken {
		refs, topics = append(refs, tc.topicRefs[topic]...), append(topics, topic)
	}
	return refs, topics
}

// laneBatch is one leased lane's batch and, once handled, its outcome.
type laneBatch struct {
	lane  droverdriver.LeasedLane
	token droverdriver.LeaseToken
	rows  []*droverdriver.MessageRow
	// full says that the read was cut at the batch's size, so that more
	// messages are likely waiting: the ack keeps the lane.
	full   bool
	failed map[int]error // index in rows → error
}

func (tc *topicConsumer) run(ctx context.Context) {
	// order: lanes kept by the last acks before a stop are released, so
	// that other consumers need not wait for their leases to expire.
	defer tc.releaseKept(context.WithoutCancel(ctx))
	done := make(chan *laneBatch, tc.capacity)
	handlerCtx, cancelHandlers := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHandlers()
	inFlight := 0
	held := map[*laneBatch]bool{}
	var finished []*laneBatch
	timer := time.NewTimer(0)
	defer timer.Stop()
	extend := time.NewTicker(tc.lease / 3)
	defer extend.Stop()
	woken := true
	tc.news, tc.newsAll = true, true
	// recheck is the delay of the last recheck of a chain (0: none),
	// recheckAt when the next one is due (zero: none pending).
	var recheck time.Duration
	var recheckAt time.Time
	var firstDone time.Time // when the oldest batch of finished was
	for {
		if len(finished) > 0 && (inFlight == 0 || ctx.Err() != nil || time.Since(firstDone) >= topicAckDelay) {
			if err := tc.ack(context.WithoutCancel(ctx), finished, ctx.Err() == nil); err != nil {
				// The lanes stay leased until they expire, then their
				// batches are delivered again: at least once.
				tc.logger.Warn("topic consumer: ack failed", "error", err)
			}
			finished = finished[:0]
		}
		wait := tc.poll
		// A lease looks at the heads of the client's topic lanes and the
		// lanes behind them, so it waits until a quarter of the capacity
		// is free (or nothing runs) rather than running for each batch
		// that finishes: with several clients, leases that come back
		// nearly empty were most of the store's work.
		room := tc.capacity - inFlight
		if ctx.Err() == nil && room > 0 {
			if time.Since(tc.lastLease) >= tc.poll {
				tc.news, tc.newsAll = true, true
			}
			lease := tc.news && (inFlight == 0 || room >= (tc.capacity+3)/4)
			started, err := tc.fetch(ctx, handlerCtx, room, lease, done, held)
			if err != nil && ctx.Err() == nil {
				tc.logger.Warn("topic consumer: fetch failed", "error", err)
			}
			inFlight += started
			switch {
			case tc.leased > 0:
				recheck, recheckAt = 0, time.Time{}
			case tc.leased == 0 && (woken || recheck > 0):
				if recheck = max(2*recheck, topicRecheckMin); recheck > topicRecheckMax {
					recheck = 0
				} else {
					recheckAt = time.Now().Add(recheck)
				}
			}
			if len(tc.kept) > 0 && inFlight < tc.capacity {
				wait = 0 // kept lanes left for the next fetch
			}
		}
		woken = false
		if ctx.Err() != nil && inFlight == 0 && len(finished) == 0 {
			return
		}
		if !recheckAt.IsZero() {
			wait = min(wait, max(time.Until(recheckAt), 0))
		}
		if len(finished) > 0 {
			wait = min(wait, max(topicAckDelay-time.Since(firstDone), 0))
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(wait)
		stopping := ctx.Done()
		var giveUp <-chan time.Time
		if ctx.Err() != nil {
			stopping = nil
			giveUp = time.After(tc.stopTimeout)
		}
		select {
		case b := <-done:
			waiting := len(finished)
			if waiting == 0 {
				firstDone = time.Now()
			}
			finished = append(finished, b)
		drain:
			for {
				select {
				case b := <-done:
					finished = append(finished, b)
				default:
					break drain
				}
			}
			for _, b := range finished[waiting:] {
				delete(held, b)
			}
			inFlight -= len(finished) - waiting
		case <-extend.C:
			tc.extend(ctx, held)
		case <-tc.wake:
			woken, tc.news = true, true
		case <-timer.C:
			// A due recheck brings news; the poll's is the lease's age
			// (above), and the turns that ack or read kept lanes bring
			// none.
			if !recheckAt.IsZero() && !time.Now().Before(recheckAt) {
				tc.news, recheckAt = true, time.Time{}
				if tc.leasedTopics == nil {
					tc.newsAll = true
				} else {
					tc.wakeTopics(tc.leasedTopics...)
				}
			}
		case <-stopping:
		case <-giveUp:
			// Handlers still running past the stop timeout lose their
			// lanes to the lease: another consumer redelivers them.
			cancelHandlers()
			return
		}
	}
}

// topicFetchRows bounds the messages one fetch reads, across all its
// lanes: a consumer whose subscriptions lag at many different positions
// would otherwise read up to its capacity times the batch size in one
// statement (500,000 rows for the fanout bench's client) and keep its
// loop, which also extends its leases, busy past them. With more distinct
// positions than topicFetchRows / BatchSize, each lane's batch is smaller
// (engine.PlanReads).
const topicFetchRows = 20_000

// fetch reads up to room kept lanes and, when lease says so and room is
// left, leases more, reads their batches and starts a handler for each; it
// returns how many it started. Kept lanes past room stay kept, for the
// next fetch.
func (tc *topicConsumer) fetch(ctx, handlerCtx context.Context, room int, lease bool, done chan<- *laneBatch, held map[*laneBatch]bool) (int, error) {
	var leased []droverdriver.LeasedLane
	var tokens []droverdriver.LeaseToken
	take := min(len(tc.kept), room)
	for _, k := range tc.kept[:take] {
		leased, tokens = append(leased, k.lane), append(tokens, k.token)
	}
	tc.kept = tc.kept[:copy(tc.kept, tc.kept[take:])]
	tc.leased = -1
	if lease && room > len(leased) {
		token := droverdriver.NewLeaseToken()
		want := room - len(leased)
		tc.lastLease = time.Now()
		var refs []droverdriver.SubscriptionRef
		refs, tc.leasedTopics = tc.leaseRefs(tc.newsAll)
		// A lease cancelled in flight may still commit, leaving lanes
		// leased that no one works until they expire: it runs to its end.
		more, err := tc.exec.TopicLease(context.WithoutCancel(ctx), droverdriver.TopicLeaseParams{Subscriptions: refs,
			Owner: tc.owner, Token: token, Lease: tc.lease, Max: want, Now: tc.lastLease})
		// A lease that took all it was allowed may have left more,
		// perhaps of topics it did not look at.
		tc.news, tc.leased = err != nil || len(more) == want, len(more)
		tc.newsAll = tc.news
		if err != nil && len(leased) == 0 {
			return 0, err
		}
		for _, l := range more {
			leased, tokens = append(leased, l), append(tokens, token)
		}
	}
	if len(leased) == 0 {
		return 0, nil
	}
	tc.reportDropped(leased)
	batchSize := 1
	for _, l := range leased {
		batchSize = max(batchSize, tc.sub(l).BatchSize)
	}
	plan := engine.PlanReads(leased, batchSize, topicFetchRows)
	// order: the lanes are ours now; a stop must not strand them leased
	// until they expire, so the read runs to its end.
	rows, err := tc.exec.TopicRead(context.WithoutCancel(ctx), plan.Params)
	if err != nil {
		// Released at their own cursors, or back when the leases expire.
		release := make([]*laneBatch, len(leased))
		for i, l := range leased {
			release[i] = &laneBatch{lane: l, token: tokens[i]}
		}
		return 0, errors.Join(err, tc.ack(context.WithoutCancel(ctx), release, false))
	}
	for i, batch := range engine.Deliveries(plan, rows) {
		l := leased[i]
		sub := tc.sub(l)
		n := min(sub.BatchSize, plan.Params.Limit)
		b := &laneBatch{lane: l, token: tokens[i], rows: batch[:min(len(batch), n)], full: len(batch) >= n}
		held[b] = true
		go tc.handle(handlerCtx, sub, b, done)
	}
	return len(leased), nil
}

// releaseKept frees the kept lanes at their cursors.
func (tc *topicConsumer) releaseKept(ctx context.Context) {
	if len(tc.kept) == 0 {
		return
	}
	release := make([]*laneBatch, len(tc.kept))
	for i, k := range tc.kept {
		release[i] = &laneBatch{lane: k.lane, token: k.token}
	}
	tc.kept = nil
	if err := tc.ack(ctx, release, false); err != nil {
		tc.logger.Warn("topic consumer: releasing kept lanes failed; they return when their leases expire", "error", err)
	}
}

// sub is the Subscription a leased lane belongs to.
func (tc *topicConsumer) sub(l droverdriver.LeasedLane) *Subscription {
	return tc.subs[droverdriver.SubscriptionRef{Topic: l.Topic, Name: l.Subscription}]
}

// reportDropped logs ErrSubscriptionBehind for leased lanes whose
// subscription lost messages to retention since the last report (or since
// the client started).
func (tc *topicConsumer) reportDropped(leased []droverdriver.LeasedLane) {
	for _, l := range leased {
		k := laneKey{droverdriver.SubscriptionRef{Topic: l.Topic, Name: l.Subscription}, l.Lane}
		if l.Dropped > tc.dropped[k] {
			if tc.dropped == nil {
				tc.dropped = map[laneKey]int64{}
			}
			tc.logger.Error("topic consumer: "+ErrSubscriptionBehind.Error(), "topic", l.Topic, "subscription", l.Subscription,
				"lane", l.Lane, "dropped", l.Dropped-tc.dropped[k])
			tc.dropped[k] = l.Dropped
		}
	}
}

func (tc *topicConsumer) handle(ctx context.Context, sub *Subscription, b *laneBatch, done chan<- *laneBatch) {
	defer func() { done <- b }()
	if len(b.rows) == 0 {
		return
	}
	batch := make([]*Delivery, len(b.rows))
	for i, m := range b.rows {
		batch[i] = delivery(sub.Topic, sub.Name, m)
	}
	err := safeHandle(ctx, sub.Handler, batch)
	if err == nil {
		return
	}
	b.failed = map[int]error{}
	var failed FailedMessages
	if errors.As(err, &failed) {
		for i, m := range b.rows {
			if e, ok := failed[m.ID]; ok {
				b.failed[i] = e
			}
		}
		return
	}
	for i := range b.rows {
		b.failed[i] = err
	}
}

// ack moves the cursors of finished batches past them, failed messages
// becoming retry jobs in the same statement's transaction. With keep, lanes
// whose batch was full stay leased and are read again by the next fetch.
func (tc *topicConsumer) ack(ctx context.Context, finished []*laneBatch, keep bool) error {
	p := droverdriver.TopicAckParams{Now: time.Now(), Lease: tc.lease}
	delivered := 0
	for _, b := range finished {
		delivered += len(b.rows)
		sub := tc.sub(b.lane)
		p.Acks = append(p.Acks, droverdriver.LaneAck{Topic: b.lane.Topic, Subscription: b.lane.Subscription, Lane: b.lane.Lane, Token: b.token,
			Cursor: engine.AckCursor(b.lane.Cursor, b.rows), Keep: keep && b.full})
		for i, m := range b.rows {
			e, ok := b.failed[i]
			if !ok {
				continue
			}
			job, err := tc.retryJob(sub, b.lane.MaxAttempts, m, e)
			if err != nil {
				return err
			}
			p.Retries = append(p.Retries, job)
			p.RetryAck = append(p.RetryAck, len(p.Acks)-1)
		}
	}
	accepted, err := tc.exec.TopicAck(ctx, p)
	if err == nil && len(accepted) == len(p.Acks) {
		tc.metrics.topicDelivered.Add(int64(delivered))
	} else {
		for _, i := range accepted {
			tc.metrics.topicDelivered.Add(int64(len(finished[i].rows)))
		}
	}
	for _, i := range accepted {
		if a := p.Acks[i]; a.Keep {
			l := finished[i].lane
			l.Cursor = a.Cursor
			tc.kept = append(tc.kept, keptLane{lane: l, token: a.Token})
		}
	}
	return err
}

// retryJob is the job a failed message becomes: keyed by the message's key
// (within its subscription) so that retries of one key run in order among
// themselves, due after the retry policy's delay for a first failure,
// holding the error, and with the attempts the subscription's stored
// maxAttempts leaves after the first delivery.
func (tc *topicConsumer) retryJob(sub *Subscription, maxAttempts int, m *droverdriver.MessageRow, cause error) (droverdriver.InsertParams, error) {
	return retryJob(sub.Topic, sub.Name, maxAttempts, m, cause.Error(), time.Now().Add(tc.retryDelay(1)))
}

// retryJob is the job a failed message m of subscription sub of topic
// becomes, due at runAt; see topicConsumer.retryJob.
func retryJob(topic, sub string, maxAttempts int, m *droverdriver.MessageRow, cause string, runAt time.Time) (droverdriver.InsertParams, error) {
	args, err := json.Marshal(topicRetryArgs{Topic: topic, Subscription: sub, ID: m.ID, Key: m.Key,
		Payload: m.Payload, Metadata: json.RawMessage(m.Metadata), PublishedAt: m.PublishedAt})
	if err != nil {
		return droverdriver.InsertParams{}, err
	}
	meta, _ := json.Marshal(map[string]string{"first_error": truncate(cause, 1024)})
	p := droverdriver.InsertParams{Queue: RetryQueue(topic), Kind: topicRetryKind, Args: args,
		Metadata: meta, MaxAttempts: max(maxAttempts-1, 1), RunAt: runAt}
	if m.Key != "" {
		p.Key, p.KeyLimit = sub+"/"+m.Key, 1
	}
	return p, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// extend renews the leases of lanes whose handlers still run, and of
// kept lanes waiting for a fetch.
func (tc *topicConsumer) extend(ctx context.Context, held map[*laneBatch]bool) {
	if len(held) == 0 && len(tc.kept) == 0 {
		return
	}
	p := droverdriver.TopicExtendParams{Lease: tc.lease, Now: time.Now()}
	for b := range held {
		p.Lanes = append(p.Lanes, droverdriver.LaneAck{Topic: b.lane.Topic, Subscription: b.lane.Subscription, Lane: b.lane.Lane, Token: b.token})
	}
	for _, k := range tc.kept {
		p.Lanes = append(p.Lanes, droverdriver.LaneAck{Topic: k.lane.Topic, Subscription: k.lane.Subscription, Lane: k.lane.Lane, Token: k.token})
	}
	if _, err := tc.exec.TopicExtend(ctx, p); err != nil && ctx.Err() == nil {
		tc.logger.Warn("topic consumer: extend failed", "error", err)
	}
}
