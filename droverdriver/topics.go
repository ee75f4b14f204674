package droverdriver

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/droverhq/drover/drovertype"
)

// TopicExecutor is what a store runs for topics (docs/design/topics.md): a
// message is stored once per topic, and each subscription reads it through
// one cursor per lane, leased by one consumer at a time and advanced by a
// fenced ack. It is a separate interface from Executor so that a store
// without topics still satisfies the job contract; Drover finds it with a
// type assertion and reports ErrTopicsUnsupported when it is missing.
// Both bundled drivers implement it, on their own connections and inside a
// caller's transaction (UnwrapExecutor).
//
// Positions are (xid, id) pairs compared as a row, in commit order: a
// message committed before another was published sorts first. id is the
// message's sequence number. On stores where id order is commit order
// (SQLite: one writer) xid is 0. On stores whose ids can commit out of
// order (PostgreSQL) xid is given after the commit, by a sequencing pass
// that makes every message committed since the last pass readable at once
// under a value above every earlier pass's (docs/design/topics.md,
// "Visibility"). Either way what becomes readable later sorts after what
// is readable now, so a position never passes a message that a
// transaction still in flight may yet commit.
type TopicExecutor interface {
	// TopicCreate stores a topic unless one of that name exists, and
	// returns the stored topic either way (TopicRow.Created says which).
	TopicCreate(ctx context.Context, p TopicParams) (*TopicRow, error)

	// TopicList returns every topic with its subscriptions' names.
	TopicList(ctx context.Context) ([]*TopicRow, error)

	// TopicPublish stores messages, of any topics, in one statement and
	// returns their IDs in input order, and announces each topic
	// (TopicWake) once it commits. Lanes are chosen by the caller (the
	// engine). A message of a topic that is not stored is stored all the
	// same: the caller checks topics first.
	TopicPublish(ctx context.Context, msgs []PublishParams) ([]int64, error)

	// SubscriptionCreate stores a subscription and one lane row per lane
	// of its topic, positioned per p.Start. It is a no-op (reporting
	// false) when the subscription exists; it fails with ErrTopicNotFound when
	// the topic does not.
	SubscriptionCreate(ctx context.Context, p SubscriptionParams) (bool, error)

	// SubscriptionDelete removes a subscription and its lanes, reporting
	// whether it existed.
	SubscriptionDelete(ctx context.Context, topic, name string) (bool, error)

	// TopicDelete removes a topic with its subscriptions, their lanes and
	// every message of the topic, at once, reporting whether it existed.
	TopicDelete(ctx context.Context, name string) (bool, error)

	// TopicLease makes the messages committed so far readable (on a store
	// that sequences them), then leases up to Max lanes of the named
	// subscriptions (of any topics) that are free (no lease, or an expired
	// one) and have messages readable past their cursor, least recently
	// leased first, under one fresh Token, and at most the caller's fair
	// share of each subscription (ceil(lanes / active) less what it holds,
	// active counting the live holders and waiters of the subscription's
	// lanes and the caller). It returns the lanes with their
	// cursors and the batch each may deliver (LeasedLane), having
	// recorded that batch and counted the delivery in the lane row (the
	// attempt, the batch's bound and limit: docs/design/topics.md,
	// "Consumers"). When the caller got less than its share of a
	// subscription whose other lanes with messages others hold, it marks
	// one of those lanes as waited for by the caller until Now + Waiting:
	// later leases count the caller in the share, and the lane is not kept
	// past its holder's ack (TopicAck). One
	// statement serves every subscription a client consumes, so that more
	// topics do not mean more statements.
	TopicLease(ctx context.Context, p TopicLeaseParams) ([]LeasedLane, error)

	// TopicRead returns, for each range, at most Limits[i] readable
	// messages of the range's lane after Cursors[i], up to Tos[i], in (xid,
	// id) order. Each message carries the index of its range. With
	// MaxBytes, the messages are returned in range order while their
	// payload and metadata bytes stay within it, the first one whatever its
	// size: ranges past the budget get none.
	TopicRead(ctx context.Context, p TopicReadParams) ([]*MessageRow, error)

	// TopicAck applies acks in one statement, each fenced by
	// (subscription, lane, lease token): an accepted ack moves the lane's
	// cursor forward to its position (never back) and frees the lease,
	// or extends it for an ack that keeps the lane, and updates the
	// lane's attempt and batch (docs/design/topics.md, "Consumers"). It
	// returns the accepted acks, in any order, each saying whether the
	// lane was kept. Acks name each lane at most once (engine.LaneRounds);
	// the engine runs the statement, and the retry jobs of accepted acks,
	// in one transaction (engine.Ack).
	TopicAck(ctx context.Context, p TopicAckParams) ([]AckedLane, error)

	// TopicExtend extends the leases of lanes still held under their
	// tokens and returns the indexes of those it extended. Lanes are
	// named at most once.
	TopicExtend(ctx context.Context, p TopicExtendParams) ([]int, error)

	// TopicRelease frees the leases of lanes still held under their
	// tokens, cursors unmoved, taking back the attempt their lease
	// counted (a consumer handing its batch back undelivered), and
	// returns the indexes of those it released. Lanes are named at most
	// once.
	TopicRelease(ctx context.Context, p TopicExtendParams) ([]int, error)

	// TopicLanes returns the lanes of one subscription, by lane number,
	// with their cursor, the committed messages past it (made readable
	// first on a store that sequences them, as TopicLag does), the holder
	// of a live lease and the lane's attempt; none for a subscription that
	// is not stored.
	TopicLanes(ctx context.Context, topic, subscription string) ([]LaneRow, error)

	// TopicLaneExpire ends the live lease of one lane of a subscription
	// now, as if it had expired (an operator freeing a lane whose holder
	// hangs): the delivery stays counted, and the lease token goes, so
	// that the holder's next extend or ack finds the lane lost. It
	// reports whether the lane was held.
	TopicLaneExpire(ctx context.Context, topic, subscription string, lane int) (bool, error)

	// TopicRewind moves each lane of a subscription back to the position
	// before its first message published at or after p.Since (its first
	// message kept when p.Since is nil), unless the lane stands there or
	// before already, where it stays: a rewind delivers again, it never
	// skips. It ends every lease of the subscription's lanes and drops
	// their tokens, so that an ack of a batch out at the rewind is refused
	// and its messages are delivered again; a lane moved back starts its
	// attempts afresh, a live lease not moved takes back its delivery (as
	// TopicRelease does). It returns every lane of the subscription, in any
	// order, none when it is not stored. Positions follow commit order, not publish
	// times: a lane delivers again from its first message published at or
	// after p.Since, and so also a message published before it that
	// committed after that one.
	TopicRewind(ctx context.Context, p TopicRewindParams) ([]RewoundLane, error)

	// SubscriptionGet returns a stored subscription, or ErrTopicNotFound
	// when its topic is not stored, or ErrSubscriptionNotFound.
	SubscriptionGet(ctx context.Context, topic, name string) (*SubscriptionRow, error)

	// TopicReceiptKey returns the key that authenticates receipts,
	// storing candidate as that key when none is stored: every process
	// of the store gets the same key.
	TopicReceiptKey(ctx context.Context, candidate []byte) ([]byte, error)

	// TopicLag reports, per subscription of the named topics (of every
	// topic when none is named), how many committed messages are past its
	// cursors and when the oldest of them was published, in one statement,
	// ordered by topic and subscription.
	TopicLag(ctx context.Context, topics []string) ([]drovertype.SubscriptionLag, error)

	// TopicPublishers lists the open transactions that have published
	// messages, oldest first: each holds back its own messages until it
	// commits, and the retention of the generation it wrote to. A store
	// that cannot see other sessions' transactions returns none.
	TopicPublishers(ctx context.Context) ([]drovertype.OpenPublisher, error)

	// TopicGenerations lists the generations of stored messages, oldest
	// first; the last is the current one, which publishes write to. Their
	// ages are measured by the store's clock.
	TopicGenerations(ctx context.Context) ([]Generation, error)

	// TopicGenerationTopics reports, for each topic with messages in the
	// sealed generation gen, whether every lane of every subscription of
	// the topic is past all of them.
	TopicGenerationTopics(ctx context.Context, gen int64) ([]GenerationTopic, error)

	// TopicGenerationLock, run in a transaction (Executor.Tx), keeps
	// subscriptions from being created on the topics with messages in the
	// sealed generation gen until the transaction ends, so that a drop
	// decided in it from TopicGenerationTopics (read after the lock) and
	// marked with TopicDropMark cannot take messages a subscription
	// created meanwhile was promised (SubscriptionParams.Start
	// StartEarliest). A store whose write transactions exclude each other
	// has nothing to do.
	TopicGenerationLock(ctx context.Context, gen int64) error

	// TopicDropMark records that the sealed generation gen is to be
	// dropped: Generation.Dropping from then on, and TopicDrop removes it
	// whatever subscriptions are created meanwhile.
	TopicDropMark(ctx context.Context, gen int64) error

	// TopicRotate makes generation gen (the current one's successor)
	// current: it prepares its storage, moves the message sequence to its
	// first ID and seals every older generation. It is a no-op for a gen
	// that is not newer than the current one. It must not stall publishes
	// or reads while it waits for a lock.
	TopicRotate(ctx context.Context, gen int64) error

	// TopicDrop removes a generation marked by TopicDropMark, first adding
	// to each lane's Dropped count the messages it had not passed. A store
	// that drops a generation at once (a partition) does so in one call;
	// one that deletes rows removes at most p.Limit messages per call, each
	// call a transaction of its own, so that no call holds the store's
	// writer for long. It must not stall publishes or reads while it waits
	// for a lock, and runs outside any transaction.
	TopicDrop(ctx context.Context, p TopicDropParams) (TopicRemoved, error)

	// TopicPurge deletes up to p.Limit messages of topic p.Topic from the
	// sealed generation p.Gen, in (lane, xid, id) order after p.After,
	// first adding to each lane's Dropped count the messages it had not
	// passed: retention removes a topic's messages from a generation that
	// other topics still hold. Deleted rows free no space at once on a
	// store with MVCC, so it runs only for what retention requires.
	TopicPurge(ctx context.Context, p TopicPurgeParams) (TopicRemoved, error)

	// TopicTail makes the messages committed so far readable (on a store
	// that sequences them), then returns, of each lane i of topic (0 to
	// len(before)-1), the newest limit readable messages before
	// before[i] (PositionMax: the newest of the lane), in (lane, xid, id)
	// order, each with Range 0: a look at a topic that consumes nothing
	// (Client.PeekTopic), from which TopicRead goes on forwards and
	// TopicTail itself backwards, a page at a time.
	TopicTail(ctx context.Context, topic string, before []Position, limit int) ([]*MessageRow, error)
}

