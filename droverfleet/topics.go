package droverfleet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// Topics: a topic lives on one shard with its subscriptions, lanes and
// messages (topicShard), so that its order and its consumers' cursors are
// one shard's; topics spread over the key shards by name.

var _ droverdriver.TopicExecutor = (*exec)(nil)

// onTopic runs fn on the shard of topic.
func (e *exec) onTopic(ctx context.Context, topic string, fn func(ctx context.Context, te droverdriver.TopicExecutor) error) error {
	keys, err := e.c.ready(ctx)
	if err != nil {
		return err
	}
	return e.oneTopics(ctx, topicShard(keys, topic), fn)
}

// oneTopics runs fn on shard i's TopicExecutor.
func (e *exec) oneTopics(ctx context.Context, i int, fn func(ctx context.Context, te droverdriver.TopicExecutor) error) error {
	return e.one(ctx, i, func(ctx context.Context, ex droverdriver.Executor) error {
		te, ok := ex.(droverdriver.TopicExecutor)
		if !ok {
			return droverdriver.ErrTopicsUnsupported
		}
		return fn(ctx, te)
	})
}

// byTopic groups the indexes of items by the shard of their topic.
func (e *exec) byTopic(ctx context.Context, n int, topic func(k int) string) (map[int][]int, error) {
	keys, err := e.c.ready(ctx)
	if err != nil {
		return nil, err
	}
	groups := map[int][]int{}
	for k := range n {
		i := topicShard(keys, topic(k))
		groups[i] = append(groups[i], k)
	}
	return groups, nil
}

// topicsEverywhere gathers fn from every shard's TopicExecutor.
func topicsEverywhere[T any](ctx context.Context, e *exec, fn func(ctx context.Context, te droverdriver.TopicExecutor) ([]T, error)) ([]T, error) {
	return everywhere(ctx, e, true, func(ctx context.Context, ex droverdriver.Executor, _ int) ([]T, error) {
		te, ok := ex.(droverdriver.TopicExecutor)
		if !ok {
			return nil, droverdriver.ErrTopicsUnsupported
		}
		return fn(ctx, te)
	})
}

func (e *exec) TopicCreate(ctx context.Context, p droverdriver.TopicParams) (*droverdriver.TopicRow, error) {
	var row *droverdriver.TopicRow
	err := e.onTopic(ctx, p.Name, func(ctx context.Context, te droverdriver.TopicExecutor) error {
		var err error
		row, err = te.TopicCreate(ctx, p)
		return err
	})
	return row, err
}

func (e *exec) TopicList(ctx context.Context) ([]*droverdriver.TopicRow, error) {
	rows, err := topicsEverywhere(ctx, e, func(ctx context.Context, te droverdriver.TopicExecutor) ([]*droverdriver.TopicRow, error) {
		return te.TopicList(ctx)
	})
	slices.SortFunc(rows, func(a, b *droverdriver.TopicRow) int { return strings.Compare(a.Name, b.Name) })
	return rows, err
}

