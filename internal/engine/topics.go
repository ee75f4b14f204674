package engine

import (
	"hash/fnv"
	"time"

	"github.com/droverhq/drover/droverdriver"
)

// The store-neutral decisions of topics (docs/design/topics.md): which lane
// a message goes to, how the lanes a lease returned are read with as few
// ranges as possible, and which messages each leased lane delivers.

// KeylessRun is how many keyless messages of one publish go to the same
// lane before the next lane takes over.
const KeylessRun = 100

// PublishLanes sets the lane of each message, of a topic with
// lanes[msg.Topic] lanes. A keyed message goes to the lane of its key, so
// that a key's messages keep their order within one lane. Keyless messages
// of one topic in one publish go to one lane in runs of KeylessRun, lane
// after lane from start (any number: the caller varies it between calls),
// so that successive publishes use every lane's consumer. A run rather
// than one message per lane, like Kafka's sticky partitioner: each lane a
// publish touches costs every subscription a lease, a read and an ack of
// its own, so 100 messages spread one by one over 4 lanes cost four
// deliveries per subscription where one would do.
func PublishLanes(msgs []droverdriver.PublishParams, lanes map[string]int, start uint32) {
	keyless := make(map[string]uint32, len(lanes))
	for i := range msgs {
		m := &msgs[i]
		n := lanes[m.Topic]
		if m.Key != "" {
			m.Lane = KeyLane(m.Key, n)
			continue
		}
		m.Lane = int((start + keyless[m.Topic]/KeylessRun) % uint32(n))
		keyless[m.Topic]++
	}
}

// KeyLane is the lane of key in a topic of lanes lanes (FNV-1a).
func KeyLane(key string, lanes int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return int(h.Sum32() % uint32(lanes))
}

// ReadPlan is how the lanes of one lease are read: subscriptions of a topic
// often stand at the same position of a lane, and each distinct (lane,
// cursor) range is read once and delivered to all of them. That is what
// makes a fan-out to fifty subscriptions cost one read, not fifty.
type ReadPlan struct {
	Params droverdriver.TopicReadParams
	// RangeOf[i] is the range of Params that leased lane i is read from.
	RangeOf []int
}

// PlanReads groups leased lanes by (topic, lane, cursor) into the ranges
// of one TopicRead, each reading up to the furthest bound and the largest
// limit of its lanes (Deliveries gives each lane its own share), and of at
// most maxRows messages in all (maxRows <= 0: no bound): with ranges whose
// limits add up to more, each range reads fewer messages (at least one).
// A consumer whose subscriptions lag at many different positions would
// otherwise read capacity × limit rows in one statement and spend longer
// on it, and on their handlers, than its leases last; smaller batches keep
// every lane moving instead of leaving some for later. maxBytes bounds the
// payload and metadata the read returns (TopicReadParams.MaxBytes).
func PlanReads(leased []droverdriver.LeasedLane, maxRows int, maxBytes int64) ReadPlan {
	type rng struct {
		topic  string
		lane   int
		cursor droverdriver.Position
	}
	plan := ReadPlan{Params: droverdriver.TopicReadParams{MaxBytes: maxBytes}, RangeOf: make([]int, len(leased))}
	seen := make(map[rng]int, len(leased))
	rows := 0
	for i, l := range leased {
		k := rng{l.Topic, l.Lane, l.Cursor}
		r, ok := seen[k]
		if !ok {
			r = len(plan.Params.Lanes)
			seen[k] = r
			plan.Params.Topics = append(plan.Params.Topics, l.Topic)
			plan.Params.Lanes = append(plan.Params.Lanes, l.Lane)
			plan.Params.Cursors = append(plan.Params.Cursors, l.Cursor)
			plan.Params.Tos = append(plan.Params.Tos, l.To)
			plan.Params.Limits = append(plan.Params.Limits, 0)
		}
		if plan.Params.Tos[r].Less(l.To) {
			plan.Params.Tos[r] = l.To
		}
		if l.Limit > plan.Params.Limits[r] {
			rows += l.Limit - plan.Params.Limits[r]
			plan.Params.Limits[r] = l.Limit
		}
		plan.RangeOf[i] = r
	}
	if n := len(plan.Params.Lanes); maxRows > 0 && rows > maxRows {
		cut := max(maxRows/n, 1)
		for r := range plan.Params.Limits {
			plan.Params.Limits[r] = min(plan.Params.Limits[r], cut)
		}
	}
	return plan
}

