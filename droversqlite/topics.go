package droversqlite

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// The topic statements of droverdriver.TopicExecutor; the decisions (lanes,
// shared reads, which acks carry retries) are the engine's
// (internal/engine/topics.go).

var _ droverdriver.TopicExecutor = (*executor)(nil)

// Topic reads run on the reader pool: a WAL reader sees every committed
// message and never waits for the writer.
func init() {
	readQueries = append(readQueries, topicTail.name, topicLastID.name, topicLeaseCandidates.name, topicMaxAttempts.name, topicList.name, topicRead.name,
		topicReadLane.name, topicLag.name, topicGenerations.name, topicGenerationTopics.name, topicLanes.name, subscriptionGet.name)
}

func (e *executor) TopicCreate(ctx context.Context, p droverdriver.TopicParams) (*droverdriver.TopicRow, error) {
	var t *droverdriver.TopicRow
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := topicCreate.exec(ctx, e, tx, topicCreateParams{p.Name, p.Lanes, p.Retention.Milliseconds(), micros(p.Now)})
		if err != nil {
			return err
		}
		if t, err = e.topic(ctx, tx, p.Name); err != nil {
			return err
		}
		n, err := res.RowsAffected()
		t.Created = n > 0
		return err
	})
	return t, e.wrap("create topic", err)
}

// topic reads one topic through TopicList's statement.
func (e *executor) topic(ctx context.Context, tx *sql.Tx, name string) (*droverdriver.TopicRow, error) {
	var found *droverdriver.TopicRow
	err := topicList.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error {
		t, err := scanTopic(rows)
		if err == nil && t.Name == name {
			found = t
		}
		return err
	}, struct{}{})
	if err == nil && found == nil {
		err = droverdriver.ErrTopicNotFound
	}
	return found, err
}

func scanTopic(rows *sql.Rows) (*droverdriver.TopicRow, error) {
	var t droverdriver.TopicRow
	var retention, created int64
	var subs string
	if err := rows.Scan(&t.Name, &t.Lanes, &retention, &created, &subs); err != nil {
		return nil, err
	}
	t.Retention = time.Duration(retention) * time.Millisecond
	t.CreatedAt = fromMicros(created)
	if err := json.Unmarshal([]byte(subs), &t.Subscriptions); err != nil {
		return nil, err
	}
	return &t, nil
}

func (e *executor) TopicList(ctx context.Context) ([]*droverdriver.TopicRow, error) {
	var out []*droverdriver.TopicRow
	err := topicList.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		t, err := scanTopic(rows)
		out = append(out, t)
		return err
	}, struct{}{})
	return out, e.wrap("list topics", err)
}

func (e *executor) TopicPublish(ctx context.Context, msgs []droverdriver.PublishParams) ([]int64, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	bp := getBuf()
	defer putBuf(bp)
	b := append((*bp)[:0], '[')
	for i := range msgs {
		m := &msgs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = appendString(b, m.Topic)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(m.Lane), 10)
		b = append(b, ',')
		if m.Key == "" {
			b = append(b, "null"...)
		} else {
			b = appendString(b, m.Key)
		}
		b = append(b, ",\""...)
		b = hex.AppendEncode(b, m.Payload)
		b = append(b, "\","...)
		if len(m.Metadata) == 0 {
			b = append(b, `"{}"`...)
		} else {
			b = appendString(b, string(m.Metadata))
		}
		b = append(b, ']')
	}
	b = append(b, ']')
	*bp = b
	ids := make([]int64, len(msgs))
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := topicPublish.exec(ctx, e, tx, topicPublishParams{micros(time.Now()), string(b)})
		if err != nil {
			return err
		}
		last, err := res.LastInsertId()
		if err != nil {
			return err
		}
		// One statement under the write lock, AUTOINCREMENT, rows in
		// array order: the ids are consecutive and end at the last.
		for i := range ids {
			ids[i] = last - int64(len(ids)-1-i)
		}
		return nil
	})
	if err != nil {
		return nil, e.wrap("publish", err)
	}
	var wake []string
	for i := range msgs {
		if w := droverdriver.TopicWake(msgs[i].Topic); !slices.Contains(wake, w) {
			wake = append(wake, w)
		}
	}
	notify(e.hubKey, wake)
	return ids, nil
}

