package drover

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/engine"
	"github.com/droverhq/drover/internal/validate"
)

// Consumers outside the process (HTTP workers, other languages) receive
// batches of a subscription and acknowledge them later, without holding a
// Client's consumer: Receive leases lanes and reads them through the same
// consumer core as a Client's own consumer (consume.go), handing each batch
// out with a receipt; AckBatches moves the lanes past them, fenced by the
// receipt's lease token exactly as a Go consumer's ack is, and
// ExtendBatches and ReleaseBatches extend or hand back their leases. The
// receipt carries what the ack needs (the lane, its lease token, the
// batch's range, count and size, its attempt), authenticated by an HMAC
// whose key the store keeps, so that the server that answers keeps no
// state between the calls, any server of a fleet may take the ack, and a
// consumer can neither forge a receipt nor alter one to reach messages it
// was not handed.

// Bounds of remote consumers.
const (
	// MaxReceiveLease bounds ReceiveParams.Lease and the lease of
	// ExtendBatches: a consumer holding a batch longer extends it.
	MaxReceiveLease = 5 * time.Minute
	// ReceiveMaxBytesDefault bounds the payload and metadata bytes of one
	// Receive (ReceiveParams.MaxBytes), and what an AckBatches holds of
	// failed messages read again at a time.
	ReceiveMaxBytesDefault = 4 << 20
	// receiveWaiting is how long a Receive left short of its fair share
	// keeps counting in the others' shares (TopicLeaseParams.Waiting):
	// remote consumers poll or long-poll again within it.
	receiveWaiting = 10 * time.Second
)

// ErrSubscriptionNotFound is returned by calls that name a subscription
// that is not stored.
var ErrSubscriptionNotFound = droverdriver.ErrSubscriptionNotFound

// ReceiveParams selects batches to receive.
type ReceiveParams struct {
	Topic, Subscription string
	// Owner names the consumer in the lanes' leases: the lanes' holder,
	// and who the fair share of each subscription is counted for.
	Owner string
	// MaxBatches is how many lanes (batches) to take at most (default 1).
	// A consumer gets at most its fair share of a subscription's lanes:
	// the lanes divided among the consumers holding some or waiting for
	// some (docs/topics.md).
	MaxBatches int
	// BatchSize bounds the messages of one batch (default 100).
	BatchSize int
	// MaxBytes bounds the payload and metadata bytes of all the batches
	// (default ReceiveMaxBytesDefault); each batch holds at least one
	// message, the first whatever its size, and lanes past the budget are
	// left for the next Receive.
	MaxBytes int64
	// Lease is how long the batches are the consumer's before they are
	// delivered again (default LeaseDurationDefault, at most
	// MaxReceiveLease; ExtendBatches extends it).
	Lease time.Duration
}

// ReceivedBatch is a batch of one lane of a subscription, in order.
type ReceivedBatch struct {
	// Receipt acknowledges, extends or releases the batch. It holds the
	// lease token: treat it like a credential of the consumer.
	Receipt    string
	Deliveries []*Delivery
	// Dropped counts messages of the lane that retention removed before
	// the subscription read them (ErrSubscriptionBehind), since the
	// subscription was created.
	Dropped int64
}

// BatchAck acknowledges a received batch.
type BatchAck struct {
	Receipt string
	// Failed names messages of the batch that failed, by ID, with their
	// errors: each becomes a job of the topic's retry queue (RetryQueue)
	// and the rest are acknowledged.
	Failed map[int64]string
	// FailAll, when set, fails every message of the batch with this
	// error (a nack).
	FailAll string
}

// receipt is a ReceivedBatch's Receipt, before encoding.
type receipt struct {
	Topic        string                `json:"t"`
	Subscription string                `json:"s"`
	Lane         int                   `json:"l"`
	Token        drovertype.LeaseToken `json:"k"`
	From         droverdriver.Position `json:"f"`
	To           droverdriver.Position `json:"u"`
	Count        int                   `json:"n"`
	Bytes        int64                 `json:"b"`
	Attempt      int                   `json:"a"`
	MaxAttempts  int                   `json:"m"`
}

// receiptMAC authenticates a receipt's payload under key: the first 16
// bytes of an HMAC-SHA256, under a label that keeps the key to this use.
func receiptMAC(key, payload []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte("drover topic receipt v1\x00"))
	h.Write(payload)
	return h.Sum(nil)[:16]
}

func (r receipt) encode(key []byte) string {
	b, _ := json.Marshal(r)
	enc := base64.RawURLEncoding
	return enc.EncodeToString(b) + "." + enc.EncodeToString(receiptMAC(key, b))
}