// LaneBatch is what one leased lane delivers.
type LaneBatch struct {
	Rows []*droverdriver.MessageRow
	// Full says that the batch holds as many messages as it could (its
	// limit, or its range's when the read was cut), so that more are
	// likely waiting.
	Full bool
}

// Deliveries returns, for each leased lane, the messages it delivers, in
// (xid, id) order, from the rows TopicRead returned for plan: those of its
// range up to its own bound, at most its own limit. A lane may get none
// (a kept lane with nothing new, a range past the read's byte budget, or
// one retention emptied): the caller hands it back (TopicRelease).
func Deliveries(plan ReadPlan, leased []droverdriver.LeasedLane, rows []*droverdriver.MessageRow) []LaneBatch {
	byRange := make([][]*droverdriver.MessageRow, len(plan.Params.Lanes))
	for _, m := range rows {
		if m.Range >= 0 && m.Range < len(byRange) {
			byRange[m.Range] = append(byRange[m.Range], m)
		}
	}
	out := make([]LaneBatch, len(plan.RangeOf))
	for i, r := range plan.RangeOf {
		l := leased[i]
		limit := min(l.Limit, plan.Params.Limits[r])
		batch := byRange[r]
		n := 0
		for n < len(batch) && n < limit && !l.To.Less(batch[n].Position()) {
			n++
		}
		out[i] = LaneBatch{Rows: batch[:n:n], Full: n == limit}
	}
	return out
}

// AckCursor is where an ack moves a lane that delivered batch from cursor:
// to its last message, failed ones included (they leave the lane as retry
// jobs), or nowhere when the batch was empty.
func AckCursor(cursor droverdriver.Position, batch []*droverdriver.MessageRow) droverdriver.Position {
	if len(batch) == 0 {
		return cursor
	}
	return batch[len(batch)-1].Position()
}

// Retention (docs/design/topics.md, "Retention"): messages are stored in
// generations, ID ranges of droverdriver.GenerationWidth. The leader
// rotates the current generation once it is large or old enough, drops a
// sealed one whole once nothing it holds is still owed to a subscription
// within its topic's retention, and deletes from a sealed generation it
// cannot drop yet the messages of the topics whose retention ran out, so
// that each topic's retention holds whatever other topics share its
// generations. Every age is the store's (Generation.Age, SealedFor).

// ShouldRotate reports whether the current generation cur should be sealed
// and succeeded: it holds a message, and at least maxMessages of them or it
// is maxAge old. An empty generation is never rotated, so an idle store
// does not pile up empty partitions.
func ShouldRotate(cur droverdriver.Generation, maxMessages int64, maxAge time.Duration) bool {
	first := max(cur.Gen*droverdriver.GenerationWidth, 1)
	used := cur.LastID - first + 1
	if used <= 0 {
		return false
	}
	return used >= maxMessages || cur.Age >= maxAge
}

// Expired reports whether topic t's retention has run out for the
// messages of the sealed generation g: t has a retention, and g was sealed
// at least that long ago (its newest message is no younger than the
// seal).
func Expired(g droverdriver.Generation, t droverdriver.GenerationTopic) bool {
	return g.SealedAt != nil && t.Retention > 0 && g.SealedFor >= t.Retention
}

// Droppable reports whether the sealed generation g, whose topics are
// topics (TopicGenerationTopics), may leave the store whole: it is settled
// (no transaction can still add to it), and for every topic in it, every
// subscription has passed its messages or the topic's retention has run
// out (Expired). A subscription that lags past retention never holds a
// generation back; it is told of what it lost
// (droverdriver.ErrSubscriptionBehind).
func Droppable(g droverdriver.Generation, topics []droverdriver.GenerationTopic) bool {
	if g.SealedAt == nil || !g.Settled {
		return false
	}
	for _, t := range topics {
		if !t.Passed && !Expired(g, t) {
			return false
		}
	}
	return true
}

// Purges returns the topics whose messages retention deletes from the
// sealed, settled generation g that is not Droppable: those whose
// retention ran out. Topics that every subscription has passed but whose
// retention has not run out stay until the generation goes or their
// retention runs out, whichever is first: deleting rows costs what a
// whole drop spares (dead tuples, index churn), so it is spent only where
// retention requires it.
func Purges(g droverdriver.Generation, topics []droverdriver.GenerationTopic) []string {
	if g.SealedAt == nil || !g.Settled {
		return nil
	}
	var out []string
	for _, t := range topics {
		if Expired(g, t) {
			out = append(out, t.Topic)
		}
	}
	return out
}