func (e *executor) SubscriptionCreate(ctx context.Context, p droverdriver.SubscriptionParams) (bool, error) {
	var made bool
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := subscriptionCreate.exec(ctx, e, tx, subscriptionCreateParams{p.Topic, p.Name, p.MaxAttempts, micros(p.Now)})
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			one, err := queryValue[int](ctx, e, tx, topicExists, p.Topic)
			if err == nil && one == 0 {
				err = droverdriver.ErrTopicNotFound
			}
			return err
		}
		made = true
		_, err = subscriptionLanes.exec(ctx, e, tx, subscriptionLanesParams{p.Topic, p.Name, p.Start})
		return err
	})
	if err == droverdriver.ErrTopicNotFound {
		return false, err
	}
	return made, e.wrap("create subscription", err)
}

func (e *executor) TopicDelete(ctx context.Context, name string) (bool, error) {
	var found bool
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, s := range []*stmt[string]{topicDeleteMessages, topicDeleteLanes, topicDeleteSubscriptions} {
			if _, err := s.exec(ctx, e, tx, name); err != nil {
				return err
			}
		}
		res, err := topicDelete.exec(ctx, e, tx, name)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		found = n > 0
		return err
	})
	return found, e.wrap("delete topic", err)
}

func (e *executor) SubscriptionDelete(ctx context.Context, topic, name string) (bool, error) {
	var found bool
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := subscriptionDelete.exec(ctx, e, tx, topicName{topic, name})
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		found = n > 0
		_, err = subscriptionDeleteLanes.exec(ctx, e, tx, topicName{topic, name})
		return err
	})
	return found, e.wrap("delete subscription", err)
}

func (e *executor) TopicLease(ctx context.Context, p droverdriver.TopicLeaseParams) ([]droverdriver.LeasedLane, error) {
	pairs := make([][2]string, len(p.Subscriptions))
	flat := make([]string, len(p.Subscriptions))
	limits := make(map[droverdriver.SubscriptionRef]int, len(p.Subscriptions))
	var topics []string
	for i, s := range p.Subscriptions {
		pairs[i] = [2]string{s.Topic, s.Name}
		flat[i] = s.Topic + "\x1f" + s.Name
		limits[s] = p.Limits[i]
		if !slices.Contains(topics, s.Topic) {
			topics = append(topics, s.Topic)
		}
	}
	subs, err := json.Marshal(pairs)
	if err != nil {
		return nil, err
	}
	topicsJSON, err := json.Marshal(topics)
	if err != nil {
		return nil, err
	}
	flatJSON, err := json.Marshal(flat)
	if err != nil {
		return nil, err
	}
	// order: candidates are found on a reader, then leased under the
	// write lock by primary key if still free and unmoved (queries.sql).
	var cands, waits []any
	err = topicLeaseCandidates.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var kind int
		var topic, sub string
		var lane, cursor, head sql.NullInt64
		if err := rows.Scan(&kind, &topic, &sub, &lane, &cursor, &head); err != nil {
			return err
		}
		if kind == 1 {
			waits = append(waits, []any{topic, sub, lane.Int64})
			return nil
		}
		limit := limits[droverdriver.SubscriptionRef{Topic: topic, Name: sub}]
		cands = append(cands, []any{topic, sub, lane.Int64, cursor.Int64, head.Int64, limit})
		return nil
	}, topicCandidatesParams{string(topicsJSON), string(flatJSON), micros(p.Now), p.Max, p.Owner})
	if err != nil || len(cands) == 0 && (len(waits) == 0 || p.Waiting <= 0) {
		return nil, e.wrap("lease lanes", err)
	}
	candJSON, err := json.Marshal(cands)
	if err != nil {
		return nil, err
	}
	waitJSON, err := json.Marshal(waits)
	if err != nil {
		return nil, err
	}
	var out []droverdriver.LeasedLane
	err = e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		out = out[:0]
		if len(waits) > 0 && p.Waiting > 0 {
			if _, err := topicWait.exec(ctx, e, tx, topicWaitParams{string(waitJSON), p.Owner, micros(p.Now.Add(p.Waiting))}); err != nil {
				return err
			}
		}
		if len(cands) == 0 {
			return nil
		}
		return topicLease.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error {
			var l droverdriver.LeasedLane
			err := rows.Scan(&l.Topic, &l.Subscription, &l.Lane, &l.Cursor.Xid, &l.Cursor.ID, &l.Dropped,
				&l.Attempt, &l.To.Xid, &l.To.ID, &l.Limit)
			out = append(out, l)
			return err
		}, topicLeaseParams{string(candJSON), p.Owner, p.Token[:], micros(p.Now.Add(p.Lease)), micros(p.Now)})
	})
	if err != nil || len(out) == 0 {
		return nil, e.wrap("lease lanes", err)
	}
	// The subscriptions' stored max attempts, read beside the lease: a
	// subscription's setting is fixed at creation.
	attempts := map[droverdriver.SubscriptionRef]int{}
	err = topicMaxAttempts.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var s droverdriver.SubscriptionRef
		var n int
		err := rows.Scan(&s.Topic, &s.Name, &n)
		attempts[s] = n
		return err
	}, string(subs))
	for i := range out {
		out[i].MaxAttempts = attempts[droverdriver.SubscriptionRef{Topic: out[i].Topic, Name: out[i].Subscription}]
	}
	return out, e.wrap("lease lanes", err)
}

