package drover

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/engine"
)

// The topic consumer core (docs/design/topics.md, "Consumers"): lease →
// plan → read → deliver → ack, extend, release, each fenced by the lane's
// lease token, written once for the client's own consumer (subscribe.go)
// and for consumers outside the process (receive.go). The decisions are
// the engine's (internal/engine/topics.go and topicack.go); the core
// strings them together and keeps one cycle at one lease statement, one
// read shared by every subscription at the same position, and one ack
// statement for all the batches it acknowledges.

// ErrLaneLost is the cause (context.Cause) of a subscription handler's
// context when the consumer lost the lane of its batch: its lease ended
// (the consumer was paused or cut off from the store past it, or an
// operator released the lane) and another consumer may be delivering the
// same messages. The batch's outcome is dropped; the lane's new holder
// delivers them.
var ErrLaneLost = errors.New("topic lane lost: its lease ended and another consumer may hold it")

// topicCore runs the consumer's statements.
type topicCore struct {
	// exec is the client's store, on which engine.Ack runs its
	// transactions; te is the same store's topic statements.
	exec       droverdriver.Executor
	te         droverdriver.TopicExecutor
	metrics    *clientMetrics
	retryDelay func(attempt int) time.Duration
	logger     *slog.Logger
}

// heldLane is a lane a consumer holds under token: leased, or kept by its
// last ack (LaneAck.Keep).
type heldLane struct {
	droverdriver.LeasedLane
	token drovertype.LeaseToken
	// region is the lane's suspect region when it delivers one message
	// at a time: how many messages of the expired batch are left (the
	// lease's batch limit before the core cut Limit to 1).
	region int
	// validUntil is when the lease ends at the earliest, by this
	// process's clock: the start of the statement that leased, kept or
	// extended it, plus its lease.
	validUntil time.Time
}

// laneAck is the fenced reference to the lane: the LaneAck of an extend or
// a release.
func (h *heldLane) laneAck() droverdriver.LaneAck {
	return droverdriver.LaneAck{Topic: h.Topic, Subscription: h.Subscription, Lane: h.Lane, Token: h.token}
}

// isolated reports whether the lane delivers one message at a time: an
// earlier delivery of its batch was not acknowledged before its lease
// expired.
func (h *heldLane) isolated() bool { return h.Attempt > 1 }

// dead reports whether the lane's next message was delivered as often as
// its subscription allows, every time without an ack.
func (h *heldLane) dead() bool { return h.Attempt > h.MaxAttempts }

// topicBatch is one held lane's batch and, once handled, its outcome.
type topicBatch struct {
	lane heldLane
	rows []*droverdriver.MessageRow
	// full says that the batch holds as many messages as it could, so
	// that more are likely waiting: an in-process ack keeps the lane.
	full bool
	// failed names the messages that failed, by ID; failAll fails them
	// all (a handler's error that names none).
	failed  map[int64]string
	failAll string
}

// bytes is what the batch's messages count against a byte budget.
func (b *topicBatch) bytes() int64 {
	var n int64
	for _, m := range b.rows {
		n += m.Bytes()
	}
	return n
}

// deliveries are the batch's messages as its handler receives them.
func (b *topicBatch) deliveries() []*Delivery {
	out := make([]*Delivery, len(b.rows))
	for i, m := range b.rows {
		out[i] = &Delivery{ID: m.ID, Topic: b.lane.Topic, Subscription: b.lane.Subscription, Key: m.Key, Payload: m.Payload,
			Metadata: m.Metadata, PublishedAt: m.PublishedAt, Attempt: b.lane.Attempt}
	}
	return out
}

// leaseParams select the lanes one lease takes.
type leaseParams struct {
	refs []droverdriver.SubscriptionRef
	// limits[i] is the batch size of refs[i].
	limits  []int
	owner   string
	lease   time.Duration
	max     int
	waiting time.Duration
}

// lease leases lanes under a fresh token. The lanes that deliver one
// message at a time get a limit of 1, their region kept aside.
func (c *topicCore) lease(ctx context.Context, p leaseParams) ([]heldLane, error) {
	token := drovertype.NewLeaseToken()
	// A lease cancelled in flight may still commit, leaving lanes leased
	// that no one works until they expire: it runs to its end.
	now := time.Now()
	leased, err := c.te.TopicLease(context.WithoutCancel(ctx), droverdriver.TopicLeaseParams{Subscriptions: p.refs, Limits: p.limits,
		Owner: p.owner, Token: token, Lease: p.lease, Max: p.max, Waiting: p.waiting, Now: now})
	if err != nil {
		return nil, err
	}
	out := make([]heldLane, len(leased))
	for i, l := range leased {
		out[i] = heldLane{LeasedLane: l, token: token, validUntil: now.Add(p.lease)}
		if out[i].isolated() {
			out[i].region, out[i].Limit = l.Limit, 1
		}
	}
	return out, nil
}

