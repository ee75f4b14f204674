package droverfleet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// What a process sees of each shard, for the operator: whether it
// answers, the last error that made it unreachable, how long a read of
// its record took, the claims this process ran on it, and its part of the
// fleet's last queue and finished-job figures. `drover serve` shows them
// (GET /v1/shards, the dashboard's shards page, shard-labelled metrics)
// and droverprom's ShardCollector exports them; nothing here queries a
// shard except Probe.

// HealthReporter reads a fleet's health whatever its transaction type:
// *Driver implements it, so that the server and droverprom, which hold a
// fleet as a droverdriver.Driver, need not know its type parameter.
type HealthReporter interface {
	// Health reports each shard as this process last saw it, without
	// asking the shards.
	Health() []ShardHealth
	// Probe reads every shard's record (its drain flag), timing each
	// read, and then reports as Health does. The error is that of a
	// record that does not match its place; a shard that does not answer
	// is reported down, not as an error.
	Probe(ctx context.Context) ([]ShardHealth, error)
}

var _ HealthReporter = (*Driver[struct{}])(nil)

// ShardHealth is one shard's health and figures as this process saw them.
type ShardHealth struct {
	ShardStatus
	// LastError is the last error that made the shard unreachable, at
	// LastErrorAt. It stays once the shard answers again, so that an
	// operator sees what happened; Down says whether it is down now.
	LastError   error
	LastErrorAt time.Time
	// RoundTrip is how long the last read of the shard's record took
	// (Probe, or the fleet's own refresh every few seconds while it
	// places jobs), at ProbedAt; zero before one answered.
	RoundTrip time.Duration
	ProbedAt  time.Time
	// Claims counts the claim statements this process ran on the shard,
	// ClaimedJobs the jobs they took and ClaimErrors those that failed;
	// Unreachable counts the calls that found the shard unreachable.
	Claims, ClaimedJobs, ClaimErrors, Unreachable uint64
	// Queues is the shard's part of the fleet's last QueueStats, at
	// QueuesAt; QueuesRead is false when the shard did not answer it (or
	// none ran yet), and Queues then empty.
	Queues     []drovertype.QueueStats
	QueuesAt   time.Time
	QueuesRead bool
	// Finished is the shard's part of the fleet's last FinishedStats, of
	// the window (FinishedSince, FinishedUntil]; FinishedRead as for
	// Queues.
	Finished                     []drovertype.FinishedStats
	FinishedSince, FinishedUntil time.Time
	FinishedRead                 bool
}

// observed is what the fleet's calls saw of one shard.
type observed struct {
	claims, claimed, claimErrors, unreachable atomic.Uint64

	mu                           sync.Mutex
	lastErr                      error
	lastErrAt                    time.Time
	roundTrip                    time.Duration
	probedAt                     time.Time
	queues                       []drovertype.QueueStats
	queuesAt                     time.Time
	queuesRead                   bool
	finished                     []drovertype.FinishedStats
	finishedSince, finishedUntil time.Time
	finishedRead                 bool
}

// claim counts one claim statement on the shard.
func (o *observed) claim(rows int, err error) {
	o.claims.Add(1)
	if err != nil {
		o.claimErrors.Add(1)
		return
	}
	o.claimed.Add(uint64(rows))
}

// unreachableNow records err, which made the shard unreachable.
func (o *observed) unreachableNow(err error) {
	o.unreachable.Add(1)
	o.mu.Lock()
	o.lastErr, o.lastErrAt = err, time.Now()
	o.mu.Unlock()
}

// answered records the time a read of the shard's record took.
func (o *observed) answered(took time.Duration, at time.Time) {
	o.mu.Lock()
	o.roundTrip, o.probedAt = took, at
	o.mu.Unlock()
}

// eachShard is what each shard answered to one read: parts[k] is shard
// idx[k]'s, and read[k] says whether it answered.
type eachShard[T any] struct {
	idx   []int
	parts [][]T
	read  []bool
}