// TopicPublish stores each topic's messages on its shard, in one
// transaction of the fleet's when they span several.
func (e *exec) TopicPublish(ctx context.Context, msgs []droverdriver.PublishParams) ([]int64, error) {
	groups, err := e.byTopic(ctx, len(msgs), func(k int) string { return msgs[k].Topic })
	if err != nil {
		return nil, err
	}
	if len(groups) > 1 && e.tx == nil && !e.user {
		var ids []int64
		err := e.Tx(ctx, func(ctx context.Context, tx droverdriver.Executor) error {
			var err error
			ids, err = tx.(*exec).TopicPublish(ctx, msgs)
			return err
		})
		return ids, err
	}
	ids := make([]int64, len(msgs))
	idx := sortedKeys(groups)
	err = e.run(ctx, idx, false, func(ctx context.Context, k int, ex droverdriver.Executor) error {
		te, ok := ex.(droverdriver.TopicExecutor)
		if !ok {
			return droverdriver.ErrTopicsUnsupported
		}
		pos := groups[idx[k]]
		part := make([]droverdriver.PublishParams, len(pos))
		for j, p := range pos {
			part[j] = msgs[p]
		}
		got, err := te.TopicPublish(ctx, part)
		for j, p := range pos[:min(len(pos), len(got))] {
			ids[p] = got[j]
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

func (e *exec) SubscriptionCreate(ctx context.Context, p droverdriver.SubscriptionParams) (bool, error) {
	var ok bool
	err := e.onTopic(ctx, p.Topic, func(ctx context.Context, te droverdriver.TopicExecutor) error {
		var err error
		ok, err = te.SubscriptionCreate(ctx, p)
		return err
	})
	return ok, err
}

func (e *exec) SubscriptionDelete(ctx context.Context, topic, name string) (bool, error) {
	var ok bool
	err := e.onTopic(ctx, topic, func(ctx context.Context, te droverdriver.TopicExecutor) error {
		var err error
		ok, err = te.SubscriptionDelete(ctx, topic, name)
		return err
	})
	return ok, err
}

func (e *exec) TopicDelete(ctx context.Context, name string) (bool, error) {
	var ok bool
	err := e.onTopic(ctx, name, func(ctx context.Context, te droverdriver.TopicExecutor) error {
		var err error
		ok, err = te.TopicDelete(ctx, name)
		return err
	})
	return ok, err
}

// TopicLease leases on each shard of the named subscriptions, each shard
// with what the ones before left of Max, from a shard that turns with
// every call, under the caller's one token; a shard that is down is
// skipped.
func (e *exec) TopicLease(ctx context.Context, p droverdriver.TopicLeaseParams) ([]droverdriver.LeasedLane, error) {
	groups, err := e.byTopic(ctx, len(p.Subscriptions), func(k int) string { return p.Subscriptions[k].Topic })
	if err != nil {
		return nil, err
	}
	idx := sortedKeys(groups)
	if len(idx) == 0 {
		return nil, nil
	}
	start := int(e.c.claims.Add(1) % uint64(len(idx)))
	idx = append(idx[start:], idx[:start]...)
	var out []droverdriver.LeasedLane
	answered := false
	var lastErr error
	for _, i := range idx {
		left := p.Max - len(out)
		if left <= 0 {
			break
		}
		q := p
		q.Max = left
		q.Subscriptions, q.Limits = nil, nil
		for _, k := range groups[i] {
			q.Subscriptions = append(q.Subscriptions, p.Subscriptions[k])
			if k < len(p.Limits) {
				q.Limits = append(q.Limits, p.Limits[k])
			}
		}
		err := e.run(ctx, []int{i}, true, func(ctx context.Context, _ int, ex droverdriver.Executor) error {
			te, ok := ex.(droverdriver.TopicExecutor)
			if !ok {
				return droverdriver.ErrTopicsUnsupported
			}
			lanes, err := te.TopicLease(ctx, q)
			out = append(out, lanes...)
			return err
		})
		switch {
		case err == nil:
			answered = true
		case errors.Is(err, errAllDown):
			lastErr = err
		default:
			return nil, err
		}
	}
	if !answered && lastErr != nil {
		return nil, lastErr
	}
	return out, nil
}

// TopicRead reads each shard's ranges there and gives each message the
// index of its range in p.
func (e *exec) TopicRead(ctx context.Context, p droverdriver.TopicReadParams) ([]*droverdriver.MessageRow, error) {
	groups, err := e.byTopic(ctx, len(p.Topics), func(k int) string { return p.Topics[k] })
	if err != nil {
		return nil, err
	}
	idx := sortedKeys(groups)
	parts := make([][]*droverdriver.MessageRow, len(idx))
	err = e.run(ctx, idx, false, func(ctx context.Context, k int, ex droverdriver.Executor) error {
		te, ok := ex.(droverdriver.TopicExecutor)
		if !ok {
			return droverdriver.ErrTopicsUnsupported
		}
		pos := groups[idx[k]]
		q := droverdriver.TopicReadParams{MaxBytes: p.MaxBytes, Sequence: p.Sequence}
		for _, r := range pos {
			q.Topics, q.Lanes, q.Cursors = append(q.Topics, p.Topics[r]), append(q.Lanes, p.Lanes[r]), append(q.Cursors, p.Cursors[r])
			q.Tos, q.Limits = append(q.Tos, p.Tos[r]), append(q.Limits, p.Limits[r])
		}
		rows, err := te.TopicRead(ctx, q)
		for _, m := range rows {
			m.Range = pos[m.Range]
		}
		parts[k] = rows
		return err
	})
	if err != nil {
		return nil, err
	}
	out := slices.Concat(parts...)
	slices.SortStableFunc(out, func(a, b *droverdriver.MessageRow) int { return a.Range - b.Range })
	return withinBytes(out, p.MaxBytes), nil
}

// withinBytes cuts rows, in range order, where they pass max bytes (when
// positive), keeping the first whatever its size: each shard kept its own
// ranges within max, and together they may not be.
func withinBytes(rows []*droverdriver.MessageRow, max int64) []*droverdriver.MessageRow {
	if max <= 0 {
		return rows
	}
	var n int64
	for k, m := range rows {
		n += m.Bytes()
		if k > 0 && n > max {
			return rows[:k]
		}
	}
	return rows
}

// perShardLanes runs fn on each shard with the positions in the caller's
// list of its share of n lanes (by the shard of topic(k)), and returns
// what fn reports, each with the index at(r) names turned from its place
// in the shard's share into its position in the caller's list, sorted by
// it. A shard that is down reports none.
func perShardLanes[T any](ctx context.Context, e *exec, n int, topic func(k int) string, at func(r *T) *int,
	fn func(ctx context.Context, te droverdriver.TopicExecutor, pos []int) ([]T, error)) ([]T, error) {
	groups, err := e.byTopic(ctx, n, topic)
	if err != nil {
		return nil, err
	}
	idx := sortedKeys(groups)
	parts := make([][]T, len(idx))
	err = e.run(ctx, idx, true, func(ctx context.Context, k int, ex droverdriver.Executor) error {
		te, ok := ex.(droverdriver.TopicExecutor)
		if !ok {
			return droverdriver.ErrTopicsUnsupported
		}
		pos := groups[idx[k]]
		local, err := fn(ctx, te, pos)
		for _, r := range local {
			*at(&r) = pos[*at(&r)]
			parts[k] = append(parts[k], r)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	out := slices.Concat(parts...)
	slices.SortFunc(out, func(a, b T) int { return *at(&a) - *at(&b) })
	return out, nil
}

// itself is the index of a lane perShardLanes returns as an int.
func itself(r *int) *int { return r }

// TopicAck applies each shard's acks there and returns those accepted. A
// shard that is down accepts none of its acks: their lanes' leases run
// out there, and the messages are delivered again. The retry jobs of the
// accepted acks are the engine's to insert (engine.Ack), placed as any
// job is.
func (e *exec) TopicAck(ctx context.Context, p droverdriver.TopicAckParams) ([]droverdriver.AckedLane, error) {
	return perShardLanes(ctx, e, len(p.Acks), func(k int) string { return p.Acks[k].Topic },
		func(r *droverdriver.AckedLane) *int { return &r.Index },
		func(ctx context.Context, te droverdriver.TopicExecutor, pos []int) ([]droverdriver.AckedLane, error) {
			q := droverdriver.TopicAckParams{Lease: p.Lease, Now: p.Now}
			for _, a := range pos {
				q.Acks = append(q.Acks, p.Acks[a])
			}
			return te.TopicAck(ctx, q)
		})
}

func (e *exec) TopicExtend(ctx context.Context, p droverdriver.TopicExtendParams) ([]int, error) {
	return e.lanesOnShards(ctx, p, droverdriver.TopicExecutor.TopicExtend)
}

func (e *exec) TopicRelease(ctx context.Context, p droverdriver.TopicExtendParams) ([]int, error) {
	return e.lanesOnShards(ctx, p, droverdriver.TopicExecutor.TopicRelease)
}

// lanesOnShards runs call (an extend or a release) on each shard with its
// share of p's lanes.
func (e *exec) lanesOnShards(ctx context.Context, p droverdriver.TopicExtendParams,
	call func(te droverdriver.TopicExecutor, ctx context.Context, p droverdriver.TopicExtendParams) ([]int, error)) ([]int, error) {
	return perShardLanes(ctx, e, len(p.Lanes), func(k int) string { return p.Lanes[k].Topic }, itself,
		func(ctx context.Context, te droverdriver.TopicExecutor, pos []int) ([]int, error) {
			q := droverdriver.TopicExtendParams{Lease: p.Lease, Now: p.Now}
			for _, l := range pos {
				q.Lanes = append(q.Lanes, p.Lanes[l])
			}
			return call(te, ctx, q)
		})
}

func (e *exec) TopicLag(ctx context.Context, topics []string) ([]drovertype.SubscriptionLag, error) {
	var rows []drovertype.SubscriptionLag
	var err error
	if len(topics) == 0 {
		rows, err = topicsEverywhere(ctx, e, func(ctx context.Context, te droverdriver.TopicExecutor) ([]drovertype.SubscriptionLag, error) {
			return te.TopicLag(ctx, nil)
		})
	} else {
		var groups map[int][]int
		if groups, err = e.byTopic(ctx, len(topics), func(k int) string { return topics[k] }); err != nil {
			return nil, err
		}
		rows, err = gather(ctx, e, sortedKeys(groups), false, func(ctx context.Context, ex droverdriver.Executor, i int) ([]drovertype.SubscriptionLag, error) {
			te, ok := ex.(droverdriver.TopicExecutor)
			if !ok {
				return nil, droverdriver.ErrTopicsUnsupported
			}
			var names []string
			for _, k := range groups[i] {
				names = append(names, topics[k])
			}
			return te.TopicLag(ctx, names)
		})
	}
	slices.SortFunc(rows, func(a, b drovertype.SubscriptionLag) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return strings.Compare(a.Subscription, b.Subscription)
	})
	return rows, err
}

func (e *exec) TopicPublishers(ctx context.Context) ([]drovertype.OpenPublisher, error) {
	return topicsEverywhere(ctx, e, func(ctx context.Context, te droverdriver.TopicExecutor) ([]drovertype.OpenPublisher, error) {
		return te.TopicPublishers(ctx)
	})
}

// Generations are each shard's. A sealed generation's number carries its
// shard above genShardShift, and its LastID the shard's share of the ID
// space above it, so that Gen × GenerationWidth stays the first ID of its
// generation (2^18 generations a shard: rotated hourly, 30 years).
// TopicGenerations lists every shard's sealed generations, then one
// current generation standing for all the shards' current ones: the
// fullest's, as old as the oldest that holds messages, so that the
// leader's retainer rotates when any shard's is due, and TopicRotate
// rotates every shard whose current generation holds messages.
const genShardShift = 18

// encodeGen gives g, a generation of shard i, its fleet-wide number.
func encodeGen(g *droverdriver.Generation, i int) {
	g.Gen += int64(i) << genShardShift
	if g.LastID > 0 {
		g.LastID += int64(i) << genShardShift * droverdriver.GenerationWidth
	}
}

// shardGenerations lists each shard's generations (of the shards that
// answer), indexed by shard.
func (e *exec) shardGenerations(ctx context.Context) (map[int][]droverdriver.Generation, error) {
	out := map[int][]droverdriver.Generation{}
	var mu sync.Mutex
	_, err := everywhere(ctx, e, true, func(ctx context.Context, ex droverdriver.Executor, i int) ([]struct{}, error) {
		te, ok := ex.(droverdriver.TopicExecutor)
		if !ok {
			return nil, droverdriver.ErrTopicsUnsupported
		}
		gens, err := te.TopicGenerations(ctx)
		mu.Lock()
		out[i] = gens
		mu.Unlock()
		return nil, err
	})
	return out, err
}

func (e *exec) TopicGenerations(ctx context.Context) ([]droverdriver.Generation, error) {
	byShard, err := e.shardGenerations(ctx)
	if err != nil {
		return nil, err
	}
	var out []droverdriver.Generation
	var cur *droverdriver.Generation
	var oldest time.Time
	var age time.Duration
	best := int64(-1)
	for _, i := range sortedKeys(byShard) {
		gens := byShard[i]
		if len(gens) == 0 {
			continue
		}
		for _, g := range gens[:len(gens)-1] {
			encodeGen(&g, i)
			out = append(out, g)
		}
		c := gens[len(gens)-1]
		u := used(c)
		if u > 0 && (oldest.IsZero() || c.CreatedAt.Before(oldest)) {
			oldest, age = c.CreatedAt, c.Age
		}
		if u > best {
			encodeGen(&c, i)
			cur, best = &c, u
		}
	}
	if cur == nil {
		return out, nil
	}
	if !oldest.IsZero() {
		cur.CreatedAt, cur.Age = oldest, age
	}
	return append(out, *cur), nil
}

// used is how many IDs the current generation g has taken.
func used(g droverdriver.Generation) int64 {
	return g.LastID - max(g.Gen*droverdriver.GenerationWidth, 1) + 1
}

// TopicRotate rotates every shard that answers and holds messages in its
// current generation to that generation's successor, whatever gen says
// (the current generation listed stands for all of them).
func (e *exec) TopicRotate(ctx context.Context, _ int64) error {
	byShard, err := e.shardGenerations(ctx)
	if err != nil {
		return err
	}
	_, err = gather(ctx, e, sortedKeys(byShard), true, func(ctx context.Context, ex droverdriver.Executor, i int) ([]struct{}, error) {
		gens := byShard[i]
		if len(gens) == 0 || used(gens[len(gens)-1]) <= 0 {
			return nil, nil
		}
		return nil, ex.(droverdriver.TopicExecutor).TopicRotate(ctx, gens[len(gens)-1].Gen+1)
	})
	return err
}

// onGen runs fn on the shard of generation gen with its own number.
func (e *exec) onGen(ctx context.Context, gen int64, fn func(ctx context.Context, te droverdriver.TopicExecutor, gen int64) error) error {
	i := int(gen >> genShardShift)
	if i >= len(e.c.shards) {
		return fmt.Errorf("droverfleet: generation %d names no shard", gen)
	}
	return e.oneTopics(ctx, i, func(ctx context.Context, te droverdriver.TopicExecutor) error {
		return fn(ctx, te, gen-int64(i)<<genShardShift)
	})
}

func (e *exec) TopicGenerationTopics(ctx context.Context, gen int64) ([]droverdriver.GenerationTopic, error) {
	var out []droverdriver.GenerationTopic
	err := e.onGen(ctx, gen, func(ctx context.Context, te droverdriver.TopicExecutor, gen int64) error {
		var err error
		out, err = te.TopicGenerationTopics(ctx, gen)
		return err
	})
	return out, err
}

// onGenDo runs call on the shard of generation gen with its own number.
func (e *exec) onGenDo(ctx context.Context, gen int64, call func(te droverdriver.TopicExecutor, ctx context.Context, gen int64) error) error {
	return e.onGen(ctx, gen, func(ctx context.Context, te droverdriver.TopicExecutor, gen int64) error {
		return call(te, ctx, gen)
	})
}

func (e *exec) TopicGenerationLock(ctx context.Context, gen int64) error {
	return e.onGenDo(ctx, gen, droverdriver.TopicExecutor.TopicGenerationLock)
}

func (e *exec) TopicDropMark(ctx context.Context, gen int64) error {
	return e.onGenDo(ctx, gen, droverdriver.TopicExecutor.TopicDropMark)
}

func (e *exec) TopicDrop(ctx context.Context, p droverdriver.TopicDropParams) (droverdriver.TopicRemoved, error) {
	var out droverdriver.TopicRemoved
	err := e.onGen(ctx, p.Gen, func(ctx context.Context, te droverdriver.TopicExecutor, gen int64) error {
		q := p
		q.Gen = gen
		var err error
		out, err = te.TopicDrop(ctx, q)
		return err
	})
	return out, err
}

func (e *exec) TopicPurge(ctx context.Context, p droverdriver.TopicPurgeParams) (droverdriver.TopicRemoved, error) {
	var out droverdriver.TopicRemoved
	err := e.onGen(ctx, p.Gen, func(ctx context.Context, te droverdriver.TopicExecutor, gen int64) error {
		q := p
		q.Gen = gen
		var err error
		out, err = te.TopicPurge(ctx, q)
		return err
	})
	return out, err
}

// A subscription's lanes and a topic's messages are its shard's.

func (e *exec) TopicLanes(ctx context.Context, topic, subscription string) ([]droverdriver.LaneRow, error) {
	var out []droverdriver.LaneRow
	err := e.onTopic(ctx, topic, func(ctx context.Context, te droverdriver.TopicExecutor) error {
		var err error
		out, err = te.TopicLanes(ctx, topic, subscription)
		return err
	})
	return out, err
}

func (e *exec) TopicLaneExpire(ctx context.Context, topic, subscription string, lane int) (bool, error) {
	var held bool
	err := e.onTopic(ctx, topic, func(ctx context.Context, te droverdriver.TopicExecutor) error {
		var err error
		held, err = te.TopicLaneExpire(ctx, topic, subscription, lane)
		return err
	})
	return held, err
}

func (e *exec) TopicRewind(ctx context.Context, p droverdriver.TopicRewindParams) ([]droverdriver.RewoundLane, error) {
	var out []droverdriver.RewoundLane
	err := e.onTopic(ctx, p.Topic, func(ctx context.Context, te droverdriver.TopicExecutor) error {
		var err error
		out, err = te.TopicRewind(ctx, p)
		return err
	})
	return out, err
}

func (e *exec) SubscriptionGet(ctx context.Context, topic, name string) (*droverdriver.SubscriptionRow, error) {
	var out *droverdriver.SubscriptionRow
	err := e.onTopic(ctx, topic, func(ctx context.Context, te droverdriver.TopicExecutor) error {
		var err error
		out, err = te.SubscriptionGet(ctx, topic, name)
		return err
	})
	return out, err
}

func (e *exec) TopicTail(ctx context.Context, topic string, before []droverdriver.Position, limit int) ([]*droverdriver.MessageRow, error) {
	var out []*droverdriver.MessageRow
	err := e.onTopic(ctx, topic, func(ctx context.Context, te droverdriver.TopicExecutor) error {
		var err error
		out, err = te.TopicTail(ctx, topic, before, limit)
		return err
	})
	return out, err
}

// TopicReceiptKey is stored on the first shard, so that every process of
// the fleet gets the same key whichever topic a receipt names.
func (e *exec) TopicReceiptKey(ctx context.Context, candidate []byte) ([]byte, error) {
	var key []byte
	err := e.oneTopics(ctx, first, func(ctx context.Context, te droverdriver.TopicExecutor) error {
		var err error
		key, err = te.TopicReceiptKey(ctx, candidate)
		return err
	})
	return key, err
}