// read reads the batches of held lanes, at most maxRows messages and
// maxBytes of them in all (0: no bound), and returns those with messages
// to deliver. The others are settled before it returns, so that no lane
// stays held with nothing to hand out: a lane whose next message is dead
// is acked past it, which becomes a discarded job; a lane the read left
// empty is released, or acked past its suspect region when retention
// emptied that.
func (c *topicCore) read(ctx context.Context, lanes []heldLane, maxRows int, maxBytes int64) ([]*topicBatch, error) {
	if len(lanes) == 0 {
		return nil, nil
	}
	leased := make([]droverdriver.LeasedLane, len(lanes))
	for i := range lanes {
		leased[i] = lanes[i].LeasedLane
	}
	plan := engine.PlanReads(leased, maxRows, maxBytes)
	// order: the lanes are ours now; a stop must not strand them leased
	// until they expire, so the read runs to its end.
	ctx = context.WithoutCancel(ctx)
	rows, err := c.te.TopicRead(ctx, plan.Params)
	if err != nil {
		_, rerr := c.release(ctx, lanes)
		return nil, errors.Join(err, rerr)
	}
	lastRange := -1
	if len(rows) > 0 {
		lastRange = rows[len(rows)-1].Range
	}
	var out, settle []*topicBatch
	var release []heldLane
	for i, d := range engine.Deliveries(plan, leased, rows) {
		b := &topicBatch{lane: lanes[i], rows: d.Rows, full: d.Full}
		r := plan.RangeOf[i]
		// A range after the last one the read returned rows of may have
		// been cut by the byte budget rather than be empty.
		cut := maxBytes > 0 && lastRange >= 0 && r > lastRange
		switch {
		case len(b.rows) > 0 && b.lane.dead():
			settle = append(settle, b)
		case len(b.rows) > 0:
			out = append(out, b)
		case b.lane.isolated() && !cut && b.lane.To != droverdriver.PositionMax:
			// Nothing is left of the suspect region: retention dropped
			// it. The ack moves past it.
			b.lane.Cursor = b.lane.To
			settle = append(settle, b)
		default:
			release = append(release, b.lane)
		}
	}
	if len(settle) > 0 {
		if _, err := c.ack(ctx, settle, false, 0); err != nil {
			c.logger.Warn("topic consumer: settling dead messages failed; their lanes deliver them again after the lease", "error", err)
		}
	}
	if len(release) > 0 {
		if _, err := c.release(ctx, release); err != nil {
			c.logger.Warn("topic consumer: releasing lanes with nothing to deliver failed; they return when their leases expire", "error", err)
		}
	}
	return out, nil
}

// ack acknowledges handled batches: each lane moves past its batch, and
// failed messages become jobs of the topic's retry queue in the same
// transaction (engine.Ack). With keep, the lanes of full batches stay
// leased for lease (the store may refuse: AckOutcome.Kept).
func (c *topicCore) ack(ctx context.Context, batches []*topicBatch, keep bool, lease time.Duration) ([]engine.AckOutcome, error) {
	p := engine.AckParams{Batches: make([]engine.AckBatch, len(batches)), Lease: lease}
	for i, b := range batches {
		l := &b.lane
		a := engine.AckBatch{Ack: l.laneAck(), Attempt: l.Attempt, MaxAttempts: l.MaxAttempts,
			Failed: b.failed, FailAll: b.failAll, Rows: b.rows}
		a.Ack.Cursor, a.Ack.Count = engine.AckCursor(l.Cursor, b.rows), len(b.rows)
		switch {
		case l.dead() && len(b.rows) > 0:
			a.Dead, a.FailAll = "delivered without an acknowledgement until its subscription's max attempts: each lease expired", ""
		case l.isolated() && len(b.rows) == 0:
			a.Ack.Count = l.region // the suspect region, emptied by retention
		}
		if keep && b.full && !l.isolated() {
			a.Ack.Keep, a.Ack.Limit = true, l.Limit
		}
		p.Batches[i] = a
	}
	return c.acknowledge(ctx, p)
}

// acknowledge runs engine.Ack and counts the deliveries it accepted.
func (c *topicCore) acknowledge(ctx context.Context, p engine.AckParams) ([]engine.AckOutcome, error) {
	p.Now, p.RetryAt = time.Now(), time.Now().Add(c.retryDelay(1))
	p.ReadBytes = ReceiveMaxBytesDefault
	out, err := engine.Ack(ctx, c.exec, p)
	if err != nil {
		return nil, err
	}
	var delivered int64
	for i, o := range out {
		if o.Accepted && p.Batches[i].Dead == "" {
			delivered += int64(p.Batches[i].Ack.Count)
		}
	}
	c.metrics.topicDelivered.Add(delivered)
	return out, nil
}

// extend extends the leases of held lanes to lease from now and reports,
// in order, which the store still had under their tokens.
func (c *topicCore) extend(ctx context.Context, lanes []heldLane, lease time.Duration) ([]bool, error) {
	return c.lanes(lanes, func(refs []droverdriver.LaneAck) ([]int, error) {
		return c.te.TopicExtend(ctx, droverdriver.TopicExtendParams{Lanes: refs, Lease: lease, Now: time.Now()})
	})
}

// release hands held lanes back where they stand, their deliveries not
// counted, and reports, in order, which the store still had under their
// tokens.
func (c *topicCore) release(ctx context.Context, lanes []heldLane) ([]bool, error) {
	return c.lanes(lanes, func(refs []droverdriver.LaneAck) ([]int, error) {
		return c.te.TopicRelease(ctx, droverdriver.TopicExtendParams{Lanes: refs, Now: time.Now()})
	})
}

// lanes runs an extend or a release over lanes (engine.LaneUpdate).
func (c *topicCore) lanes(lanes []heldLane, run func([]droverdriver.LaneAck) ([]int, error)) ([]bool, error) {
	refs := make([]droverdriver.LaneAck, len(lanes))
	for i := range lanes {
		refs[i] = lanes[i].laneAck()
	}
	return engine.LaneUpdate(refs, run)
}