func (e *executor) TopicRead(ctx context.Context, p droverdriver.TopicReadParams) ([]*droverdriver.MessageRow, error) {
	if len(p.Lanes) == 0 {
		return nil, nil
	}
	if p.MaxBytes > 0 {
		return e.topicReadBudget(ctx, p)
	}
	b := []byte{'['}
	maxLimit := 0
	for i, lane := range p.Lanes {
		maxLimit = max(maxLimit, p.Limits[i])
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = appendString(b, p.Topics[i])
		for _, n := range []int64{int64(lane), p.Cursors[i].Xid, p.Cursors[i].ID, p.Tos[i].Xid, p.Tos[i].ID, int64(p.Limits[i])} {
			b = append(b, ',')
			b = strconv.AppendInt(b, n, 10)
		}
		b = append(b, ']')
	}
	b = append(b, ']')
	var out []*droverdriver.MessageRow
	inRange := 0
	err := topicRead.query(ctx, e, nil, e.reader, scanMessages(&out, func(m *droverdriver.MessageRow) bool {
		// Rows come by range: each range keeps its own limit of them.
		if len(out) == 0 || out[len(out)-1].Range != m.Range {
			inRange = 0
		}
		inRange++
		return inRange <= p.Limits[m.Range]
	}), topicReadParams{string(b), maxLimit})
	return out, e.wrap("read messages", err)
}

// errBudgetSpent stops a budgeted read's scan at the first message past
// its byte budget.
var errBudgetSpent = errors.New("read budget spent")

// topicReadBudget is TopicRead within p.MaxBytes: range by range, each
// range's messages in order off the read index (TopicReadLane), a message
// taken while the bytes up to it stay within the budget, the first one
// whatever its size, and the read stops at the first one past it, whose
// successors are never read.
func (e *executor) topicReadBudget(ctx context.Context, p droverdriver.TopicReadParams) ([]*droverdriver.MessageRow, error) {
	var out []*droverdriver.MessageRow
	var used int64
	scan := scanMessages(&out, func(*droverdriver.MessageRow) bool { return true })
	for i, lane := range p.Lanes {
		err := topicReadLane.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
			if err := scan(rows); err != nil {
				return err
			}
			m := out[len(out)-1]
			if used > 0 && used+m.Bytes() > p.MaxBytes {
				out = out[:len(out)-1]
				return errBudgetSpent
			}
			m.Range, used = i, used+m.Bytes()
			return nil
		}, topicReadLaneParams{p.Topics[i], lane, p.Cursors[i].ID, p.Tos[i].ID, p.Limits[i]})
		if errors.Is(err, errBudgetSpent) {
			break
		}
		if err != nil {
			return nil, e.wrap("read messages", err)
		}
	}
	return out, nil
}

