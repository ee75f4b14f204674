package droverfleet

import (
	"context"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// The reads of the dashboard and the operator: per-state counts, the kinds
// waiting, a strict queue's head, and the stored history of queue figures.

// JobMatchCountByState counts as JobMatchCount does, shard after shard in
// ID order, each shard examining what the shards before it left of each
// table's Examine, and sums the counts of each state.
func (e *exec) JobMatchCountByState(ctx context.Context, p droverdriver.MatchCountParams) (droverdriver.StateMatchCount, error) {
	out := droverdriver.StateMatchCount{
		Waiting:  droverdriver.TableStateCount{Matched: map[drovertype.JobState]int64{}},
		Finished: droverdriver.TableStateCount{Matched: map[drovertype.JobState]int64{}},
	}
	err := e.countInOrder(ctx, p, func(ctx context.Context, ex droverdriver.Executor, q droverdriver.MatchCountParams, waiting bool) (int64, error) {
		got, err := ex.JobMatchCountByState(ctx, q)
		t, c := &out.Finished, got.Finished
		if waiting {
			t, c = &out.Waiting, got.Waiting
		}
		t.Examined += c.Examined
		for s, n := range c.Matched {
			t.Matched[s] += n
		}
		return c.Examined, err
	})
	return out, err
}

// KindsWaiting merges each shard's groups of the first limit jobs it
// holds of queue by kind: the kinds at the heads of the shards' claim
// orders, which a claim across shards meets first.
func (e *exec) KindsWaiting(ctx context.Context, queue string, limit int) ([]droverdriver.RouteGroup, error) {
	groups, err := everywhere(ctx, e, true, func(ctx context.Context, ex droverdriver.Executor, _ int) ([]droverdriver.RouteGroup, error) {
		return ex.KindsWaiting(ctx, queue, limit)
	})
	if err != nil {
		return nil, err
	}
	return mergeBy(groups, func(g droverdriver.RouteGroup) string { return g.Queue + "\x00" + g.Kind }, foldGroup), nil
}

// foldGroup adds b's jobs to a, keeping the oldest run_at and the lowest
// sample.
func foldGroup(a *droverdriver.RouteGroup, b droverdriver.RouteGroup) {
	a.Jobs += b.Jobs
	if b.OldestRunAt.Before(a.OldestRunAt) {
		a.OldestRunAt = b.OldestRunAt
	}
	a.Sample = min(a.Sample, b.Sample)
}

// QueueHead asks the queue's shard: a queue in strict order is pinned
// there, with every job of it.
func (e *exec) QueueHead(ctx context.Context, queue string) (drovertype.QueueHead, error) {
	var out drovertype.QueueHead
	keys, err := e.c.ready(ctx)
	if err != nil {
		return out, err
	}
	err = e.one(ctx, queueShard(keys, queue), func(ctx context.Context, ex droverdriver.Executor) error {
		out, err = ex.QueueHead(ctx, queue)
		return err
	})
	return out, err
}

// History: every shard records the samples of its own jobs, and a read
// sums them (gauges and counts) with the largest of their percentiles, so
// the fleet's percentiles are an upper bound of the true ones. Lag
// samples, computed by the fleet's TopicLag over every shard already, are
// stored on the first shard, where the leader runs.

func (e *exec) StatsRecord(ctx context.Context, p droverdriver.StatsRecordParams) (int, error) {
	ns, err := everywhere(ctx, e, true, func(ctx context.Context, ex droverdriver.Executor, _ int) ([]int, error) {
		n, err := ex.StatsRecord(ctx, p)
		return []int{n}, err
	})
	return sum(ns), err
}

func (e *exec) TopicLagRecord(ctx context.Context, at time.Time, lags []drovertype.SubscriptionLag) error {
	return e.one(ctx, first, func(ctx context.Context, ex droverdriver.Executor) error {
		return ex.TopicLagRecord(ctx, at, lags)
	})
}

func (e *exec) StatsRollup(ctx context.Context, p droverdriver.StatsRollupParams) (int, error) {
	ns, err := everywhere(ctx, e, true, func(ctx context.Context, ex droverdriver.Executor, _ int) ([]int, error) {
		n, err := ex.StatsRollup(ctx, p)
		return []int{n}, err
	})
	return sum(ns), err
}

// sampleOrder formats a sample's time so that keys sort oldest first.
const sampleOrder = "2006-01-02T15:04:05.000000000"

func (e *exec) StatsHistory(ctx context.Context, p droverdriver.StatsHistoryParams) ([]drovertype.StatSample, error) {
	rows, err := everywhere(ctx, e, true, func(ctx context.Context, ex droverdriver.Executor, _ int) ([]drovertype.StatSample, error) {
		return ex.StatsHistory(ctx, p)
	})
	if err != nil {
		return nil, err
	}
	merged := mergeBy(rows, func(s drovertype.StatSample) string {
		return s.At.UTC().Format(sampleOrder) + "\x00" + s.Queue + "\x00" + s.Kind
	}, func(a *drovertype.StatSample, b drovertype.StatSample) {
		a.Pending += b.Pending
		a.Blocked += b.Blocked
		a.Available += b.Available
		a.Scheduled += b.Scheduled
		a.Retryable += b.Retryable
		a.Running += b.Running
		a.Completed += b.Completed
		a.Cancelled += b.Cancelled
		a.Discarded += b.Discarded
		a.PickupP50, a.PickupP95, a.PickupP99 = max(a.PickupP50, b.PickupP50), max(a.PickupP95, b.PickupP95), max(a.PickupP99, b.PickupP99)
		a.RunP50, a.RunP95, a.RunP99 = max(a.RunP50, b.RunP50), max(a.RunP95, b.RunP95), max(a.RunP99, b.RunP99)
	})
	return merged, nil
}

func (e *exec) TopicLagHistory(ctx context.Context, p droverdriver.TopicLagHistoryParams) ([]drovertype.TopicLagSample, error) {
	var out []drovertype.TopicLagSample
	err := e.one(ctx, first, func(ctx context.Context, ex droverdriver.Executor) error {
		var err error
		out, err = ex.TopicLagHistory(ctx, p)
		return err
	})
	return out, err
}