// GenerationWidth is how many message IDs one generation spans: generation
// g holds the IDs [g*GenerationWidth, (g+1)*GenerationWidth). A rotation
// moves the ID sequence to the next multiple, so IDs never run out (2^23
// generations of 2^40 IDs).
const GenerationWidth int64 = 1 << 40

// Generation is one generation of stored messages.
type Generation struct {
	Gen       int64
	CreatedAt time.Time
	// SealedAt is when a newer generation took over, nil for the current
	// one.
	SealedAt *time.Time
	// Age is how long ago the generation was created, and SealedFor how
	// long ago it was sealed (zero for the current one), both by the
	// store's clock, which stamped them: retention is decided by that
	// clock, never by a process's, which may be off.
	Age, SealedFor time.Duration
	// Settled reports that every transaction that could still write a
	// message into the sealed generation has ended, so what it holds is
	// final.
	Settled bool
	// Dropping reports that a drop was decided (TopicDropMark) and may be
	// under way.
	Dropping bool
	// LastID is the last message ID taken (any generation): for the
	// current generation, LastID - Gen*GenerationWidth bounds its size.
	LastID int64
}

// GenerationTopic is a topic's line of TopicGenerationTopics.
type GenerationTopic struct {
	Topic     string
	Retention time.Duration
	// Passed reports that every subscription of the topic has passed
	// every message of the topic in the generation.
	Passed bool
}