// scanMessages returns the scan of messages as TopicRead and TopicTail
// return them, appending to out those keep takes.
func scanMessages(out *[]*droverdriver.MessageRow, keep func(*droverdriver.MessageRow) bool) func(rows *sql.Rows) error {
	return func(rows *sql.Rows) error {
		var m droverdriver.MessageRow
		var key sql.NullString
		var meta string
		var created int64
		if err := rows.Scan(&m.Range, &m.ID, &m.Xid, &m.Lane, &key, &m.Payload, &meta, &created); err != nil {
			return err
		}
		if !keep(&m) {
			return nil
		}
		m.Key, m.Metadata, m.PublishedAt = key.String, []byte(meta), fromMicros(created)
		*out = append(*out, &m)
		return nil
	}
}

func (e *executor) TopicTail(ctx context.Context, topic string, before []droverdriver.Position, limit int) ([]*droverdriver.MessageRow, error) {
	ids := []byte{'['}
	for i, b := range before {
		if i > 0 {
			ids = append(ids, ',')
		}
		ids = strconv.AppendInt(ids, b.ID, 10)
	}
	ids = append(ids, ']')
	var out []*droverdriver.MessageRow
	err := topicTail.query(ctx, e, nil, e.reader, scanMessages(&out, func(*droverdriver.MessageRow) bool { return true }),
		topicTailParams{topic, string(ids), limit})
	return out, e.wrap("read the newest messages", err)
}

// appendLanes encodes lanes as the JSON array TopicAck, TopicExtend and
// TopicRelease take: [topic, subscription, lane, token in hex, cursor xid,
// cursor id, keep, count, limit].
func appendLanes(b []byte, acks []droverdriver.LaneAck) []byte {
	b = append(b, '[')
	for i, a := range acks {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = appendString(b, a.Topic)
		b = append(b, ',')
		b = appendString(b, a.Subscription)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(a.Lane), 10)
		b = append(b, ",\""...)
		b = a.Token.AppendHex(b)
		b = append(b, "\","...)
		b = strconv.AppendInt(b, a.Cursor.Xid, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, a.Cursor.ID, 10)
		if a.Keep {
			b = append(b, ",1,"...)
		} else {
			b = append(b, ",0,"...)
		}
		b = strconv.AppendInt(b, int64(a.Count), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(a.Limit), 10)
		b = append(b, ']')
	}
	return append(b, ']')
}

// laneKey names a lane of a subscription.
type laneKey struct {
	topic, sub string
	lane       int
}

// laneUpdate runs TopicAck, TopicExtend or TopicRelease, given by run, on
// acks encoded as JSON, and returns the indexes of the lanes it updated
// (and, with kept, whether each was kept: TopicAck's fourth column).
func laneUpdate(acks []droverdriver.LaneAck, kept bool, run func(lanes string, scan func(*sql.Rows) error) error) ([]droverdriver.AckedLane, error) {
	// SQLite's RETURNING cannot name the FROM table, so the lanes it
	// returns are mapped back to acks: unambiguous only while the acks
	// name each lane at most once, which the engine sees to
	// (engine.LaneRounds). Two acks of one lane are refused rather than
	// mapped to the wrong one.
	idx := make(map[laneKey]int, len(acks))
	for i, a := range acks {
		k := laneKey{a.Topic, a.Subscription, a.Lane}
		if _, dup := idx[k]; dup {
			return nil, fmt.Errorf("lane %d of %s/%s named twice in one statement", a.Lane, a.Topic, a.Subscription)
		}
		idx[k] = i
	}
	var out []droverdriver.AckedLane
	err := run(string(appendLanes(nil, acks)), func(rows *sql.Rows) error {
		var k laneKey
		var a droverdriver.AckedLane
		dest := []any{&k.topic, &k.sub, &k.lane}
		if kept {
			dest = append(dest, &a.Kept)
		}
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		if i, ok := idx[k]; ok {
			a.Index = i
			out = append(out, a)
		}
		return nil
	})
	return out, err
}

// indexes are the indexes of acked lanes.
func indexes(acked []droverdriver.AckedLane) []int {
	out := make([]int, len(acked))
	for i, a := range acked {
		out[i] = a.Index
	}
	return out
}

