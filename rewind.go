package drover

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/validate"
)

// Rewinding a subscription: an operator's "deliver these again", as a
// Kafka offset reset to the earliest or to a time, or Pub/Sub's seek to a
// time. A subscription's position is one cursor per lane, and lanes have
// no order between them, so a rewind names a point every lane can find
// its own place for: the earliest message kept, or a publish time.

// RewindOpts says where RewindSubscription takes a subscription back to.
type RewindOpts struct {
	// Since delivers again, in each lane, from the first message published
	// at or after it. Zero: from the earliest message the topic keeps. It
	// may not be in the future (by the client's clock).
	Since time.Time
}

// SubscriptionRewind is what a rewind did.
type SubscriptionRewind struct {
	// Lanes counts the lanes moved back; a lane already at or before the
	// point stays where it is (a rewind never skips a message).
	Lanes int
	// Released counts the batches that were out on the subscription's
	// lanes: their acks are refused from now on and their messages are
	// delivered again.
	Released int
	// Pending counts the messages the subscription has to deliver after
	// the rewind (those it delivers again and those it had not yet
	// delivered), and OldestPending is when the oldest of them was
	// published: later than Since when the topic no longer keeps the
	// messages published between them (retention removed them), or when
	// none was published then.
	Pending       int64
	OldestPending *time.Time
}

// RewindSubscription moves a subscription back so that it delivers again
// the messages published at or after opts.Since, or every message its
// topic keeps: each lane goes back to just before its first such message,
// and the lane's later messages follow in order, so each key's order
// holds. Positions follow commit order, so a message published before
// Since whose transaction committed after such a message's is delivered
// again too. Messages retention removed cannot be delivered again;
// SubscriptionRewind.OldestPending says where the subscription now starts.
// Every lease of the subscription ends: batches out are delivered again,
// and their acks are refused (an in-process consumer's handler is
// cancelled with ErrLaneLost at its next extend), so nothing is counted
// twice. Other subscriptions of the topic do not move. It returns
// ErrTopicNotFound or ErrSubscriptionNotFound for names not stored, and
// ErrInvalid for a Since in the future.
func (c *Client[TTx]) RewindSubscription(ctx context.Context, topic, sub string, opts RewindOpts) (*SubscriptionRewind, error) {
	te, err := c.topicExec(c.exec)
	if err != nil {
		return nil, err
	}
	now := c.now()
	p := droverdriver.TopicRewindParams{Topic: topic, Subscription: sub, Now: now}
	if !opts.Since.IsZero() {
		if err := validate.Time("since", opts.Since); err != nil {
			return nil, err
		}
		if opts.Since.After(now) {
			return nil, invalidf("since %s: in the future (now %s)", opts.Since.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339Nano))
		}
		p.Since = &opts.Since
	}
	lanes, err := te.TopicRewind(ctx, p)
	if err != nil {
		return nil, err
	}
	if len(lanes) == 0 {
		_, err := te.SubscriptionGet(ctx, topic, sub)
		switch {
		case errors.Is(err, ErrTopicNotFound):
			return nil, fmt.Errorf("%w: %q", ErrTopicNotFound, topic)
		case errors.Is(err, ErrSubscriptionNotFound):
			return nil, fmt.Errorf("%w: %q of topic %q", ErrSubscriptionNotFound, sub, topic)
		case err != nil:
			return nil, err
		}
	}
	out := &SubscriptionRewind{}
	for _, l := range lanes {
		if l.To != l.From {
			out.Lanes++
		}
		if l.Released {
			out.Released++
		}
	}
	lags, err := te.TopicLag(ctx, []string{topic})
	if err != nil {
		return nil, err
	}
	for _, l := range lags {
		if l.Subscription == sub {
			out.Pending, out.OldestPending = l.Pending, l.OldestPending
		}
	}
	return out, nil
}