// TopicDropParams names a generation to drop and bounds one call's work.
type TopicDropParams struct {
	Gen   int64
	Limit int
}

// TopicPurgeParams names a topic's messages to delete from a generation.
type TopicPurgeParams struct {
	Gen   int64
	Topic string
	// After is where the previous call of a purge stopped (TopicRemoved.
	// Last); zero to start.
	After PurgeKey
	Limit int
}

// PurgeKey is a message's place in the (lane, xid, id) order TopicPurge
// goes through a topic's messages in.
type PurgeKey struct {
	Lane int
	Position
}

// TopicRemoved is what one TopicDrop or TopicPurge call removed.
type TopicRemoved struct {
	// Deleted counts the messages removed, Lost those of them some lane
	// had not passed (added to its Dropped count).
	Deleted, Lost int64
	// Done reports that nothing is left to remove: the generation is gone
	// (TopicDrop), or it holds no more messages of the topic (TopicPurge).
	Done bool
	// Last is where a TopicPurge stopped, for the next call's After.
	Last PurgeKey
}

// TopicWakePrefix starts the name a Listener's onInsert receives when
// messages were published to a topic: TopicWake(topic). No queue name
// starts with it, so job producers and topic consumers share one listening
// connection and one notification channel without mistaking each other's
// wake-ups. TopicPublish announces what it commits the way job inserts do.
const TopicWakePrefix = "/"