// decodeReceipt returns the receipt s encodes, authenticated under key and
// naming subscription sub of topic; anything else is ErrInvalid, and
// nothing of it is trusted.
func decodeReceipt(key []byte, s, topic, sub string) (receipt, error) {
	var r receipt
	payload, mac, ok := bytes.Cut([]byte(s), []byte("."))
	if ok {
		enc := base64.RawURLEncoding
		var err error
		if payload, err = enc.DecodeString(string(payload)); err != nil {
			ok = false
		} else if mac, err = enc.DecodeString(string(mac)); err != nil {
			ok = false
		}
	}
	if !ok || !hmac.Equal(mac, receiptMAC(key, payload)) || json.Unmarshal(payload, &r) != nil {
		return receipt{}, invalidf("receipt %s: not a receipt Receive handed out (forged, altered or truncated)", validate.Echo(s))
	}
	if r.Topic != topic || r.Subscription != sub {
		return receipt{}, invalidf("receipt of %s/%s sent for %s/%s: a receipt is acknowledged through its own subscription",
			r.Topic, r.Subscription, topic, sub)
	}
	return r, nil
}

// receiptKey returns the store's receipt key, made and stored by the first
// process that needs it (TopicExecutor.TopicReceiptKey), cached once read.
func (c *Client[TTx]) receiptKey(ctx context.Context, te droverdriver.TopicExecutor) ([]byte, error) {
	c.receiptKeyMu.Lock()
	defer c.receiptKeyMu.Unlock()
	if c.receiptKeyCache != nil {
		return c.receiptKeyCache, nil
	}
	candidate := make([]byte, 32)
	if _, err := rand.Read(candidate); err != nil {
		return nil, err
	}
	key, err := te.TopicReceiptKey(ctx, candidate)
	if err != nil {
		return nil, err
	}
	if len(key) < 16 {
		return nil, fmt.Errorf("the store's topic receipt key is %d bytes: too short to authenticate receipts", len(key))
	}
	c.receiptKeyCache = key
	return key, nil
}

// consumerCore returns the client's topic consumer core, or
// ErrTopicsUnsupported.
func (c *Client[TTx]) consumerCore() (*topicCore, error) {
	if c.core == nil {
		return nil, droverdriver.ErrTopicsUnsupported
	}
	return c.core, nil
}

// Receive leases up to MaxBatches lanes of a subscription that have
// messages and returns their batches (none when nothing is waiting; the
// caller polls or waits for a publish). Every batch must be acknowledged
// (AckBatches) or extended (ExtendBatches) before its lease ends, or it is
// delivered again, and the delivery counts as an attempt (Delivery.Attempt):
// past the subscription's MaxAttempts the message is dead. It returns
// ErrTopicNotFound or ErrSubscriptionNotFound when the subscription is not
// stored.
func (c *Client[TTx]) Receive(ctx context.Context, p ReceiveParams) ([]*ReceivedBatch, error) {
	if err := validate.Topic(p.Topic); err != nil {
		return nil, err
	}
	if err := validate.Subscription(p.Subscription); err != nil {
		return nil, err
	}
	if err := validate.Owner(p.Owner); err != nil {
		return nil, err
	}
	p.MaxBatches = max(p.MaxBatches, 1)
	if p.BatchSize == 0 {
		p.BatchSize = 100
	}
	if p.BatchSize < 1 || p.BatchSize > 10_000 || p.MaxBatches > MaxTopicLanes {
		return nil, invalidf("receive: BatchSize %d must be between 1 and 10000, MaxBatches %d at most %d", p.BatchSize, p.MaxBatches, MaxTopicLanes)
	}
	if p.Lease == 0 {
		p.Lease = LeaseDurationDefault
	}
	if p.Lease < time.Millisecond || p.Lease > MaxReceiveLease {
		return nil, invalidf("receive: Lease %s must be between 1ms and %s (extend longer work)", p.Lease, MaxReceiveLease)
	}
	if p.MaxBytes == 0 {
		p.MaxBytes = ReceiveMaxBytesDefault
	}
	core, err := c.consumerCore()
	if err != nil {
		return nil, err
	}
	key, err := c.receiptKey(ctx, core.te)
	if err != nil {
		return nil, err
	}
	lanes, err := core.lease(ctx, leaseParams{refs: []droverdriver.SubscriptionRef{{Topic: p.Topic, Name: p.Subscription}},
		limits: []int{p.BatchSize}, owner: p.Owner, lease: p.Lease, max: p.MaxBatches, waiting: min(p.Lease, receiveWaiting)})
	if err != nil {
		return nil, err
	}
	if len(lanes) == 0 {
		_, err := core.te.SubscriptionGet(ctx, p.Topic, p.Subscription)
		return nil, err
	}
	batches, err := core.read(ctx, lanes, topicFetchRows, p.MaxBytes)
	if err != nil {
		return nil, err
	}
	out := make([]*ReceivedBatch, len(batches))
	for i, b := range batches {
		l := &b.lane
		r := receipt{Topic: l.Topic, Subscription: l.Subscription, Lane: l.Lane, Token: l.token, From: l.Cursor,
			To: engine.AckCursor(l.Cursor, b.rows), Count: len(b.rows), Bytes: b.bytes(), Attempt: l.Attempt, MaxAttempts: l.MaxAttempts}
		out[i] = &ReceivedBatch{Receipt: r.encode(key), Dropped: l.Dropped, Deliveries: b.deliveries()}
	}
	return out, nil
}