func (e *executor) TopicAck(ctx context.Context, p droverdriver.TopicAckParams) ([]droverdriver.AckedLane, error) {
	if len(p.Acks) == 0 {
		return nil, nil
	}
	var accepted []droverdriver.AckedLane
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		accepted, err = laneUpdate(p.Acks, true, func(lanes string, scan func(*sql.Rows) error) error {
			return topicAck.query(ctx, e, tx, e.writer, scan, topicAckParams{lanes, micros(p.Now), micros(p.Now.Add(p.Lease))})
		})
		return err
	})
	return accepted, e.wrap("ack lanes", err)
}

// lanesAt runs TopicExtend or TopicRelease in a write transaction.
func (e *executor) lanesAt(ctx context.Context, what string, s *stmt[laneUpdateParams], lanes []droverdriver.LaneAck, at time.Time) ([]int, error) {
	if len(lanes) == 0 {
		return nil, nil
	}
	var out []int
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		acked, err := laneUpdate(lanes, false, func(lanes string, scan func(*sql.Rows) error) error {
			return s.query(ctx, e, tx, e.writer, scan, laneUpdateParams{lanes, micros(at)})
		})
		out = indexes(acked)
		return err
	})
	return out, e.wrap(what, err)
}

func (e *executor) TopicExtend(ctx context.Context, p droverdriver.TopicExtendParams) ([]int, error) {
	return e.lanesAt(ctx, "extend lane leases", topicExtend, p.Lanes, p.Now.Add(p.Lease))
}

func (e *executor) TopicRelease(ctx context.Context, p droverdriver.TopicExtendParams) ([]int, error) {
	return e.lanesAt(ctx, "release lanes", topicRelease, p.Lanes, p.Now)
}

func (e *executor) TopicLanes(ctx context.Context, topic, subscription string) ([]droverdriver.LaneRow, error) {
	var out []droverdriver.LaneRow
	err := topicLanes.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var l droverdriver.LaneRow
		var holder sql.NullString
		var expires sql.NullInt64
		if err := rows.Scan(&l.Lane, &l.Cursor.Xid, &l.Cursor.ID, &l.Pending, &holder, &expires, &l.Attempt); err != nil {
			return err
		}
		l.Holder = holder.String
		if expires.Valid {
			t := fromMicros(expires.Int64)
			l.LeaseExpiresAt = &t
		}
		out = append(out, l)
		return nil
	}, topicLaneAt{topic, subscription, 0, micros(time.Now())})
	return out, e.wrap("read lanes", err)
}

func (e *executor) TopicLaneExpire(ctx context.Context, topic, subscription string, lane int) (bool, error) {
	var held bool
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		n, err := queryValue[int](ctx, e, tx, topicLaneExpire, topicLaneAt{topic, subscription, lane, micros(time.Now())})
		held = n == 1
		return err
	})
	return held, e.wrap("expire lane lease", err)
}

func (e *executor) TopicRewind(ctx context.Context, p droverdriver.TopicRewindParams) ([]droverdriver.RewoundLane, error) {
	var since *int64
	if p.Since != nil {
		us := micros(*p.Since)
		since = &us
	}
	var out []droverdriver.RewoundLane
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		out = out[:0]
		lane := map[int]int{}
		err := topicRewindLanes.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error {
			var l droverdriver.RewoundLane
			if err := rows.Scan(&l.Lane, &l.From.Xid, &l.From.ID, &l.Released); err != nil {
				return err
			}
			lane[l.Lane] = len(out)
			out = append(out, l)
			return nil
		}, topicName{p.Topic, p.Subscription})
		if err != nil {
			return err
		}
		return topicRewind.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error {
			var n int
			var to droverdriver.Position
			if err := rows.Scan(&n, &to.Xid, &to.ID); err != nil {
				return err
			}
			out[lane[n]].To = to
			return nil
		}, topicRewindParams{p.Topic, p.Subscription, since, micros(p.Now)})
	})
	return out, e.wrap("rewind subscription", err)
}

