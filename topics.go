package drover

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/engine"
	"github.com/droverhq/drover/internal/validate"
)

// Topics: publish a message once, deliver it to every subscription of its
// topic (docs/topics.md, docs/design/topics.md). Publishing stores one row
// per message; each subscription reads through a cursor per lane, so a
// delivery writes nothing per message.

// Defaults and bounds of topics.
const (
	// TopicLanesDefault is how many lanes a topic gets unless
	// TopicOpts.Lanes says otherwise: the most consumers one subscription
	// runs at once, and the number of keys it works in parallel.
	TopicLanesDefault = 16
	// MaxTopicLanes bounds TopicOpts.Lanes.
	MaxTopicLanes = 1024
	// SubscriptionMaxAttemptsDefault is how often a failed message is
	// delivered, its first delivery included, before it is dead.
	SubscriptionMaxAttemptsDefault = 10
	// TopicRetentionDefault is how long a topic keeps a message that some
	// subscription has not passed, unless TopicOpts.Retention says
	// otherwise: the bound on what a lagging or abandoned subscription
	// makes the store hold.
	TopicRetentionDefault = 7 * 24 * time.Hour
	// topicRetainInterval bounds how often the leader rotates and drops
	// topic generations (maintenance.TopicRetainer).
	topicRetainInterval = 10 * time.Second
	// topicRetryKind is the kind of the jobs failed messages become.
	topicRetryKind = engine.TopicRetryKind
)

// ErrTopicNotFound is returned by calls that name a topic that is not
// stored.
var ErrTopicNotFound = droverdriver.ErrTopicNotFound

// Message is one message to publish.
type Message struct {
	// Topic is the topic of a message given to PublishMany. Publish and
	// PublishTx publish to the topic they are given, and refuse a message
	// that names another.
	Topic string
	// Key, when set, keeps the message in order with the others of its
	// key: every subscription handles a key's messages one batch at a
	// time, in publish order. Keyless messages spread over all lanes.
	Key string
	// Payload is delivered as is: any bytes, at most
	// MaxMessagePayloadBytes.
	Payload []byte
	// Metadata is free-form JSON (an object) stored with the message, at
	// most MaxMetadataBytes, of text a store can hold (no NUL, valid
	// UTF-8, no unpaired surrogate escape), as a job's metadata.
	Metadata json.RawMessage
}

// Delivery is a message as a subscription's handler receives it.
type Delivery struct {
	ID                  int64
	Topic, Subscription string
	Key                 string
	Payload             []byte
	Metadata            json.RawMessage
	PublishedAt         time.Time
	// Attempt counts the deliveries of this message to this subscription,
	// this one included: 1 for the first, more when an earlier delivery's
	// lease expired before its ack (a consumer died or hung with it) or
	// the message failed and comes from the retry queue. Past the
	// subscription's MaxAttempts the message is dead.
	Attempt int
}

// TopicOpts configure a new topic.
type TopicOpts struct {
	// Lanes splits every subscription of the topic into this many lanes
	// (default TopicLanesDefault). Fixed at creation.
	Lanes int
	// Retention is how long a message is kept for subscriptions that have
	// not read it (default TopicRetentionDefault; negative: until every
	// subscription has passed it, however long), measured by the store's
	// clock. It holds whatever other topics do; messages leave with their
	// generation (docs/topics.md), so they may stay up to one generation
	// longer, and a message every subscription has passed may go sooner,
	// with its generation. Fixed at creation.
	Retention time.Duration
}

// Topic is a stored topic.
type Topic struct {
	Name  string
	Lanes int
	// Retention is zero when messages are kept until every subscription
	// has passed them.
	Retention     time.Duration
	CreatedAt     time.Time
	Subscriptions []string
	// Created reports, from CreateTopic, that the call stored the topic;
	// false when an identical one existed.
	Created bool
}

// ErrTopicExists is returned by CreateTopic when a topic of that name is
// stored with other options than those asked for: a topic's lanes and
// retention are fixed at creation, so the call cannot give what it asks.
var ErrTopicExists = errors.New("topic exists with other options")

// SubscriptionOpts configure a new subscription.
type SubscriptionOpts struct {
	// FromEarliest delivers every message the topic keeps; by default a
	// subscription receives the messages published after its creation.
	FromEarliest bool
	// MaxAttempts bounds deliveries of a failed message, its first
	// included, before it is dead (a discarded job of the topic's retry
	// queue); default SubscriptionMaxAttemptsDefault, at least 2 (the first
	// delivery and the retry job's one run). Stored with the subscription:
	// every consumer uses the stored value.
	MaxAttempts int
}