// receipts authenticates receipts of subscription sub of topic, naming the
// one at fault in its error.
func (c *Client[TTx]) decodeReceipts(ctx context.Context, core *topicCore, topic, sub string, what string, receipts []string) ([]receipt, error) {
	key, err := c.receiptKey(ctx, core.te)
	if err != nil {
		return nil, err
	}
	out := make([]receipt, len(receipts))
	for i, s := range receipts {
		if out[i], err = decodeReceipt(key, s, topic, sub); err != nil {
			// A subscription that is not stored is what to report: no
			// receipt of it can succeed.
			if _, missing := core.te.SubscriptionGet(ctx, topic, sub); errors.Is(missing, ErrTopicNotFound) || errors.Is(missing, ErrSubscriptionNotFound) {
				return nil, missing
			}
			return nil, fmt.Errorf("%s %d of %d: %w", what, i+1, len(receipts), err)
		}
	}
	return out, nil
}

// AckBatches acknowledges received batches of subscription sub of topic in
// one statement and reports, for each, whether it was accepted: a batch
// whose lease ended (and which was or will be delivered again) is
// rejected, and its failures are not retried either. Failed messages of
// accepted batches are read again from the store, as far as the batch
// handed out, and become retry jobs in the ack's transaction. A receipt
// that Receive did not hand out for this subscription, or that was
// altered, fails the whole call with ErrInvalid before anything is read or
// written.
func (c *Client[TTx]) AckBatches(ctx context.Context, topic, sub string, acks []BatchAck) ([]bool, error) {
	core, err := c.consumerCore()
	if err != nil {
		return nil, err
	}
	strs := make([]string, len(acks))
	for i, a := range acks {
		strs[i] = a.Receipt
	}
	rs, err := c.decodeReceipts(ctx, core, topic, sub, "ack", strs)
	if err != nil {
		return nil, err
	}
	p := engine.AckParams{Batches: make([]engine.AckBatch, len(acks))}
	for i, r := range rs {
		p.Batches[i] = engine.AckBatch{Ack: droverdriver.LaneAck{Topic: r.Topic, Subscription: r.Subscription, Lane: r.Lane,
			Token: r.Token, Cursor: r.To, Count: r.Count}, Attempt: r.Attempt, MaxAttempts: r.MaxAttempts,
			Failed: acks[i].Failed, FailAll: acks[i].FailAll, From: r.From, Bytes: r.Bytes}
	}
	outcomes, err := core.acknowledge(ctx, p)
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(outcomes))
	for i, o := range outcomes {
		out[i] = o.Accepted
	}
	return out, c.stored(ctx, core, topic, sub, out)
}

// ExtendBatches extends the leases of received batches of subscription sub
// of topic to lease from now (default LeaseDurationDefault, at most
// MaxReceiveLease) and reports, for each, whether it is still the
// consumer's: false means that its lease ended and another consumer may
// hold the lane, so its handling should stop.
func (c *Client[TTx]) ExtendBatches(ctx context.Context, topic, sub string, receipts []string, lease time.Duration) ([]bool, error) {
	if lease == 0 {
		lease = LeaseDurationDefault
	}
	if lease < time.Millisecond || lease > MaxReceiveLease {
		return nil, invalidf("extend: lease %s must be between 1ms and %s", lease, MaxReceiveLease)
	}
	return c.receiptLanes(ctx, topic, sub, "extend", receipts, func(core *topicCore, lanes []heldLane) ([]bool, error) {
		return core.extend(ctx, lanes, lease)
	})
}