// everywhereEach gathers fn from every shard the executor reaches, as a
// tolerant everywhere does, and returns each shard's part too.
func everywhereEach[T any](ctx context.Context, e *exec, fn func(ctx context.Context, ex droverdriver.Executor) ([]T, error)) ([]T, eachShard[T], error) {
	idx, err := e.all(ctx)
	if err != nil {
		return nil, eachShard[T]{}, err
	}
	each := eachShard[T]{idx: idx, parts: make([][]T, len(idx)), read: make([]bool, len(idx))}
	all, err := gather(ctx, e, idx, true, func(ctx context.Context, ex droverdriver.Executor, i int) ([]T, error) {
		k := slices.Index(idx, i)
		rows, err := fn(ctx, ex)
		each.parts[k], each.read[k] = rows, err == nil
		return rows, err
	})
	return all, each, err
}

// noteQueues records each shard's part of a QueueStats.
func (c *core) noteQueues(each eachShard[drovertype.QueueStats], at time.Time) {
	for k, i := range each.idx {
		o := &c.shards[i].obs
		o.mu.Lock()
		o.queues, o.queuesAt, o.queuesRead = each.parts[k], at, each.read[k]
		o.mu.Unlock()
	}
}

// noteFinished records each shard's part of a FinishedStats.
func (c *core) noteFinished(each eachShard[drovertype.FinishedStats], since, until time.Time) {
	for k, i := range each.idx {
		o := &c.shards[i].obs
		o.mu.Lock()
		o.finished, o.finishedSince, o.finishedUntil, o.finishedRead = each.parts[k], since, until, each.read[k]
		o.mu.Unlock()
	}
}

// Health implements HealthReporter.
func (f *Driver[TTx]) Health() []ShardHealth {
	out := make([]ShardHealth, len(f.c.shards))
	for i, st := range f.Shards() {
		o := &f.c.shards[i].obs
		h := ShardHealth{ShardStatus: st, Claims: o.claims.Load(), ClaimedJobs: o.claimed.Load(),
			ClaimErrors: o.claimErrors.Load(), Unreachable: o.unreachable.Load()}
		o.mu.Lock()
		h.LastError, h.LastErrorAt, h.RoundTrip, h.ProbedAt = o.lastErr, o.lastErrAt, o.roundTrip, o.probedAt
		h.Queues, h.QueuesAt, h.QueuesRead = o.queues, o.queuesAt, o.queuesRead
		h.Finished, h.FinishedSince, h.FinishedUntil, h.FinishedRead = o.finished, o.finishedSince, o.finishedUntil, o.finishedRead
		o.mu.Unlock()
		out[i] = h
	}
	return out
}

// probeTimeout bounds a probe's read of one shard's record: a shard that
// takes longer is reported down.
const probeTimeout = 5 * time.Second

// Probe implements HealthReporter: every shard is asked in parallel, those
// in a backoff too, so that a shard that came back shows up at once. It
// does not hold the lock of the fleet's own refresh of the records, so
// that placements never wait behind a probe of a shard that hangs.
func (f *Driver[TTx]) Probe(ctx context.Context) ([]ShardHealth, error) {
	c := f.c
	errs := make([]error, len(c.shards))
	var wg sync.WaitGroup
	for _, s := range c.shards {
		wg.Go(func() {
			rctx, cancel := context.WithTimeout(ctx, probeTimeout)
			defer cancel()
			start := time.Now()
			rec, err := s.sx.ShardGet(rctx)
			if c.failed(s, err) {
				return
			}
			c.ok(s) // it answered, whatever its record says
			s.obs.answered(time.Since(start), start)
			c.mu.Lock()
			fleet := c.fleet
			c.mu.Unlock()
			switch {
			case err != nil: // not migrated yet: Attach reports it
			case rec == nil: // not attached yet
			case rec.Index != s.idx || fleet != "" && rec.Fleet != fleet:
				errs[s.idx] = fmt.Errorf("droverfleet: the database given as shard %d is shard %d of fleet %s (this fleet is %s)", s.idx, rec.Index, rec.Fleet, fleet)
				return
			}
			s.mu.Lock()
			s.readErr = err
			if rec != nil {
				s.rec = rec
			}
			s.mu.Unlock()
		})
	}
	wg.Wait()
	return f.Health(), errors.Join(errs...)
}
