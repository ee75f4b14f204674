package drover

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/engine"
	"github.com/droverhq/drover/internal/validate"
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

// topicRetryArgs is a failed message in its subscription's retry queue,
// as the engine made it (engine.TopicRetryArgs).
type topicRetryArgs struct {
	engine.TopicRetryArgs
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
		if err := validate.Topic(s.Topic); err != nil {
			return fmt.Errorf("config: %w", err)
		}
		if err := validate.Subscription(s.Name); err != nil {
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
		Metadata: a.Metadata, PublishedAt: a.PublishedAt, Attempt: job.Attempt + max(a.Delivered, 1)}
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
	core, err := c.consumerCore()
	if err != nil {
		return nil, err
	}
	tc := &topicConsumer{core: core, owner: c.config.ID, lease: c.config.LeaseDuration, poll: c.config.PollInterval,
		logger: c.config.Logger, subs: map[droverdriver.SubscriptionRef]*Subscription{}, stopTimeout: c.config.StopTimeout,
		wake: make(chan struct{}, 1)}
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
	c.topics.signals = c.signals.Topics
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

// topicFetchRows bounds the messages one fetch reads, across all its
// lanes: a consumer whose subscriptions lag at many different positions
// would otherwise read up to its capacity times the batch size in one
// statement (500,000 rows for the fanout bench's client) and keep its
// loop, which also extends its leases, busy past them. With more distinct
// positions than topicFetchRows / BatchSize, each lane's batch is smaller
// (engine.PlanReads).
const topicFetchRows = 20_000

// topicConsumer consumes every subscription a client serves, of any
// topics, through the consumer core (consume.go). One goroutine leases
// lanes (one statement for all of them), reads them (one statement, each
// distinct range once), starts one handler goroutine per lane's batch, and
// acks the batches that finished (one statement): three statements per
// cycle however many topics, subscriptions and lanes it covers, so that a
// client's cost in statements does not grow with them. It wakes when a
// publish to any topic is announced (droverdriver.TopicWake, through the
// client's listener), and polls at the client's PollInterval in case an
// announcement is lost. A lane it no longer holds (its extend found the
// lease gone) stops its handler (ErrLaneLost), and it never reads a lane
// whose lease it cannot vouch for.
type topicConsumer struct {
	// signals are the client's, handed over at Start (testsignals.go).
	signals     consumerTestSignals
	core        *topicCore
	owner       string
	lease, poll time.Duration
	stopTimeout time.Duration
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
	// dropped is the Dropped count of each lane last reported, so that
	// a lag past retention is reported once per loss.
	dropped map[laneKey]int64
	// kept are lanes whose last batch was full and whose ack kept them
	// leased (LaneAck.Keep): the next fetch reads them again without a
	// lease statement. Under a backlog a consumer's cycle is then a read
	// and an ack, and leases only pick up lanes no one holds.
	kept []heldLane
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

// running is a batch whose handler runs.
type running struct {
	*topicBatch
	// cancel stops the handler: ErrLaneLost when the lane was lost, then
	// lost is set and the outcome dropped.
	cancel context.CancelCauseFunc
	lost   bool
}

// consumerLoop is the state of one run of a topicConsumer.
type consumerLoop struct {
	tc *topicConsumer
	// ctx stops the consumer; handlers run under handlerCtx, which only
	// the stop timeout cancels, so that a stop lets them finish.
	ctx            context.Context
	handlerCtx     context.Context
	cancelHandlers context.CancelFunc
	done           chan *running
	held           map[*running]bool
	finished       []*running
	firstDone      time.Time // when the oldest batch of finished was
	lastExtend     time.Time
	timer          *time.Timer
	extendTick     *time.Ticker
	giveUp         <-chan time.Time
	woken          bool
	// recheck is the delay of the last recheck of a chain (0: none),
	// recheckAt when the next one is due (zero: none pending).
	recheck   time.Duration
	recheckAt time.Time
}

func (tc *topicConsumer) run(ctx context.Context) {
	l := &consumerLoop{tc: tc, ctx: ctx, done: make(chan *running, tc.capacity), held: map[*running]bool{},
		timer: time.NewTimer(0), extendTick: time.NewTicker(tc.lease / 3), woken: true, lastExtend: time.Now()}
	l.handlerCtx, l.cancelHandlers = context.WithCancel(context.WithoutCancel(ctx))
	// order: lanes kept by the last acks before a stop are released, so
	// that other consumers need not wait for their leases to expire.
	defer tc.releaseKept(context.WithoutCancel(ctx))
	defer l.cancelHandlers()
	defer l.timer.Stop()
	defer l.extendTick.Stop()
	tc.news, tc.newsAll = true, true
	for {
		l.ackDue()
		l.extendDue()
		wait := l.fetch()
		if ctx.Err() != nil && len(l.held) == 0 && len(l.finished) == 0 {
			return
		}
		if !l.wait(wait) {
			return
		}
	}
}

// ackDue acks the finished batches once none is running, the consumer
// stops, or the oldest has waited topicAckDelay for the others.
func (l *consumerLoop) ackDue() {
	if len(l.finished) == 0 || len(l.held) > 0 && l.ctx.Err() == nil && time.Since(l.firstDone) < topicAckDelay {
		return
	}
	if err := l.tc.ack(context.WithoutCancel(l.ctx), l.finished, l.ctx.Err() == nil); err != nil {
		// The lanes stay leased until they expire, then their batches are
		// delivered again: at least once.
		l.tc.logger.Warn("topic consumer: ack failed", "error", err)
	}
	l.tc.signals.Acked.Send(len(l.finished))
	l.finished = l.finished[:0]
}

// extendDue extends the leases of the running batches and kept lanes every
// third of the lease, before anything else of the turn: after a pause
// (the process stopped, the loop starved) the leases are checked before a
// batch starts, and a lane the store no longer holds for the consumer stops
// its handler.
func (l *consumerLoop) extendDue() {
	if time.Since(l.lastExtend) < l.tc.lease/3 {
		return
	}
	l.lastExtend = time.Now()
	l.tc.extend(l.ctx, l.held)
}

// fetch starts batches while the consumer has room and is not stopping,
// and returns how long the loop may wait before its next turn.
func (l *consumerLoop) fetch() time.Duration {
	tc := l.tc
	room := tc.capacity - len(l.held)
	if l.ctx.Err() != nil || room <= 0 {
		return tc.poll
	}
	if time.Since(tc.lastLease) >= tc.poll {
		tc.news, tc.newsAll = true, true
	}
	// A lease looks at the heads of the client's topic lanes and the
	// lanes behind them, so it waits until a quarter of the capacity is
	// free (or nothing runs) rather than running for each batch that
	// finishes: with several clients, leases that come back nearly empty
	// were most of the store's work.
	lease := tc.news && (len(l.held) == 0 || room >= (tc.capacity+3)/4)
	batches, err := tc.fetch(l.ctx, room, lease)
	if err != nil && l.ctx.Err() == nil {
		tc.logger.Warn("topic consumer: fetch failed", "error", err)
	}
	for _, b := range batches {
		l.start(b)
	}
	switch {
	case tc.leased > 0:
		l.recheck, l.recheckAt = 0, time.Time{}
	case tc.leased == 0 && (l.woken || l.recheck > 0):
		if l.recheck = max(2*l.recheck, topicRecheckMin); l.recheck > topicRecheckMax {
			l.recheck = 0
		} else {
			l.recheckAt = time.Now().Add(l.recheck)
		}
	}
	l.woken = false
	if len(tc.kept) > 0 && len(l.held) < tc.capacity {
		return 0 // kept lanes left for the next fetch
	}
	return tc.poll
}

// start runs a batch's handler in a goroutine of its own.
func (l *consumerLoop) start(b *topicBatch) {
	ctx, cancel := context.WithCancelCause(l.handlerCtx)
	r := &running{topicBatch: b, cancel: cancel}
	l.held[r] = true
	go l.tc.handle(ctx, l.tc.sub(b.lane.LeasedLane), r, l.done)
}

// wait waits up to wait for the next event, and reports whether the loop
// goes on.
func (l *consumerLoop) wait(wait time.Duration) bool {
	if !l.recheckAt.IsZero() {
		wait = min(wait, max(time.Until(l.recheckAt), 0))
	}
	if len(l.finished) > 0 {
		wait = min(wait, max(topicAckDelay-time.Since(l.firstDone), 0))
	}
	l.timer.Reset(wait)
	stopping := l.ctx.Done()
	if l.ctx.Err() != nil {
		stopping = nil
		if l.giveUp == nil {
			l.giveUp = time.After(l.tc.stopTimeout)
		}
	}
	select {
	case r := <-l.done:
		l.finish(r)
		for {
			select {
			case r := <-l.done:
				l.finish(r)
			default:
				return true
			}
		}
	case <-l.extendTick.C:
	case <-l.tc.wake:
		l.woken, l.tc.news = true, true
	case <-l.timer.C:
		// A due recheck brings news; the poll's is the lease's age
		// (fetch), and the turns that ack or read kept lanes bring none.
		if !l.recheckAt.IsZero() && !time.Now().Before(l.recheckAt) {
			l.tc.news, l.recheckAt = true, time.Time{}
			if l.tc.leasedTopics == nil {
				l.tc.newsAll = true
			} else {
				l.tc.wakeTopics(l.tc.leasedTopics...)
			}
		}
	case <-stopping:
	case <-l.giveUp:
		// Handlers still running past the stop timeout lose their lanes
		// to the lease: another consumer redelivers them.
		l.cancelHandlers()
		return false
	}
	if !l.timer.Stop() {
		select {
		case <-l.timer.C:
		default:
		}
	}
	return true
}

// finish takes a batch whose handler returned: to be acked, or dropped when
// its lane was lost meanwhile.
func (l *consumerLoop) finish(r *running) {
	delete(l.held, r)
	if r.lost {
		return
	}
	if len(l.finished) == 0 {
		l.firstDone = time.Now()
	}
	l.finished = append(l.finished, r)
}

// fetch reads up to room kept lanes and, when lease says so and room is
// left, leases more, and reads them: it returns the batches to start. Kept
// lanes past room stay kept, for the next fetch; kept lanes whose lease may
// have lapsed (a pause longer than a third of it) are read only once an
// extend confirmed them.
func (tc *topicConsumer) fetch(ctx context.Context, room int, lease bool) ([]*topicBatch, error) {
	take := min(len(tc.kept), room)
	lanes := tc.confirm(ctx, tc.kept[:take:take])
	tc.kept = tc.kept[:copy(tc.kept, tc.kept[take:])]
	tc.leased = -1
	var leaseErr error
	if lease && room > take {
		want := room - take
		tc.lastLease = time.Now()
		var refs []droverdriver.SubscriptionRef
		refs, tc.leasedTopics = tc.leaseRefs(tc.newsAll)
		limits := make([]int, len(refs))
		for i, ref := range refs {
			limits[i] = tc.subs[ref].BatchSize
		}
		more, err := tc.core.lease(ctx, leaseParams{refs: refs, limits: limits, owner: tc.owner, lease: tc.lease, max: want,
			waiting: min(max(2*tc.poll, time.Second), tc.lease)})
		// A lease that took all it was allowed may have left more,
		// perhaps of topics it did not look at.
		tc.news, tc.leased, leaseErr = err != nil || len(more) == want, len(more), err
		tc.newsAll = tc.news
		lanes = append(lanes, more...)
	}
	if len(lanes) == 0 {
		return nil, leaseErr
	}
	tc.reportDropped(lanes)
	batches, err := tc.core.read(ctx, lanes, topicFetchRows, 0)
	return batches, errors.Join(leaseErr, err)
}

// confirm returns the kept lanes whose leases are sure to run for another
// third of the lease, and of the others those an extend still found held:
// after a pause past the lease, another consumer may have taken a kept
// lane and acked beyond the cursor this consumer would read it from.
func (tc *topicConsumer) confirm(ctx context.Context, kept []heldLane) []heldLane {
	var sure, unsure []heldLane
	for _, k := range kept {
		if time.Until(k.validUntil) > tc.lease/3 {
			sure = append(sure, k)
		} else {
			unsure = append(unsure, k)
		}
	}
	if len(unsure) == 0 {
		return sure
	}
	start := time.Now()
	held, err := tc.core.extend(ctx, unsure, tc.lease)
	if err != nil {
		tc.logger.Warn("topic consumer: confirming kept lanes failed; they are left to expire", "error", err)
		return sure
	}
	for i, k := range unsure {
		if held[i] {
			k.validUntil = start.Add(tc.lease)
			sure = append(sure, k)
		}
	}
	return sure
}

// releaseKept hands the kept lanes back where they stand.
func (tc *topicConsumer) releaseKept(ctx context.Context) {
	if len(tc.kept) == 0 {
		return
	}
	kept := tc.kept
	tc.kept = nil
	if _, err := tc.core.release(ctx, kept); err != nil {
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
func (tc *topicConsumer) reportDropped(lanes []heldLane) {
	for _, l := range lanes {
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

// handle runs a batch's handler and records its outcome.
func (tc *topicConsumer) handle(ctx context.Context, sub *Subscription, r *running, done chan<- *running) {
	defer func() {
		r.cancel(nil)
		done <- r
	}()
	err := safeHandle(ctx, sub.Handler, r.deliveries())
	if err == nil {
		return
	}
	var failed FailedMessages
	if !errors.As(err, &failed) {
		r.failAll = err.Error()
		return
	}
	r.failed = make(map[int64]string, len(failed))
	for id, e := range failed {
		r.failed[id] = "failed"
		if e != nil {
			r.failed[id] = e.Error()
		}
	}
}

// ack moves the cursors of finished batches past them, failed messages
// becoming retry jobs in the same transaction. With keep, lanes whose
// batch was full stay leased, if the store keeps them, and are read again
// by the next fetch.
func (tc *topicConsumer) ack(ctx context.Context, finished []*running, keep bool) error {
	batches := make([]*topicBatch, len(finished))
	for i, r := range finished {
		batches[i] = r.topicBatch
	}
	start := time.Now()
	outcomes, err := tc.core.ack(ctx, batches, keep, tc.lease)
	if err != nil {
		return err
	}
	for i, o := range outcomes {
		if !o.Kept {
			continue
		}
		b := batches[i]
		l := b.lane
		l.Cursor = engine.AckCursor(l.Cursor, b.rows)
		l.Attempt, l.To, l.Limit, l.region = 1, droverdriver.PositionMax, tc.sub(l.LeasedLane).BatchSize, 0
		l.validUntil = start.Add(tc.lease)
		tc.kept = append(tc.kept, l)
	}
	return nil
}

// extend renews the leases of lanes whose handlers still run, and of kept
// lanes waiting for a fetch. The lanes the store no longer holds for the
// consumer are lost: their handlers are stopped (ErrLaneLost) and their
// outcomes dropped, and lost kept lanes are forgotten.
func (tc *topicConsumer) extend(ctx context.Context, held map[*running]bool) {
	if len(held) == 0 && len(tc.kept) == 0 {
		return
	}
	runs := make([]*running, 0, len(held))
	lanes := make([]heldLane, 0, len(held)+len(tc.kept))
	for r := range held {
		if !r.lost {
			runs = append(runs, r)
			lanes = append(lanes, r.lane)
		}
	}
	lanes = append(lanes, tc.kept...)
	start := time.Now()
	ok, err := tc.core.extend(ctx, lanes, tc.lease)
	if err != nil {
		if ctx.Err() == nil {
			tc.logger.Warn("topic consumer: extend failed", "error", err)
		}
		return
	}
	for i, r := range runs {
		if ok[i] {
			r.lane.validUntil = start.Add(tc.lease)
			continue
		}
		r.lost = true
		r.cancel(ErrLaneLost)
		tc.logger.Warn("topic consumer: "+ErrLaneLost.Error(), "topic", r.lane.Topic, "subscription", r.lane.Subscription, "lane", r.lane.Lane)
	}
	kept := tc.kept[:0]
	for i, k := range tc.kept {
		if ok[len(runs)+i] {
			k.validUntil = start.Add(tc.lease)
			kept = append(kept, k)
		}
	}
	tc.kept = kept
}