func (e *executor) SubscriptionGet(ctx context.Context, topic, name string) (*droverdriver.SubscriptionRow, error) {
	var s *droverdriver.SubscriptionRow
	var found bool
	err := subscriptionGet.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var row droverdriver.SubscriptionRow
		var sub sql.NullString
		var attempts, created sql.NullInt64
		if err := rows.Scan(&row.Topic, &sub, &attempts, &row.Lanes, &created); err != nil {
			return err
		}
		found = true
		if sub.Valid {
			row.Name, row.MaxAttempts, row.CreatedAt = sub.String, int(attempts.Int64), fromMicros(created.Int64)
			s = &row
		}
		return nil
	}, topicName{topic, name})
	switch {
	case err != nil:
		return nil, e.wrap("read subscription", err)
	case !found:
		return nil, droverdriver.ErrTopicNotFound
	case s == nil:
		return nil, droverdriver.ErrSubscriptionNotFound
	}
	return s, nil
}

func (e *executor) TopicReceiptKey(ctx context.Context, candidate []byte) ([]byte, error) {
	var key []byte
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := topicReceiptKeyInsert.exec(ctx, e, tx, topicReceiptKeyParams{candidate, micros(time.Now())}); err != nil {
			return err
		}
		var err error
		key, err = queryValue[[]byte](ctx, e, tx, topicReceiptKey, struct{}{})
		return err
	})
	return key, e.wrap("read receipt key", err)
}

func (e *executor) TopicLag(ctx context.Context, topics []string) ([]drovertype.SubscriptionLag, error) {
	var named sql.NullString // NULL: every topic
	if len(topics) > 0 {
		b, err := json.Marshal(topics)
		if err != nil {
			return nil, err
		}
		named = sql.NullString{String: string(b), Valid: true}
	}
	var out []drovertype.SubscriptionLag
	err := topicLag.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var l drovertype.SubscriptionLag
		var oldest sql.NullInt64
		if err := rows.Scan(&l.Topic, &l.Subscription, &l.Pending, &oldest, &l.Dropped); err != nil {
			return err
		}
		if oldest.Valid {
			t := fromMicros(oldest.Int64)
			l.OldestPending = &t
		}
		out = append(out, l)
		return nil
	}, named)
	return out, e.wrap("read lag", err)
}

// TopicPublishers returns none: a SQLite transaction that published holds
// the store's only write lock until it ends, so it holds back every
// writer, not only its own messages, and other connections cannot see it.
func (e *executor) TopicPublishers(context.Context) ([]drovertype.OpenPublisher, error) {
	return nil, nil
}

func (e *executor) TopicGenerations(ctx context.Context) ([]droverdriver.Generation, error) {
	var out []droverdriver.Generation
	err := topicGenerations.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var g droverdriver.Generation
		var created, age, sealedFor int64
		var sealed sql.NullInt64
		if err := rows.Scan(&g.Gen, &created, &sealed, &age, &sealedFor, &g.Settled, &g.Dropping, &g.LastID); err != nil {
			return err
		}
		g.CreatedAt = fromMicros(created)
		if sealed.Valid {
			t := fromMicros(sealed.Int64)
			g.SealedAt = &t
		}
		g.Age, g.SealedFor = time.Duration(age)*time.Microsecond, time.Duration(sealedFor)*time.Microsecond
		out = append(out, g)
		return nil
	}, struct{}{})
	return out, e.wrap("list generations", err)
}

// genRange is the ID range of generation gen.
func genRange(gen int64) idRange {
	return idRange{gen * droverdriver.GenerationWidth, (gen + 1) * droverdriver.GenerationWidth}
}

func (e *executor) TopicGenerationTopics(ctx context.Context, gen int64) ([]droverdriver.GenerationTopic, error) {
	var out []droverdriver.GenerationTopic
	err := topicGenerationTopics.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var t droverdriver.GenerationTopic
		var retention int64
		if err := rows.Scan(&t.Topic, &retention, &t.Passed); err != nil {
			return err
		}
		t.Retention = time.Duration(retention) * time.Millisecond
		out = append(out, t)
		return nil
	}, genRange(gen))
	return out, e.wrap("read generation", err)
}

// TopicGenerationLock has nothing to lock: the transaction it runs in
// holds the file's write lock, which creating a subscription waits for.
func (e *executor) TopicGenerationLock(context.Context, int64) error { return nil }

