package maintenance

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/engine"
)

// Defaults of TopicRetainer.
const (
	// GenerationMessagesDefault is how many messages a generation holds
	// before it is sealed: the granularity of what retention frees.
	GenerationMessagesDefault = 1 << 20
	// GenerationAgeDefault bounds how long a generation is current, so
	// that a slow topic's passed messages leave within about that long.
	GenerationAgeDefault = 5 * time.Minute
	// RemoveChunkDefault bounds the messages one TopicDrop (on a store
	// that deletes rows) or TopicPurge call removes, each in a
	// transaction of its own: on SQLite, how long the single writer is
	// held before publishes and acks get their turn.
	RemoveChunkDefault = 1000
)

// TopicRetainer keeps topic messages within their retention: it rotates
// the current generation when it is large or old enough, drops sealed
// generations that no subscription within retention still needs, whole
// (engine.ShouldRotate, engine.Droppable), and deletes from a sealed
// generation it cannot drop yet the messages of topics whose retention
// ran out (engine.Purges), so that one topic's lagging subscription or
// longer retention never keeps another topic's messages past its own.
// Every age it compares is the store's.
type TopicRetainer struct {
	// Exec runs the topic statements; it must be a droverdriver.Executor
	// too (as every driver is), whose transactions decide drops.
	Exec        droverdriver.TopicExecutor
	Interval    time.Duration
	MaxMessages int64
	MaxAge      time.Duration
	// Chunk bounds the messages one removal statement takes (default
	// RemoveChunkDefault).
	Chunk       int
	Logger      *slog.Logger
	TestSignals TestSignals
}

// Run passes every Interval until ctx ends.
func (r *TopicRetainer) Run(ctx context.Context) {
	every(ctx, r.Interval, func() {
		dropped, lost, err := r.RunOnce(ctx)
		if err != nil && ctx.Err() == nil {
			r.Logger.Error("topic retention failed", "error", err)
		}
		if dropped > 0 {
			r.Logger.Info("dropped topic message generations", "generations", dropped)
		}
		if lost > 0 {
			r.Logger.Warn("topic retention dropped messages subscriptions had not read", "messages", lost,
				"error", droverdriver.ErrSubscriptionBehind)
		}
		r.TestSignals.Passed.Send(dropped)
	})
}

// RunOnce rotates if due, drops every droppable sealed generation and
// deletes from the others the messages of topics past their retention. It
// reports how many generations it dropped and how many messages it
// removed that some subscription had not read.
func (r *TopicRetainer) RunOnce(ctx context.Context) (dropped int, lost int64, err error) {
	gens, err := r.Exec.TopicGenerations(ctx)
	if err != nil || len(gens) == 0 {
		return 0, 0, err
	}
	cur := gens[len(gens)-1]
	if engine.ShouldRotate(cur, cmp.Or(r.MaxMessages, GenerationMessagesDefault), cmp.Or(r.MaxAge, GenerationAgeDefault)) {
		if err := r.Exec.TopicRotate(ctx, cur.Gen+1); err != nil {
			return 0, 0, err
		}
		// The generation just sealed is not settled before the next pass.
	}
	for _, g := range gens[:len(gens)-1] {
		if g.SealedAt == nil || !g.Settled {
			continue
		}
		n, gone, err := r.retain(ctx, g)
		lost += n
		if gone {
			dropped++
		}
		if err != nil {
			return dropped, lost, err
		}
	}
	return dropped, lost, nil
}

// retain drops the sealed, settled generation g if nothing in it is owed,
// or else deletes from it the messages of topics past their retention. It
// reports the messages it removed unread and whether g is gone.
func (r *TopicRetainer) retain(ctx context.Context, g droverdriver.Generation) (lost int64, gone bool, err error) {
	if !g.Dropping {
		topics, err := r.Exec.TopicGenerationTopics(ctx, g.Gen)
		if err != nil {
			return 0, false, err
		}
		if engine.Droppable(g, topics) {
			if g.Dropping, err = r.markDrop(ctx, g); err != nil {
				return 0, false, err
			}
		}
		if !g.Dropping {
			for _, topic := range engine.Purges(g, topics) {
				n, err := r.purge(ctx, g.Gen, topic)
				if lost += n; err != nil {
					return lost, false, err
				}
			}
			return lost, false, nil
		}
	}
	for {
		res, err := r.Exec.TopicDrop(ctx, droverdriver.TopicDropParams{Gen: g.Gen, Limit: r.chunk()})
		if lost += res.Lost; err != nil || res.Done {
			return lost, res.Done, err
		}
		if err := ctx.Err(); err != nil {
			return lost, false, err
		}
	}
}

// errNotDroppable rolls back a drop decision that a recheck turned down.
var errNotDroppable = errors.New("generation no longer droppable")

// markDrop decides the drop of g again in a transaction that keeps new
// subscriptions off its topics (TopicGenerationLock), and marks it when
// the decision holds: a subscription created from the earliest message
// between the first look and the drop keeps what it was promised.
func (r *TopicRetainer) markDrop(ctx context.Context, g droverdriver.Generation) (bool, error) {
	ex, ok := r.Exec.(droverdriver.Executor)
	if !ok {
		return false, fmt.Errorf("topic retention: %T runs no transactions (not a droverdriver.Executor)", r.Exec)
	}
	err := ex.Tx(ctx, func(ctx context.Context, tx droverdriver.Executor) error {
		te, ok := tx.(droverdriver.TopicExecutor)
		if !ok {
			return droverdriver.ErrTopicsUnsupported
		}
		if err := te.TopicGenerationLock(ctx, g.Gen); err != nil {
			return err
		}
		topics, err := te.TopicGenerationTopics(ctx, g.Gen)
		if err != nil {
			return err
		}
		if !engine.Droppable(g, topics) {
			return errNotDroppable
		}
		return te.TopicDropMark(ctx, g.Gen)
	})
	if errors.Is(err, errNotDroppable) {
		return false, nil
	}
	return err == nil, err
}

// purge deletes topic's messages from generation gen, a chunk at a time,
// and reports how many of them some lane had not passed.
func (r *TopicRetainer) purge(ctx context.Context, gen int64, topic string) (lost int64, err error) {
	p := droverdriver.TopicPurgeParams{Gen: gen, Topic: topic, Limit: r.chunk()}
	for {
		res, err := r.Exec.TopicPurge(ctx, p)
		if lost += res.Lost; err != nil || res.Done {
			return lost, err
		}
		if err := ctx.Err(); err != nil {
			return lost, err
		}
		p.After = res.Last
	}
}

func (r *TopicRetainer) chunk() int { return cmp.Or(r.Chunk, RemoveChunkDefault) }