// TopicWake is the wake-up name of topic (TopicWakePrefix).
func TopicWake(topic string) string { return TopicWakePrefix + topic }

// ErrTopicsUnsupported is returned for topic calls on a store whose driver
// does not implement TopicExecutor.
var ErrTopicsUnsupported = errors.New("the store's driver does not implement topics")

// TopicParams describes a topic to create.
type TopicParams struct {
	Name string
	// Lanes is how many lanes the topic's subscriptions are split into:
	// at most that many consumers of one subscription work at once.
	Lanes int
	// Retention is how long messages are kept whatever the
	// subscriptions' positions; zero keeps them until every subscription
	// passed them.
	Retention time.Duration
	Now       time.Time
}

// TopicRow is a stored topic.
type TopicRow struct {
	Name          string
	Lanes         int
	Retention     time.Duration
	CreatedAt     time.Time
	Subscriptions []string
	// Created reports, from TopicCreate, that the call stored the topic;
	// false when it existed.
	Created bool
}

// PublishParams is one message to store. Metadata is encoded JSON.
type PublishParams struct {
	Topic    string
	Lane     int
	Key      string
	Payload  []byte
	Metadata []byte
}

// Start positions of a new subscription.
const (
	// StartLatest delivers every message published after the
	// subscription was created (and possibly a few committed just before,
	// never fewer).
	StartLatest = 0
	// StartEarliest delivers every message the topic still keeps.
	StartEarliest = 1
)

// SubscriptionParams describes a subscription to create.
type SubscriptionParams struct {
	Topic, Name string
	// MaxAttempts bounds the attempts of a failed message (its first
	// delivery included) before its retry job is discarded.
	MaxAttempts int
	Start       int
	Now         time.Time
}

// SubscriptionRef names a subscription of a topic.
type SubscriptionRef struct {
	Topic, Name string
}

// TopicLeaseParams selects lanes to lease.
type TopicLeaseParams struct {
	Subscriptions []SubscriptionRef
	// Limits[i] bounds the messages of a batch of Subscriptions[i] (its
	// batch size): what the lease records as the batch's limit.
	Limits []int
	Owner  string
	Token  drovertype.LeaseToken
	Lease  time.Duration
	Max    int
	// Waiting is how long the owner waits for a lane when the lease leaves
	// it short of its share (0: it never waits).
	Waiting time.Duration
	Now     time.Time
}

// Position is a place in a topic's (xid, id) order.
type Position struct {
	Xid int64
	ID  int64
}

// Less reports whether p sorts before q.
func (p Position) Less(q Position) bool {
	return p.Xid < q.Xid || p.Xid == q.Xid && p.ID < q.ID
}

// PositionMax sorts after every message: the bound of a batch that has
// none (a kept lane's).
var PositionMax = Position{Xid: math.MaxInt64, ID: math.MaxInt64}

// LeasedLane is a lane TopicLease handed out, with its cursor.
type LeasedLane struct {
	Topic        string
	Subscription string
	Lane         int
	Cursor       Position
	// MaxAttempts is the subscription's stored bound on deliveries of a
	// failed message.
	MaxAttempts int
	// Dropped counts the messages of the lane that retention removed
	// before the subscription read them (ErrSubscriptionBehind).
	Dropped int64
	// Attempt is how many times this lease's batch has been delivered,
	// this delivery included: 1 for a batch never delivered before, more
	// after expired leases (whose deliveries count). Past MaxAttempts the
	// batch's one message is dead.
	Attempt int
	// To bounds the batch: it ends at or before this position, the head
	// of the lane when it was leased (PositionMax: no bound).
	To Position
	// Limit bounds the messages of the batch: the subscription's batch
	// size, or 1 when the lane delivers one message at a time (Attempt
	// above 1: an earlier delivery's lease expired).
	Limit int
}