func (e *executor) TopicDropMark(ctx context.Context, gen int64) error {
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := topicDropMark.exec(ctx, e, tx, gen)
		return err
	})
	return e.wrap("mark generation dropping", err)
}

func (e *executor) TopicRotate(ctx context.Context, gen int64) error {
	now := micros(time.Now())
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := topicGenerationCreate.exec(ctx, e, tx, genAt{gen, now})
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil // not newer than the current generation
		}
		first := gen * droverdriver.GenerationWidth
		if _, err := topicSequenceMove.exec(ctx, e, tx, first); err != nil {
			return err
		}
		if _, err := topicSequenceCreate.exec(ctx, e, tx, first); err != nil {
			return err
		}
		_, err = topicSeal.exec(ctx, e, tx, genAt{gen, now})
		return err
	})
	return e.wrap("rotate generations", err)
}

// TopicDrop deletes the next p.Limit message IDs of the generation, in a
// write transaction of their own (SQLite has one writer: a generation of a
// million messages deleted at once held it for seconds), and forgets the
// generation once it is empty.
func (e *executor) TopicDrop(ctx context.Context, p droverdriver.TopicDropParams) (droverdriver.TopicRemoved, error) {
	var res droverdriver.TopicRemoved
	gen := genRange(p.Gen)
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res = droverdriver.TopicRemoved{}
		var first sql.NullInt64
		if err := topicDropNext.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error { return rows.Scan(&first) }, gen); err != nil {
			return err
		}
		if !first.Valid {
			res.Done = true
			_, err := topicGenerationForget.exec(ctx, e, tx, p.Gen)
			return err
		}
		// IDs are unique integers: the range holds at most Limit messages.
		chunk := idRange{first.Int64, min(first.Int64+int64(p.Limit), gen.To)}
		var err error
		if res.Lost, err = queryValue[int64](ctx, e, tx, topicChunkLost, chunk); err != nil {
			return err
		}
		if res.Lost > 0 {
			if _, err := topicChunkLose.exec(ctx, e, tx, chunk); err != nil {
				return err
			}
		}
		r, err := topicChunkDelete.exec(ctx, e, tx, chunk)
		if err == nil {
			res.Deleted, err = r.RowsAffected()
		}
		return err
	})
	return res, e.wrap("drop generation", err)
}

// TopicPurge deletes the topic's messages of the generation a lane at a
// time along the read index, up to p.Limit per call, in a write
// transaction of its own.
func (e *executor) TopicPurge(ctx context.Context, p droverdriver.TopicPurgeParams) (droverdriver.TopicRemoved, error) {
	var res droverdriver.TopicRemoved
	gen := genRange(p.Gen)
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res = droverdriver.TopicRemoved{Last: p.After}
		lane, after := p.After.Lane, max(p.After.ID, gen.From-1)
		for res.Deleted < int64(p.Limit) {
			var last sql.NullInt64
			err := topicPurgeNext.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error { return rows.Scan(&last) },
				purgeNextParams{topicLane{p.Topic, lane}, after, gen.To, p.Limit - int(res.Deleted)})
			if err != nil {
				return err
			}
			if !last.Valid {
				var next sql.NullInt64
				err := topicPurgeLane.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error { return rows.Scan(&next) },
					topicLane{p.Topic, lane})
				if err != nil || !next.Valid {
					res.Done = true
					return err
				}
				lane, after = int(next.Int64), gen.From-1
				continue
			}
			chunk := purgeChunk{topicLane{p.Topic, lane}, after, last.Int64}
			lost, err := queryValue[int64](ctx, e, tx, topicPurgeLost, chunk)
			if err != nil {
				return err
			}
			if lost > 0 {
				if _, err := topicPurgeLose.exec(ctx, e, tx, chunk); err != nil {
					return err
				}
			}
			r, err := topicPurgeDelete.exec(ctx, e, tx, chunk)
			if err != nil {
				return err
			}
			n, err := r.RowsAffected()
			if err != nil {
				return err
			}
			res.Deleted, res.Lost = res.Deleted+n, res.Lost+lost
			res.Last = droverdriver.PurgeKey{Lane: lane, Position: droverdriver.Position{ID: last.Int64}}
			after = last.Int64
		}
		return nil
	})
	return res, e.wrap("purge topic", err)
}
