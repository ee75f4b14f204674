package droverpg

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// The topic statements of droverdriver.TopicExecutor; the decisions (lanes,
// shared reads, which acks carry retries) are the engine's
// (internal/engine/topics.go).

var _ droverdriver.TopicExecutor = (*executor)(nil)

func (e *executor) TopicCreate(ctx context.Context, p droverdriver.TopicParams) (*droverdriver.TopicRow, error) {
	var t droverdriver.TopicRow
	var retention int64
	err := topicCreate.queryRow(ctx, e.db, e.q, topicCreateParams{p.Name, p.Lanes, p.Retention.Milliseconds()}).
		Scan(&t.Name, &t.Lanes, &retention, &t.CreatedAt, &t.Created)
	if err != nil {
		return nil, e.wrap("create topic", err)
	}
	t.Retention = time.Duration(retention) * time.Millisecond
	return &t, nil
}

func (e *executor) TopicList(ctx context.Context) ([]*droverdriver.TopicRow, error) {
	rows, err := topicList.query(ctx, e.db, e.q, struct{}{})
	if err != nil {
		return nil, e.wrap("list topics", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*droverdriver.TopicRow, error) {
		var t droverdriver.TopicRow
		var retention int64
		err := r.Scan(&t.Name, &t.Lanes, &retention, &t.CreatedAt, &t.Subscriptions)
		t.Retention = time.Duration(retention) * time.Millisecond
		return &t, err
	})
	return out, e.wrap("list topics", err)
}