// PublisherStallAfter is how long a transaction that published may stay
// open before the leader logs it (once) and the dashboard's Topics page
// shows it. Outbox transactions last milliseconds; one open for a minute
// was most likely forgotten.
const PublisherStallAfter = time.Minute

// ErrSubscriptionBehind is what a consumer reports (log, metric
// drover_topic_dropped_total) when its subscription lagged past the
// topic's retention and messages it had not read were dropped. The
// subscription goes on from the oldest message kept; SubscriptionLag
// reports the count.
var ErrSubscriptionBehind = droverdriver.ErrSubscriptionBehind

// RetryQueue is the queue of the jobs that failed messages of a topic's
// subscriptions become (the job's args name the subscription). One queue
// per topic rather than per subscription: each queue a client serves is a
// producer that polls, and a topic may have thousands of subscriptions.
func RetryQueue(topic string) string { return engine.TopicRetryQueue(topic) }

func (c *Client[TTx]) topicExec(exec droverdriver.Executor) (droverdriver.TopicExecutor, error) {
	te, ok := exec.(droverdriver.TopicExecutor)
	if !ok {
		return nil, droverdriver.ErrTopicsUnsupported
	}
	return te, nil
}

// CreateTopic stores a topic, or returns the stored one of that name
// (whose lanes stay as they were).
func (c *Client[TTx]) CreateTopic(ctx context.Context, name string, opts *TopicOpts) (*Topic, error) {
	if err := validate.Topic(name); err != nil {
		return nil, err
	}
	lanes := TopicLanesDefault
	if opts != nil && opts.Lanes != 0 {
		lanes = opts.Lanes
	}
	if lanes < 1 || lanes > MaxTopicLanes {
		return nil, invalidf("topic %s: Lanes %d must be between 1 and %d", name, lanes, MaxTopicLanes)
	}
	retention := TopicRetentionDefault
	if opts != nil && opts.Retention != 0 {
		retention = max(opts.Retention, 0)
		if opts.Retention > 0 && opts.Retention < time.Millisecond {
			return nil, invalidf("topic %s: Retention %s must be at least 1ms", name, opts.Retention)
		}
	}
	te, err := c.topicExec(c.exec)
	if err != nil {
		return nil, err
	}
	row, err := te.TopicCreate(ctx, droverdriver.TopicParams{Name: name, Lanes: lanes, Retention: retention, Now: time.Now()})
	if err != nil {
		return nil, err
	}
	c.topicLanes.Store(name, row.Lanes)
	// An option left unset matches whatever is stored, so that a call
	// that only makes sure the topic exists does not fail on one made
	// with other options.
	if !row.Created && opts != nil && (opts.Lanes != 0 && row.Lanes != lanes || opts.Retention != 0 && row.Retention != retention) {
		return nil, fmt.Errorf("topic %s: %w: stored with %d lanes and retention %s, asked for %d lanes and retention %s",
			name, ErrTopicExists, row.Lanes, retentionText(row.Retention), lanes, retentionText(retention))
	}
	return &Topic{Name: row.Name, Lanes: row.Lanes, Retention: row.Retention, CreatedAt: row.CreatedAt, Created: row.Created}, nil
}

// retentionText words a topic's retention for errors.
func retentionText(d time.Duration) string {
	if d == 0 {
		return "until every subscription passed"
	}
	return d.String()
}

