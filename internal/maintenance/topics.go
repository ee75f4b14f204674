package maintenance

import (
	"cmp"
	"context"
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
)

// TopicRetainer keeps topic messages within their retention: it rotates
// the current generation when it is large or old enough and drops sealed
// generations that no subscription within retention still needs, whole
// (engine.ShouldRotate, engine.Droppable). Messages are never deleted row
// by row.
type TopicRetainer struct {
	Exec        droverdriver.TopicExecutor
	Interval    time.Duration
	MaxMessages int64
	MaxAge      time.Duration
	Logger      *slog.Logger
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
	})
}

// RunOnce rotates if due and drops every droppable sealed generation. It
// reports how many generations it dropped and how many messages they held
// that some subscription had not read.
func (r *TopicRetainer) RunOnce(ctx context.Context) (dropped int, lost int64, err error) {
	gens, err := r.Exec.TopicGenerations(ctx)
	if err != nil || len(gens) == 0 {
		return 0, 0, err
	}
	now := time.Now()
	cur := gens[len(gens)-1]
	if engine.ShouldRotate(cur, now, cmp.Or(r.MaxMessages, GenerationMessagesDefault), cmp.Or(r.MaxAge, GenerationAgeDefault)) {
		if err := r.Exec.TopicRotate(ctx, cur.Gen+1); err != nil {
			return 0, 0, err
		}
		// The generation just sealed is not settled before the next pass.
	}
	for _, g := range gens[:len(gens)-1] {
		if g.SealedAt == nil || !g.Settled {
			continue
		}
		topics, err := r.Exec.TopicGenerationTopics(ctx, g.Gen)
		if err != nil {
			return dropped, lost, err
		}
		if !engine.Droppable(g, topics, now) {
			continue
		}
		n, err := r.Exec.TopicDrop(ctx, g.Gen)
		if err != nil {
			return dropped, lost, err
		}
		dropped++
		lost += n
	}
	return dropped, lost, nil
}