func (e *executor) TopicPublish(ctx context.Context, msgs []droverdriver.PublishParams) ([]int64, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	topics := make([]string, len(msgs))
	lanes := make([]int32, len(msgs))
	keys := make([]*string, len(msgs))
	payloads := make([][]byte, len(msgs))
	metas := make([]string, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		topics[i], lanes[i] = m.Topic, int32(m.Lane)
		if m.Key != "" {
			keys[i] = &m.Key
		}
		payloads[i] = m.Payload
		if payloads[i] == nil {
			payloads[i] = []byte{}
		}
		metas[i] = "{}"
		if len(m.Metadata) > 0 {
			metas[i] = string(m.Metadata)
		}
	}
	rows, err := topicPublish.query(ctx, e.db, e.q, topicPublishParams{topics, lanes, keys, payloads, metas})
	if err != nil {
		return nil, e.wrap("publish", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, e.wrap("publish", err)
	}
	// order: consumers are woken as job producers are: by the waker once
	// the publish committed, or inside the caller's transaction, whose
	// commit delivers the notification with the messages.
	wake := wakeSet{}
	for _, t := range topics {
		wake[droverdriver.TopicWake(t)] = allJobs
	}
	if e.waker != nil {
		e.waker.wake(wake)
		return ids, nil
	}
	if _, err := notifyStmt.exec(ctx, e.db, e.q, notifyParams{Channel: e.channel, Payloads: wake.payloads()}); err != nil {
		return nil, e.wrap("publish", err)
	}
	return ids, nil
}

func (e *executor) SubscriptionCreate(ctx context.Context, p droverdriver.SubscriptionParams) (bool, error) {
	var made int
	if err := subscriptionCreate.queryRow(ctx, e.db, e.q, subscriptionCreateParams{p.Topic, p.Name, p.MaxAttempts, p.Start}).Scan(&made); err != nil {
		return false, e.wrap("create subscription", err)
	}
	if made > 0 {
		return true, nil
	}
	var one int
	err := topicExists.queryRow(ctx, e.db, e.q, p.Topic).Scan(&one)
	if err == pgx.ErrNoRows {
		return false, droverdriver.ErrTopicNotFound
	}
	return false, e.wrap("create subscription", err)
}

func (e *executor) TopicDelete(ctx context.Context, name string) (bool, error) {
	var one int
	err := topicDelete.queryRow(ctx, e.db, e.q, name).Scan(&one)
	if err == pgx.ErrNoRows {
		return false, nil
	}
	return err == nil, e.wrap("delete topic", err)
}

func (e *executor) SubscriptionDelete(ctx context.Context, topic, name string) (bool, error) {
	tag, err := subscriptionDelete.exec(ctx, e.db, e.q, topicName{topic, name})
	if err != nil {
		return false, e.wrap("delete subscription", err)
	}
	return tag.RowsAffected() > 0, nil
}

// sequenceBatch bounds the messages one sequencing pass makes readable:
// each pass is one transaction, and a pass over a long backlog (consumers
// stopped for an hour) would otherwise rewrite it all in one. A pass reads
// every message not sequenced yet of the transactions it looks at, however
// many it takes, so a bound below what publishers commit between two
// passes leaves a remainder that every later pass reads again: at 10,000,
// with unpaced publishing in `bench fanout` and a lag sampler sequencing
// every 250 ms, the passes of 100,000 messages cost 13.7-30.7 s of store
// time against 12.3-13.7 s at 100,000 (pg_stat_statements, one machine
// shared at load 25-35; docs/design/topics.md, "Backpressure and lag").
const sequenceBatch = 100_000

// sequence makes the messages committed so far readable (TopicSequence,
// docs/design/topics.md, "Visibility"), pass after pass
// while a pass finds a full batch. Only on the driver's own connections:
// a pass holds the sequencing lock until it commits, and in a caller's
// transaction every other pass would skip until the caller ended. A pass
// that finds another running returns at once: that one's positions are
// readable when it commits, which a consumer's rechecks pick up.
func (e *executor) sequence(ctx context.Context) error {
	if e.waker == nil {
		return nil
	}
	for {
		var n int
		if err := topicSequence.queryRow(ctx, e.db, e.q, sequenceBatch).Scan(&n); err != nil {
			return e.wrap("sequence messages", err)
		}
		if n < sequenceBatch {
			return nil
		}
	}
}

func (e *executor) TopicLease(ctx context.Context, p droverdriver.TopicLeaseParams) ([]droverdriver.LeasedLane, error) {
	if err := e.sequence(ctx); err != nil {
		return nil, err
	}
	topics := make([]string, len(p.Subscriptions))
	subs := make([]string, len(p.Subscriptions))
	limits := make([]int32, len(p.Subscriptions))
	for i, s := range p.Subscriptions {
		topics[i], subs[i], limits[i] = s.Topic, s.Name, int32(p.Limits[i])
	}
	rows, err := topicLease.query(ctx, e.db, e.q, topicLeaseParams{topics, subs, limits, p.Owner, [16]byte(p.Token),
		float64(p.Lease.Milliseconds()), p.Max, float64(p.Waiting.Milliseconds())})
	if err != nil {
		return nil, e.wrap("lease lanes", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (droverdriver.LeasedLane, error) {
		var l droverdriver.LeasedLane
		err := r.Scan(&l.Topic, &l.Subscription, &l.Lane, &l.Cursor.Xid, &l.Cursor.ID, &l.MaxAttempts, &l.Dropped,
			&l.Attempt, &l.To.Xid, &l.To.ID, &l.Limit)
		return l, err
	})
	return out, e.wrap("lease lanes", err)
}

func (e *executor) TopicRead(ctx context.Context, p droverdriver.TopicReadParams) ([]*droverdriver.MessageRow, error) {
	if len(p.Lanes) == 0 {
		return nil, nil
	}
	if p.Sequence {
		if err := e.sequence(ctx); err != nil {
			return nil, err
		}
	}
	n := len(p.Lanes)
	a := topicReadParams{Topics: p.Topics, Lanes: make([]int32, n), Xids: make([]int64, n), IDs: make([]int64, n),
		ToXids: make([]int64, n), ToIDs: make([]int64, n), Limits: make([]int32, n), MaxBytes: p.MaxBytes}
	for i := range p.Lanes {
		a.Lanes[i], a.Xids[i], a.IDs[i] = int32(p.Lanes[i]), p.Cursors[i].Xid, p.Cursors[i].ID
		a.ToXids[i], a.ToIDs[i], a.Limits[i] = p.Tos[i].Xid, p.Tos[i].ID, int32(p.Limits[i])
	}
	read := topicRead
	if p.MaxBytes > 0 {
		read = topicReadBudget
	}
	rows, err := read.query(ctx, e.db, e.q, a)
	if err != nil {
		return nil, e.wrap("read messages", err)
	}
	out, err := pgx.CollectRows(rows, scanMessage)
	return out, e.wrap("read messages", err)
}

// scanMessage reads a message as TopicRead and TopicTail return it.
func scanMessage(r pgx.CollectableRow) (*droverdriver.MessageRow, error) {
	var m droverdriver.MessageRow
	var key *string
	err := r.Scan(&m.Range, &m.ID, &m.Xid, &m.Lane, &key, &m.Payload, &m.Metadata, &m.PublishedAt)
	if key != nil {
		m.Key = *key
	}
	return &m, err
}

func (e *executor) TopicTail(ctx context.Context, topic string, before []droverdriver.Position, limit int) ([]*droverdriver.MessageRow, error) {
	if err := e.sequence(ctx); err != nil {
		return nil, err
	}
	p := topicTailParams{Topic: topic, Limit: limit}
	for _, b := range before {
		p.Xids, p.IDs = append(p.Xids, b.Xid), append(p.IDs, b.ID)
	}
	rows, err := topicTail.query(ctx, e.db, e.q, p)
	if err != nil {
		return nil, e.wrap("read the newest messages", err)
	}
	out, err := pgx.CollectRows(rows, scanMessage)
	return out, e.wrap("read the newest messages", err)
}

// laneArgs unpacks acks into the parallel arrays the statements take.
func laneArgs(acks []droverdriver.LaneAck) (a laneArrays) {
	for _, ack := range acks {
		a.Topics = append(a.Topics, ack.Topic)
		a.Subs = append(a.Subs, ack.Subscription)
		a.Lanes = append(a.Lanes, int32(ack.Lane))
		a.Tokens = append(a.Tokens, [16]byte(ack.Token))
		a.Xids = append(a.Xids, ack.Cursor.Xid)
		a.IDs = append(a.IDs, ack.Cursor.ID)
		a.Counts = append(a.Counts, int32(ack.Count))
		a.Keeps = append(a.Keeps, ack.Keep)
		a.Limits = append(a.Limits, int32(ack.Limit))
	}
	return a
}

// laneUpdate runs a statement over lanes that returns the indexes of the
// lanes it updated.
func (e *executor) laneUpdate(ctx context.Context, what string, query func() (pgx.Rows, error)) ([]int, error) {
	rows, err := query()
	if err != nil {
		return nil, e.wrap(what, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int])
	return out, e.wrap(what, err)
}

func (e *executor) TopicAck(ctx context.Context, p droverdriver.TopicAckParams) ([]droverdriver.AckedLane, error) {
	if len(p.Acks) == 0 {
		return nil, nil
	}
	rows, err := topicAck.query(ctx, e.db, e.q, topicAckParams{laneArgs(p.Acks), float64(p.Lease.Milliseconds())})
	if err != nil {
		return nil, e.wrap("ack lanes", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (droverdriver.AckedLane, error) {
		var a droverdriver.AckedLane
		err := r.Scan(&a.Index, &a.Kept)
		return a, err
	})
	return out, e.wrap("ack lanes", err)
}

func (e *executor) TopicExtend(ctx context.Context, p droverdriver.TopicExtendParams) ([]int, error) {
	if len(p.Lanes) == 0 {
		return nil, nil
	}
	return e.laneUpdate(ctx, "extend lane leases", func() (pgx.Rows, error) {
		return topicExtend.query(ctx, e.db, e.q, topicExtendParams{laneArgs(p.Lanes), float64(p.Lease.Milliseconds())})
	})
}

func (e *executor) TopicRelease(ctx context.Context, p droverdriver.TopicExtendParams) ([]int, error) {
	if len(p.Lanes) == 0 {
		return nil, nil
	}
	return e.laneUpdate(ctx, "release lanes", func() (pgx.Rows, error) {
		return topicRelease.query(ctx, e.db, e.q, laneArgs(p.Lanes))
	})
}

func (e *executor) TopicLanes(ctx context.Context, topic, subscription string) ([]droverdriver.LaneRow, error) {
	// Sequenced first, as for TopicLag, so that messages committed while
	// no consumer ran count in each lane's lag.
	if err := e.sequence(ctx); err != nil {
		return nil, err
	}
	rows, err := topicLanes.query(ctx, e.db, e.q, topicName{topic, subscription})
	if err != nil {
		return nil, e.wrap("read lanes", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (droverdriver.LaneRow, error) {
		var l droverdriver.LaneRow
		var holder *string
		err := r.Scan(&l.Lane, &l.Cursor.Xid, &l.Cursor.ID, &l.Pending, &holder, &l.LeaseExpiresAt, &l.Attempt)
		if holder != nil {
			l.Holder = *holder
		}
		return l, err
	})
	return out, e.wrap("read lanes", err)
}

func (e *executor) TopicLaneExpire(ctx context.Context, topic, subscription string, lane int) (bool, error) {
	var one int
	err := topicLaneExpire.queryRow(ctx, e.db, e.q, topicLane{topic, subscription, lane}).Scan(&one)
	if err == pgx.ErrNoRows {
		return false, nil
	}
	return err == nil, e.wrap("expire lane lease", err)
}

func (e *executor) TopicRewind(ctx context.Context, p droverdriver.TopicRewindParams) ([]droverdriver.RewoundLane, error) {
	rows, err := topicRewind.query(ctx, e.db, e.q, topicRewindParams{p.Topic, p.Subscription, p.Since})
	if err != nil {
		return nil, e.wrap("rewind subscription", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (droverdriver.RewoundLane, error) {
		var l droverdriver.RewoundLane
		err := r.Scan(&l.Lane, &l.From.Xid, &l.From.ID, &l.To.Xid, &l.To.ID, &l.Released)
		return l, err
	})
	return out, e.wrap("rewind subscription", err)
}

func (e *executor) SubscriptionGet(ctx context.Context, topic, name string) (*droverdriver.SubscriptionRow, error) {
	var s droverdriver.SubscriptionRow
	var sub *string
	var attempts *int
	var created *time.Time
	err := subscriptionGet.queryRow(ctx, e.db, e.q, topicName{topic, name}).Scan(&s.Topic, &sub, &attempts, &s.Lanes, &created)
	switch {
	case err == pgx.ErrNoRows:
		return nil, droverdriver.ErrTopicNotFound
	case err != nil:
		return nil, e.wrap("read subscription", err)
	case sub == nil:
		return nil, droverdriver.ErrSubscriptionNotFound
	}
	s.Name, s.MaxAttempts, s.CreatedAt = *sub, *attempts, *created
	return &s, nil
}

func (e *executor) TopicReceiptKey(ctx context.Context, candidate []byte) ([]byte, error) {
	var key []byte
	err := topicReceiptKey.queryRow(ctx, e.db, e.q, candidate).Scan(&key)
	if err == pgx.ErrNoRows {
		// Another process stored its key after this statement's snapshot
		// was taken: read it with a new one.
		err = topicReceiptKey.queryRow(ctx, e.db, e.q, candidate).Scan(&key)
	}
	return key, e.wrap("read receipt key", err)
}

func (e *executor) TopicLag(ctx context.Context, topics []string) ([]drovertype.SubscriptionLag, error) {
	// Sequenced first, so that messages committed while no consumer ran
	// count.
	if err := e.sequence(ctx); err != nil {
		return nil, err
	}
	if len(topics) == 0 {
		topics = nil // every topic
	}
	rows, err := topicLag.query(ctx, e.db, e.q, topics)
	if err != nil {
		return nil, e.wrap("read lag", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (drovertype.SubscriptionLag, error) {
		var l drovertype.SubscriptionLag
		err := r.Scan(&l.Topic, &l.Subscription, &l.Pending, &l.OldestPending, &l.Dropped)
		return l, err
	})
	return out, e.wrap("read lag", err)
}

func (e *executor) TopicPublishers(ctx context.Context) ([]drovertype.OpenPublisher, error) {
	rows, err := topicPublishers.query(ctx, e.db, e.q, struct{}{})
	if err != nil {
		return nil, e.wrap("list open publishers", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (drovertype.OpenPublisher, error) {
		var p drovertype.OpenPublisher
		var started *time.Time
		err := r.Scan(&p.Xid, &p.PID, &p.ApplicationName, &p.State, &started, &p.GID)
		if started != nil {
			p.Started = *started
		}
		return p, err
	})
	return out, e.wrap("list open publishers", err)
}

func (e *executor) TopicGenerations(ctx context.Context) ([]droverdriver.Generation, error) {
	rows, err := topicGenerations.query(ctx, e.db, e.q, struct{}{})
	if err != nil {
		return nil, e.wrap("list generations", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (droverdriver.Generation, error) {
		var g droverdriver.Generation
		var age, sealedFor int64
		err := r.Scan(&g.Gen, &g.CreatedAt, &g.SealedAt, &age, &sealedFor, &g.Settled, &g.Dropping, &g.LastID)
		g.Age, g.SealedFor = time.Duration(age)*time.Microsecond, time.Duration(sealedFor)*time.Microsecond
		return g, err
	})
	return out, e.wrap("list generations", err)
}

// genRange is the ID range of generation gen.
func genRange(gen int64) idRange {
	return idRange{gen * droverdriver.GenerationWidth, (gen + 1) * droverdriver.GenerationWidth}
}

func (e *executor) TopicGenerationTopics(ctx context.Context, gen int64) ([]droverdriver.GenerationTopic, error) {
	// The statement counts messages not sequenced yet as unread; sequenced
	// first, they are compared with the cursors.
	if err := e.sequence(ctx); err != nil {
		return nil, err
	}
	rows, err := topicGenerationTopics.query(ctx, e.db, e.q, genRange(gen))
	if err != nil {
		return nil, e.wrap("read generation", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (droverdriver.GenerationTopic, error) {
		var t droverdriver.GenerationTopic
		var retention int64
		err := r.Scan(&t.Topic, &retention, &t.Passed)
		t.Retention = time.Duration(retention) * time.Millisecond
		return t, err
	})
	return out, e.wrap("read generation", err)
}

func (e *executor) TopicGenerationLock(ctx context.Context, gen int64) error {
	rows, err := topicGenerationLock.query(ctx, e.db, e.q, genRange(gen))
	if err != nil {
		return e.wrap("lock generation topics", err)
	}
	rows.Close()
	return e.wrap("lock generation topics", rows.Err())
}

func (e *executor) TopicDropMark(ctx context.Context, gen int64) error {
	_, err := topicDropMark.exec(ctx, e.db, e.q, gen)
	return e.wrap("mark generation dropping", err)
}

func (e *executor) TopicRotate(ctx context.Context, gen int64) error {
	// order: the partition is committed before the sequence hands out an
	// ID of it, and the seal reads its xmax after the sequence moved. The
	// partition is attached (migration 022), which takes no lock that
	// publishes or reads wait for.
	if _, err := topicGenerationCreate.exec(ctx, e.db, e.q, gen); err != nil {
		return e.wrap("create generation", err)
	}
	if _, err := topicSequenceMove.exec(ctx, e.db, e.q, gen*droverdriver.GenerationWidth); err != nil {
		return e.wrap("move message sequence", err)
	}
	_, err := topicSeal.exec(ctx, e.db, e.q, gen)
	return e.wrap("seal generations", err)
}

// TopicDrop detaches the generation's partition without blocking anyone
// (DETACH PARTITION … CONCURRENTLY: it waits for the transactions using
// topic_messages, while publishes and reads go on), then counts what each
// lane lost in the detached table and drops it, in one call whatever
// p.Limit. A detach interrupted by a crash or a cancelled context is
// finished by the next call (FINALIZE). It cannot run in a transaction.
func (e *executor) TopicDrop(ctx context.Context, p droverdriver.TopicDropParams) (droverdriver.TopicRemoved, error) {
	var pending *bool
	if err := topicPartitionState.queryRow(ctx, e.db, e.q, p.Gen).Scan(&pending); err != nil {
		return droverdriver.TopicRemoved{}, e.wrap("drop generation", err)
	}
	if pending != nil {
		detach := "ALTER TABLE " + pgx.Identifier{e.schema, "topic_messages"}.Sanitize() + " DETACH PARTITION " +
			pgx.Identifier{e.schema, "topic_messages_g" + strconv.FormatInt(p.Gen, 10)}.Sanitize()
		if *pending {
			detach += " FINALIZE"
		} else {
			detach += " CONCURRENTLY"
		}
		if _, err := e.db.Exec(ctx, detach); err != nil {
			return droverdriver.TopicRemoved{}, e.wrap("detach generation", err)
		}
	}
	var lost int64
	if err := topicGenerationDrop.queryRow(ctx, e.db, e.q, p.Gen).Scan(&lost); err != nil {
		return droverdriver.TopicRemoved{}, e.wrap("drop generation", err)
	}
	return droverdriver.TopicRemoved{Lost: lost, Done: true}, nil
}

func (e *executor) TopicPurge(ctx context.Context, p droverdriver.TopicPurgeParams) (droverdriver.TopicRemoved, error) {
	r := genRange(p.Gen)
	after := p.After
	if after == (droverdriver.PurgeKey{}) {
		// The start: before lane 0's messages not sequenced yet, whose
		// xids are negative and sort before (0, 0, 0).
		after.Lane = -1
	}
	var res droverdriver.TopicRemoved
	err := topicPurge.queryRow(ctx, e.db, e.q, topicPurgeParams{p.Topic, r.From, r.To, after.Lane, after.Xid, after.ID, p.Limit}).
		Scan(&res.Deleted, &res.Lost, &res.Last.Lane, &res.Last.Xid, &res.Last.ID)
	// The statement reads the generation's rows in order from After, all
	// lanes at once: a short chunk is the end.
	res.Done = res.Deleted < int64(p.Limit)
	return res, e.wrap("purge topic", err)
}
