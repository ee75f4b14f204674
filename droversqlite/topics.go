package droversqlite

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"github.com/droverhq/drover/droverdriver"
)

// The topic statements of droverdriver.TopicExecutor; the decisions (lanes,
// shared reads, which acks carry retries) are the engine's
// (internal/engine/topics.go).

var _ droverdriver.TopicExecutor = (*executor)(nil)

// Topic reads run on the reader pool: a WAL reader sees every committed
// message and never waits for the writer.
func init() {
	readQueries = append(readQueries, topicLastID.name, topicLeaseCandidates.name, topicMaxAttempts.name, topicList.name, topicRead.name, topicLag.name, topicGenerations.name, topicGenerationTopics.name)
}

func (e *executor) TopicCreate(ctx context.Context, p droverdriver.TopicParams) (*droverdriver.TopicRow, error) {
	var t *droverdriver.TopicRow
	err := e.writeTx(ctx, func(tx *sql.Tx) error {
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
	err := e.writeTx(ctx, func(tx *sql.Tx) error {
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
	err := e.writeTx(ctx, func(tx *sql.Tx) error {
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
	err := e.writeTx(ctx, func(tx *sql.Tx) error {
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
	err := e.writeTx(ctx, func(tx *sql.Tx) error {
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
	var topics []string
	for i, s := range p.Subscriptions {
		pairs[i] = [2]string{s.Topic, s.Name}
		flat[i] = s.Topic + "\x1f" + s.Name
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
	var cands []any
	err = topicLeaseCandidates.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var topic, sub string
		var lane, cursor int64
		if err := rows.Scan(&topic, &sub, &lane, &cursor); err != nil {
			return err
		}
		cands = append(cands, []any{topic, sub, lane, cursor})
		return nil
	}, topicCandidatesParams{string(topicsJSON), string(flatJSON), micros(p.Now), p.Max})
	if err != nil || len(cands) == 0 {
		return nil, e.wrap("lease lanes", err)
	}
	candJSON, err := json.Marshal(cands)
	if err != nil {
		return nil, err
	}
	var out []droverdriver.LeasedLane
	err = e.writeTx(ctx, func(tx *sql.Tx) error {
		out = out[:0]
		return topicLease.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error {
			var l droverdriver.LeasedLane
			err := rows.Scan(&l.Topic, &l.Subscription, &l.Lane, &l.Cursor.Xid, &l.Cursor.ID, &l.Dropped)
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
	b := []byte{'['}
	for i, lane := range p.Lanes {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = appendString(b, p.Topics[i])
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(lane), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, p.Cursors[i].Xid, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, p.Cursors[i].ID, 10)
		b = append(b, ']')
	}
	b = append(b, ']')
	var out []*droverdriver.MessageRow
	err := topicRead.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var m droverdriver.MessageRow
		var key sql.NullString
		var meta string
		var created int64
		if err := rows.Scan(&m.Range, &m.ID, &m.Xid, &m.Lane, &key, &m.Payload, &meta, &created); err != nil {
			return err
		}
		m.Key, m.Metadata, m.PublishedAt = key.String, []byte(meta), fromMicros(created)
		out = append(out, &m)
		return nil
	}, topicReadParams{string(b), p.Limit})
	return out, e.wrap("read messages", err)
}

// appendLanes encodes lanes as the JSON array TopicAck and TopicExtend
// take: [topic, subscription, lane, token in hex, cursor xid, cursor id,
// keep].
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
			b = append(b, ",1]"...)
		} else {
			b = append(b, ",0]"...)
		}
	}
	return append(b, ']')
}

// laneKey names a lane of a subscription.
type laneKey struct {
	topic, sub string
	lane       int
}

// laneUpdate runs TopicAck or TopicExtend, given by run, on acks encoded
// as JSON, and returns the indexes of the lanes it updated.
func laneUpdate(acks []droverdriver.LaneAck, run func(lanes string, scan func(*sql.Rows) error) error) ([]int, error) {
	// SQLite's RETURNING cannot name the FROM table, so the lanes it
	// returns are mapped back to acks, which name each lane at most once.
	idx := make(map[laneKey]int, len(acks))
	for i, a := range acks {
		idx[laneKey{a.Topic, a.Subscription, a.Lane}] = i
	}
	var out []int
	err := run(string(appendLanes(nil, acks)), func(rows *sql.Rows) error {
		var k laneKey
		if err := rows.Scan(&k.topic, &k.sub, &k.lane); err != nil {
			return err
		}
		if i, ok := idx[k]; ok {
			out = append(out, i)
		}
		return nil
	})
	return out, err
}

func (e *executor) TopicAck(ctx context.Context, p droverdriver.TopicAckParams) ([]int, error) {
	if len(p.Acks) == 0 {
		return nil, nil
	}
	var accepted []int
	err := e.writeTx(ctx, func(tx *sql.Tx) error {
		var err error
		accepted, err = laneUpdate(p.Acks, func(lanes string, scan func(*sql.Rows) error) error {
			return topicAck.query(ctx, e, tx, e.writer, scan, topicAckParams{lanes, micros(p.Now), micros(p.Now.Add(p.Lease))})
		})
		if err != nil {
			return err
		}
		// order: failed messages become jobs in the ack's transaction,
		// only for acks the fence accepted.
		jobs := droverdriver.AcceptedRetries(p, accepted)
		if len(jobs) == 0 {
			return nil
		}
		inner := executor{shared: e.shared, tx: tx}
		_, err = inner.JobInsertMany(ctx, jobs)
		return err
	})
	return accepted, e.wrap("ack lanes", err)
}

func (e *executor) TopicExtend(ctx context.Context, p droverdriver.TopicExtendParams) ([]int, error) {
	if len(p.Lanes) == 0 {
		return nil, nil
	}
	var out []int
	err := e.writeTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = laneUpdate(p.Lanes, func(lanes string, scan func(*sql.Rows) error) error {
			return topicExtend.query(ctx, e, tx, e.writer, scan, laneUpdateParams{lanes, micros(p.Now.Add(p.Lease))})
		})
		return err
	})
	return out, e.wrap("extend lane leases", err)
}

func (e *executor) TopicLag(ctx context.Context, topics []string) ([]droverdriver.SubscriptionLag, error) {
	var named sql.NullString // NULL: every topic
	if len(topics) > 0 {
		b, err := json.Marshal(topics)
		if err != nil {
			return nil, err
		}
		named = sql.NullString{String: string(b), Valid: true}
	}
	var out []droverdriver.SubscriptionLag
	err := topicLag.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var l droverdriver.SubscriptionLag
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
func (e *executor) TopicPublishers(context.Context) ([]droverdriver.OpenPublisher, error) {
	return nil, nil
}

func (e *executor) TopicGenerations(ctx context.Context) ([]droverdriver.Generation, error) {
	var out []droverdriver.Generation
	err := topicGenerations.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var g droverdriver.Generation
		var created int64
		var sealed sql.NullInt64
		if err := rows.Scan(&g.Gen, &created, &sealed, &g.Settled, &g.LastID); err != nil {
			return err
		}
		g.CreatedAt = fromMicros(created)
		if sealed.Valid {
			t := fromMicros(sealed.Int64)
			g.SealedAt = &t
		}
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

func (e *executor) TopicRotate(ctx context.Context, gen int64) error {
	now := micros(time.Now())
	err := e.writeTx(ctx, func(tx *sql.Tx) error {
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

func (e *executor) TopicDrop(ctx context.Context, gen int64) (int64, error) {
	var lost int64
	err := e.writeTx(ctx, func(tx *sql.Tx) error {
		var err error
		if lost, err = queryValue[int64](ctx, e, tx, topicDropCount, genRange(gen)); err != nil {
			return err
		}
		if lost > 0 {
			if _, err := topicDropMark.exec(ctx, e, tx, genRange(gen)); err != nil {
				return err
			}
		}
		if _, err := topicGenerationDrop.exec(ctx, e, tx, genRange(gen)); err != nil {
			return err
		}
		_, err = topicGenerationForget.exec(ctx, e, tx, gen)
		return err
	})
	return lost, e.wrap("drop generation", err)
}
