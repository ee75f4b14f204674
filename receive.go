package drover

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/engine"
)

// Consumers outside the process (HTTP workers, other languages) receive
// batches of a subscription and acknowledge them later, without holding a
// Client's consumer: Receive leases lanes and reads them, handing each
// batch out with a receipt; AckBatches moves the lanes past them, fenced by
// the receipt's lease token exactly as a Go consumer's ack is. The receipt
// carries what the ack needs (the lane, its lease token, the batch's first
// and last positions), so the server that answers keeps no state between
// the two calls and any server may take the ack.

// ReceiveParams selects batches to receive.
type ReceiveParams struct {
	Topic, Subscription string
	// Owner names the consumer in the lanes' leases.
	Owner string
	// MaxBatches is how many lanes (batches) to take at most (default 1).
	MaxBatches int
	// BatchSize bounds the messages of one batch (default 100).
	BatchSize int
	// Lease is how long the batches are the consumer's before they are
	// delivered again (default LeaseDurationDefault).
	Lease time.Duration
}

// ReceivedBatch is a batch of one lane of a subscription, in order.
type ReceivedBatch struct {
	// Receipt acknowledges the batch (AckBatches). It holds the lease
	// token: treat it like a credential of the consumer.
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
	Topic        string                  `json:"t"`
	Subscription string                  `json:"s"`
	Lane         int                     `json:"l"`
	Token        droverdriver.LeaseToken `json:"k"`
	From         droverdriver.Position   `json:"f"`
	To           droverdriver.Position   `json:"u"`
	Count        int                     `json:"n"`
	MaxAttempts  int                     `json:"m"`
}

func (r receipt) encode() string {
	b, _ := json.Marshal(r)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeReceipt(s string) (receipt, error) {
	var r receipt
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	if err != nil || r.Topic == "" || r.Subscription == "" || r.Count < 0 {
		return receipt{}, invalidf("receipt %s: not a receipt Receive handed out", echo(s))
	}
	return r, nil
}

// Receive leases up to MaxBatches lanes of a subscription that have
// messages and returns their batches (none when nothing is waiting; the
// caller polls or waits for a publish). Every batch must be acknowledged
// with AckBatches before its lease ends, or it is delivered again.
func (c *Client[TTx]) Receive(ctx context.Context, p ReceiveParams) ([]*ReceivedBatch, error) {
	if err := ValidateTopic(p.Topic); err != nil {
		return nil, err
	}
	if err := ValidateSubscription(p.Subscription); err != nil {
		return nil, err
	}
	if err := ValidateOwner(p.Owner); err != nil {
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
	te, err := c.topicExec(c.driver)
	if err != nil {
		return nil, err
	}
	token := droverdriver.NewLeaseToken()
	// A lease cancelled in flight may still commit: it runs to its end,
	// like the read after it (the lanes are leased then).
	leased, err := te.TopicLease(context.WithoutCancel(ctx), droverdriver.TopicLeaseParams{
		Subscriptions: []droverdriver.SubscriptionRef{{Topic: p.Topic, Name: p.Subscription}},
		Owner:         p.Owner, Token: token, Lease: p.Lease, Max: p.MaxBatches, Now: time.Now()})
	if err != nil || len(leased) == 0 {
		return nil, err
	}
	plan := engine.PlanReads(leased, p.BatchSize, 0) // MaxBatches bounds it
	rows, err := te.TopicRead(context.WithoutCancel(ctx), plan.Params)
	if err != nil {
		return nil, err
	}
	out := make([]*ReceivedBatch, len(leased))
	for i, batch := range engine.Deliveries(plan, rows) {
		l := leased[i]
		r := receipt{Topic: l.Topic, Subscription: l.Subscription, Lane: l.Lane, Token: token, From: l.Cursor,
			To: engine.AckCursor(l.Cursor, batch), Count: len(batch), MaxAttempts: l.MaxAttempts}
		b := &ReceivedBatch{Receipt: r.encode(), Dropped: l.Dropped, Deliveries: make([]*Delivery, len(batch))}
		for j, m := range batch {
			b.Deliveries[j] = delivery(l.Topic, l.Subscription, m)
		}
		out[i] = b
	}
	return out, nil
}

// delivery is the Delivery of a message read from the store.
func delivery(topic, sub string, m *droverdriver.MessageRow) *Delivery {
	return &Delivery{ID: m.ID, Topic: topic, Subscription: sub, Key: m.Key, Payload: m.Payload,
		Metadata: m.Metadata, PublishedAt: m.PublishedAt, Attempt: 1}
}

// AckBatches acknowledges received batches in one statement and reports,
// for each, whether it was accepted: a batch whose lease ended (and which
// was or will be delivered again) is rejected, and its failures are not
// retried either. Failed messages are read again from the store to become
// retry jobs.
func (c *Client[TTx]) AckBatches(ctx context.Context, acks []BatchAck) ([]bool, error) {
	te, err := c.topicExec(c.driver)
	if err != nil {
		return nil, err
	}
	p := droverdriver.TopicAckParams{Now: time.Now()}
	receipts := make([]receipt, len(acks))
	for i, a := range acks {
		r, err := decodeReceipt(a.Receipt)
		if err != nil {
			return nil, fmt.Errorf("ack %d of %d: %w", i+1, len(acks), err)
		}
		receipts[i] = r
		p.Acks = append(p.Acks, droverdriver.LaneAck{Topic: r.Topic, Subscription: r.Subscription, Lane: r.Lane, Token: r.Token, Cursor: r.To})
		if len(a.Failed) == 0 && a.FailAll == "" || r.Count == 0 {
			continue
		}
		// The batch is read again from where it started; messages that
		// retention dropped meanwhile are not retried.
		rows, err := te.TopicRead(ctx, droverdriver.TopicReadParams{Topics: []string{r.Topic}, Lanes: []int{r.Lane},
			Cursors: []droverdriver.Position{r.From}, Limit: r.Count})
		if err != nil {
			return nil, err
		}
		for _, m := range rows {
			cause, failed := a.Failed[m.ID]
			if a.FailAll != "" {
				cause, failed = a.FailAll, true
			}
			if !failed || r.To.Less(m.Position()) {
				continue
			}
			job, err := retryJob(r.Topic, r.Subscription, r.MaxAttempts, m, cause, time.Now().Add(c.config.RetryPolicy(1)))
			if err != nil {
				return nil, err
			}
			p.Retries = append(p.Retries, job)
			p.RetryAck = append(p.RetryAck, i)
		}
	}
	accepted, err := te.TopicAck(ctx, p)
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(acks))
	for _, i := range accepted {
		out[i] = true
		c.metrics.topicDelivered.Add(int64(receipts[i].Count))
	}
	return out, nil
}