// TopicReadParams names ranges to read: lane Lanes[i] of topic Topics[i]
// after Cursors[i], up to Tos[i], at most Limits[i] messages.
type TopicReadParams struct {
	Topics  []string
	Lanes   []int
	Cursors []Position
	Tos     []Position
	Limits  []int
	// MaxBytes, when positive, bounds the payload and metadata bytes
	// returned, in range order, the first message whatever its size.
	MaxBytes int64
	// Sequence makes the messages committed so far readable first, on a
	// store that sequences them, as TopicLease does. A reader that leases
	// nothing, and so relies on no lease's pass (Client.PeekTopic), sets
	// it.
	Sequence bool
}

// Bytes is what a message counts against TopicReadParams.MaxBytes.
func (m *MessageRow) Bytes() int64 { return int64(len(m.Payload) + len(m.Metadata)) }

// MessageRow is a stored message, as TopicRead returns it.
type MessageRow struct {
	// Range is the index of the TopicReadParams range it was read for.
	Range       int
	ID          int64
	Xid         int64
	Lane        int
	Key         string
	Payload     []byte
	Metadata    []byte
	PublishedAt time.Time
}

// Position is the message's place in its topic's order.
func (m *MessageRow) Position() Position { return Position{Xid: m.Xid, ID: m.ID} }

// LaneAck acknowledges a leased lane up to Cursor.
type LaneAck struct {
	Topic        string
	Subscription string
	Lane         int
	Token        drovertype.LeaseToken
	Cursor       Position
	// Count is how many messages the batch delivered: an ack of a lane
	// that delivers one message at a time shrinks its suspect region by
	// as many.
	Count int
	// Keep holds the lease on, under the same token and extended by
	// TopicAckParams.Lease, instead of freeing the lane: the consumer
	// reads the lane again at once (its batch was full, so more is likely
	// waiting) without a lease statement, as a batch of at most Limit
	// messages. The store refuses to keep a lane that delivers one
	// message at a time or that another consumer waits for (it frees it).
	Keep  bool
	Limit int
}

// TopicAckParams is one ack statement, for lanes of any topics.
type TopicAckParams struct {
	Acks []LaneAck
	// Lease is how long kept lanes (LaneAck.Keep) stay leased from now.
	Lease time.Duration
	Now   time.Time
}

// AckedLane is an ack TopicAck accepted: its index in TopicAckParams.Acks,
// and whether the lane stayed leased (LaneAck.Keep, when the store kept
// it).
type AckedLane struct {
	Index int
	Kept  bool
}

// TopicExtendParams names leased lanes whose leases to extend (or
// release: Lease unused).
type TopicExtendParams struct {
	Lanes []LaneAck // Cursor, Count, Keep, Limit unused
	Lease time.Duration
	Now   time.Time
}

// LaneRow is one lane of a subscription, as TopicLanes returns it.
type LaneRow struct {
	Lane int
	// Cursor is the position of the last message the lane acknowledged.
	Cursor Position
	// Pending counts the messages past the cursor.
	Pending int64
	// Holder is the owner of the lane's live lease, "" when free, and
	// LeaseExpiresAt when that lease ends.
	Holder         string
	LeaseExpiresAt *time.Time
	// Attempt counts the deliveries of the lane's next message so far.
	Attempt int
}

// TopicRewindParams names a subscription to rewind and the point to
// rewind it to.
type TopicRewindParams struct {
	Topic, Subscription string
	// Since is the publish time to deliver again from; nil: the earliest
	// message kept.
	Since *time.Time
	Now   time.Time
}

// RewoundLane is one lane of a rewound subscription.
type RewoundLane struct {
	Lane int
	// From is the lane's cursor before the rewind, To after it (From when
	// the lane stood at or before the point).
	From, To Position
	// Released reports that a batch was out on the lane (a lease token,
	// live or expired): its ack is refused from now on.
	Released bool
}

// SubscriptionRow is a stored subscription.
type SubscriptionRow struct {
	Topic, Name string
	MaxAttempts int
	// Lanes is its topic's lane count.
	Lanes     int
	CreatedAt time.Time
}

// ErrSubscriptionBehind reports that a subscription lagged past its
// topic's retention: messages it had not read were dropped.
var ErrSubscriptionBehind = errors.New("subscription fell behind the topic's retention: messages were dropped unread")

// ErrTopicNotFound is returned when a call names a topic that is not
// stored.
var ErrTopicNotFound = errors.New("topic not found")

// ErrSubscriptionNotFound is returned when a call names a subscription
// that is not stored.
var ErrSubscriptionNotFound = errors.New("subscription not found")