// ReleaseBatches hands received batches of subscription sub of topic back
// at once, undelivered (a consumer shutting down): their lanes are free
// for other consumers, and the deliveries do not count as attempts. It
// reports, for each, whether it was still the consumer's.
func (c *Client[TTx]) ReleaseBatches(ctx context.Context, topic, sub string, receipts []string) ([]bool, error) {
	return c.receiptLanes(ctx, topic, sub, "release", receipts, func(core *topicCore, lanes []heldLane) ([]bool, error) {
		return core.release(ctx, lanes)
	})
}

// receiptLanes runs an extend or a release on the lanes of receipts.
func (c *Client[TTx]) receiptLanes(ctx context.Context, topic, sub, what string, receipts []string,
	run func(*topicCore, []heldLane) ([]bool, error)) ([]bool, error) {
	core, err := c.consumerCore()
	if err != nil {
		return nil, err
	}
	rs, err := c.decodeReceipts(ctx, core, topic, sub, what, receipts)
	if err != nil {
		return nil, err
	}
	lanes := make([]heldLane, len(rs))
	for i, r := range rs {
		lanes[i] = heldLane{LeasedLane: droverdriver.LeasedLane{Topic: r.Topic, Subscription: r.Subscription, Lane: r.Lane}, token: r.Token}
	}
	out, err := run(core, lanes)
	if err != nil {
		return nil, err
	}
	return out, c.stored(ctx, core, topic, sub, out)
}

// stored returns ErrTopicNotFound or ErrSubscriptionNotFound when no call
// of done succeeded and the subscription is not stored (deleted since the
// receipts were handed out): its receipts can never succeed.
func (c *Client[TTx]) stored(ctx context.Context, core *topicCore, topic, sub string, done []bool) error {
	for _, ok := range done {
		if ok {
			return nil
		}
	}
	_, err := core.te.SubscriptionGet(ctx, topic, sub)
	return err
}

// SubscriptionLane is one lane of a subscription, as SubscriptionLanes
// reports it.
type SubscriptionLane struct {
	Lane int
	// Cursor is the ID of the last message the lane acknowledged, 0 when
	// none.
	Cursor int64
	// Pending counts the messages past the cursor.
	Pending int64
	// Holder is the consumer that holds the lane's live lease ("" when
	// the lane is free), until LeaseExpiresAt.
	Holder         string
	LeaseExpiresAt *time.Time
	// Attempt counts the deliveries of the lane's next message so far:
	// more than 1 while it delivers, one message at a time, a batch whose
	// lease expired.
	Attempt int
}

// SubscriptionLanes reports the lanes of a subscription: cursor, pending
// messages, holder and attempt; ErrTopicNotFound or
// ErrSubscriptionNotFound when it is not stored.
func (c *Client[TTx]) SubscriptionLanes(ctx context.Context, topic, sub string) ([]SubscriptionLane, error) {
	core, err := c.consumerCore()
	if err != nil {
		return nil, err
	}
	rows, err := core.te.TopicLanes(ctx, topic, sub)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		if _, err := core.te.SubscriptionGet(ctx, topic, sub); err != nil {
			return nil, err
		}
	}
	out := make([]SubscriptionLane, len(rows))
	for i, r := range rows {
		out[i] = SubscriptionLane{Lane: r.Lane, Cursor: r.Cursor.ID, Pending: r.Pending, Holder: r.Holder,
			LeaseExpiresAt: r.LeaseExpiresAt, Attempt: r.Attempt}
	}
	return out, nil
}

// ReleaseLane frees a lane of a subscription whose holder hangs: its lease
// ends now, as if it had expired, so that another consumer takes the lane
// and delivers its batch again (the delivery counts as an attempt, so that
// a message that hangs every consumer goes dead); the old holder's extend
// finds the lane lost (a client's consumer stops the handler:
// ErrLaneLost) and its ack is refused. It reports
// whether the lane was held, and returns ErrTopicNotFound,
// ErrSubscriptionNotFound, or ErrInvalid for a lane the topic does not
// have.
func (c *Client[TTx]) ReleaseLane(ctx context.Context, topic, sub string, lane int) (bool, error) {
	core, err := c.consumerCore()
	if err != nil {
		return false, err
	}
	s, err := core.te.SubscriptionGet(ctx, topic, sub)
	if err != nil {
		return false, err
	}
	if lane < 0 || lane >= s.Lanes {
		return false, invalidf("lane %d: topic %s has lanes 0 to %d", lane, topic, s.Lanes-1)
	}
	return core.te.TopicLaneExpire(ctx, topic, sub, lane)
}