// Topic returns the stored topic of that name, with its subscriptions, or
// ErrTopicNotFound.
func (c *Client[TTx]) Topic(ctx context.Context, name string) (*Topic, error) {
	if err := validate.Topic(name); err != nil {
		return nil, err
	}
	topics, err := c.Topics(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range topics {
		if t.Name == name {
			return t, nil
		}
	}
	return nil, fmt.Errorf("topic %s: %w", name, ErrTopicNotFound)
}

// DeleteTopic removes a topic with its subscriptions, their lanes and
// every message of the topic, at once, and reports whether it existed.
// Consumers of its subscriptions find them gone; jobs of its retry queue
// (RetryQueue) stay. A process that published to the topic keeps its lane
// count cached: until it restarts, its publishes to the deleted topic are
// stored for no subscription (and dropped by retention), and a topic of
// that name created again must keep the lane count, or those processes
// publish to lanes it does not have.
func (c *Client[TTx]) DeleteTopic(ctx context.Context, name string) (bool, error) {
	if err := validate.Topic(name); err != nil {
		return false, err
	}
	te, err := c.topicExec(c.exec)
	if err != nil {
		return false, err
	}
	deleted, err := te.TopicDelete(ctx, name)
	c.topicLanes.Delete(name)
	return deleted, err
}

// Topics lists the stored topics with their subscriptions.
func (c *Client[TTx]) Topics(ctx context.Context) ([]*Topic, error) {
	te, err := c.topicExec(c.exec)
	if err != nil {
		return nil, err
	}
	rows, err := te.TopicList(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*Topic, len(rows))
	for i, r := range rows {
		c.topicLanes.Store(r.Name, r.Lanes)
		out[i] = &Topic{Name: r.Name, Lanes: r.Lanes, Retention: r.Retention, CreatedAt: r.CreatedAt, Subscriptions: r.Subscriptions}
	}
	return out, nil
}

// lanesOf returns a topic's lane count, which never changes once the topic
// is stored, from the client's cache or the store.
func (c *Client[TTx]) lanesOf(ctx context.Context, topic string) (int, error) {
	if n, ok := c.topicLanes.Load(topic); ok {
		return n.(int), nil
	}
	topics, err := c.Topics(ctx)
	if err != nil {
		return 0, err
	}
	for _, t := range topics {
		if t.Name == topic {
			return t.Lanes, nil
		}
	}
	return 0, fmt.Errorf("publish to %q: %w", topic, ErrTopicNotFound)
}

// Publish stores msgs on topic in one round trip and returns their IDs.
// Every subscription of the topic that exists when the publish commits
// receives them.
func (c *Client[TTx]) Publish(ctx context.Context, topic string, msgs ...Message) ([]int64, error) {
	return c.publish(ctx, c.exec, topic, msgs)
}

// PublishTx is Publish inside the caller's transaction: the messages exist
// for subscribers once, and only if, it commits.
func (c *Client[TTx]) PublishTx(ctx context.Context, tx TTx, topic string, msgs ...Message) ([]int64, error) {
	return c.publish(ctx, c.driver.UnwrapExecutor(tx), topic, msgs)
}

// PublishMany stores messages of several topics, each naming its own
// (Message.Topic), in one statement, and returns their IDs in order: a
// chat server's messages to many rooms, or an event for several streams,
// in one round trip. Every topic must be stored; nothing is stored
// otherwise.
func (c *Client[TTx]) PublishMany(ctx context.Context, msgs []Message) ([]int64, error) {
	return c.publish(ctx, c.exec, "", msgs)
}

// PublishManyTx is PublishMany inside the caller's transaction.
func (c *Client[TTx]) PublishManyTx(ctx context.Context, tx TTx, msgs []Message) ([]int64, error) {
	return c.publish(ctx, c.driver.UnwrapExecutor(tx), "", msgs)
}

// publish stores msgs, on topic, or on their own topics when topic is "".
func (c *Client[TTx]) publish(ctx context.Context, exec droverdriver.Executor, topic string, msgs []Message) ([]int64, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	te, err := c.topicExec(exec)
	if err != nil {
		return nil, err
	}
	params := make([]droverdriver.PublishParams, len(msgs))
	lanes := map[string]int{}
	for i, m := range msgs {
		switch {
		case topic == "" && m.Topic == "":
			return nil, invalidf("message %d of %d: no topic", i+1, len(msgs))
		case topic != "" && m.Topic != "" && m.Topic != topic:
			return nil, invalidf("message %d of %d names topic %s, published to %s", i+1, len(msgs), validate.Echo(m.Topic), validate.Echo(topic))
		case topic != "":
			m.Topic = topic
		}
		if err := validateMessage(m); err != nil {
			return nil, fmt.Errorf("message %d of %d: %w", i+1, len(msgs), err)
		}
		if _, ok := lanes[m.Topic]; !ok {
			if lanes[m.Topic], err = c.lanesOf(ctx, m.Topic); err != nil {
				return nil, err
			}
		}
		params[i] = droverdriver.PublishParams{Topic: m.Topic, Key: m.Key, Payload: m.Payload, Metadata: m.Metadata}
	}
	engine.PublishLanes(params, lanes, mrand.Uint32())
	ids, err := te.TopicPublish(ctx, params)
	if err != nil {
		return nil, err
	}
	c.metrics.topicPublished.Add(int64(len(ids)))
	return ids, nil
}

// Limits of a message. Every subscription's consumer holds a batch of them
// in memory, and a lane's batch goes out in one response to HTTP
// consumers, so a message is bounded as a job's args are.
const (
	// MaxMessageKeyBytes bounds Message.Key.
	MaxMessageKeyBytes = 255
	// MaxMessagePayloadBytes bounds Message.Payload: the bound of a job's
	// args (MaxArgsBytes). Metadata is bounded by MaxMetadataBytes, as a
	// job's is.
	MaxMessagePayloadBytes = MaxArgsBytes
)

// validateMessage checks what the store must be able to hold and what a
// consumer can be handed: a key of text, a payload within its size limit,
// and metadata that is a JSON object of storable text within its limit,
// as a job's is. The payload is bytes and may be anything; the HTTP API
// checks the text of a payload sent as JSON.
func validateMessage(m Message) error {
	if len(m.Key) > MaxMessageKeyBytes {
		return invalidf("key: %d bytes is over the limit of %d", len(m.Key), MaxMessageKeyBytes)
	}
	if err := validate.Text("key", m.Key); err != nil {
		return err
	}
	if len(m.Payload) > MaxMessagePayloadBytes {
		return invalidf("payload: %d bytes is over the limit of %d", len(m.Payload), MaxMessagePayloadBytes)
	}
	if len(m.Metadata) == 0 {
		return nil
	}
	if err := validate.JSON("metadata", m.Metadata, MaxMetadataBytes); err != nil {
		return err
	}
	if b := bytes.TrimLeft(m.Metadata, " \t\r\n"); len(b) == 0 || b[0] != '{' {
		return invalidf("metadata: must be a JSON object")
	}
	return validate.JSONText("metadata", m.Metadata)
}

// CreateSubscription stores a subscription of topic and reports whether
// it was new; an existing one keeps its position and settings.
func (c *Client[TTx]) CreateSubscription(ctx context.Context, topic, name string, opts *SubscriptionOpts) (bool, error) {
	if err := validate.Subscription(name); err != nil {
		return false, err
	}
	if opts == nil {
		opts = &SubscriptionOpts{}
	}
	p := droverdriver.SubscriptionParams{Topic: topic, Name: name, MaxAttempts: opts.MaxAttempts, Now: time.Now()}
	if p.MaxAttempts == 0 {
		p.MaxAttempts = SubscriptionMaxAttemptsDefault
	}
	if p.MaxAttempts < 2 || p.MaxAttempts > 1_000_000 {
		return false, invalidf("subscription %s: MaxAttempts %d must be between 2 and 1000000", name, p.MaxAttempts)
	}
	if opts.FromEarliest {
		p.Start = droverdriver.StartEarliest
	}
	te, err := c.topicExec(c.exec)
	if err != nil {
		return false, err
	}
	return te.SubscriptionCreate(ctx, p)
}

// DeleteSubscription removes a subscription and its position, reporting
// whether it existed. Jobs of its retry queue stay until they finish.
func (c *Client[TTx]) DeleteSubscription(ctx context.Context, topic, name string) (bool, error) {
	te, err := c.topicExec(c.exec)
	if err != nil {
		return false, err
	}
	return te.SubscriptionDelete(ctx, topic, name)
}

// TopicPublishers lists the open transactions that have published messages
// and not committed, oldest first (PostgreSQL; SQLite reports none: there
// an open transaction holds the store's only write lock and every writer
// waits for it). Each delays only its own messages, which are delivered in
// commit order once it commits; a forgotten one also holds back the
// retention of the generation it wrote to.
func (c *Client[TTx]) TopicPublishers(ctx context.Context) ([]drovertype.OpenPublisher, error) {
	te, err := c.topicExec(c.exec)
	if err != nil {
		return nil, err
	}
	return te.TopicPublishers(ctx)
}

// SubscriptionLag reports how far each subscription of topic is behind:
// publishers may read it to slow down. It returns ErrTopicNotFound when
// topic is not stored.
func (c *Client[TTx]) SubscriptionLag(ctx context.Context, topic string) ([]drovertype.SubscriptionLag, error) {
	lag, err := c.SubscriptionLags(ctx, topic)
	if err != nil || len(lag) > 0 {
		return lag, err
	}
	// No subscription: the topic may have none, or not be stored.
	core, err := c.consumerCore()
	if err != nil {
		return nil, err
	}
	// A subscription named "" is never stored: the call tells a stored
	// topic (ErrSubscriptionNotFound) from one that is not.
	if _, err := core.te.SubscriptionGet(ctx, topic, ""); !errors.Is(err, ErrSubscriptionNotFound) {
		return nil, fmt.Errorf("lag of %q: %w", topic, err)
	}
	return lag, nil
}

// SubscriptionLags reports how far each subscription of the named topics
// is behind, of every topic when none is named, ordered by topic and
// subscription: one statement however many topics, for a dashboard or a
// publisher watching several.
func (c *Client[TTx]) SubscriptionLags(ctx context.Context, topics ...string) ([]drovertype.SubscriptionLag, error) {
	te, err := c.topicExec(c.exec)
	if err != nil {
		return nil, err
	}
	return te.TopicLag(ctx, topics)
}
