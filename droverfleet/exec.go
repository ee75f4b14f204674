package droverfleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/driverrows"
	"github.com/droverhq/drover/internal/engine"
)

// exec runs the contract's statements on the fleet: on the shards' own
// connections (the Driver), in a transaction of the fleet's (Tx), or in a
// caller's transaction (UnwrapExecutor).
type exec struct {
	c *core
	// on returns the executor of shard i in this context.
	on func(ctx context.Context, i int) (droverdriver.Executor, error)
	// reach returns the shards this executor can reach; nil for all.
	reach func(ctx context.Context) ([]int, error)
	// tx is set inside a transaction of the fleet's.
	tx *multiTx
	// user is set in a caller's transaction: no shard is skipped, and
	// only the shards the transaction reaches are asked.
	user bool
}

var _ droverdriver.Executor = (*exec)(nil)

// all returns the shards this executor asks, in order.
func (e *exec) all(ctx context.Context) ([]int, error) {
	if e.reach != nil {
		return e.reach(ctx)
	}
	idx := make([]int, len(e.c.shards))
	for i := range idx {
		idx[i] = i
	}
	return idx, nil
}

// reachable reports whether the executor can run statements on shard i.
func (e *exec) reachable(ctx context.Context, i int) error {
	idx, err := e.all(ctx)
	if err != nil {
		return err
	}
	if !slices.Contains(idx, i) {
		return fmt.Errorf("droverfleet: the statement belongs on shard %d, which this transaction is not on (it reaches shards %v)", i, idx)
	}
	return nil
}

// errAllDown is returned by a call that skips unreachable shards when no
// shard answered.
var errAllDown = errors.New("droverfleet: no shard answered")

// run runs fn on the shards idx in parallel (in order inside a fleet's
// transaction), k being the position in idx.
// A tolerant call skips the shards that are down, and those that turn out
// unreachable now, so that one shard's outage stalls only its own jobs;
// it fails only when no shard answered. Any other failure fails the call,
// naming the shard.
func (e *exec) run(ctx context.Context, idx []int, tolerant bool, fn func(ctx context.Context, k int, ex droverdriver.Executor) error) error {
	errs := make([]error, len(idx))
	skipped := make([]bool, len(idx))
	now := time.Now()
	one := func(k int) {
		errs[k] = e.statement(ctx, idx[k], func(ctx context.Context, ex droverdriver.Executor) error { return fn(ctx, k, ex) })
	}
	var wg sync.WaitGroup
	for k, i := range idx {
		if tolerant && !e.user && !e.c.shards[i].up(now) {
			skipped[k] = true
			continue
		}
		if len(idx) == 1 || e.user || e.tx != nil {
			// A caller's transaction is one connection. A fleet's
			// transaction takes its shards one at a time, in idx's
			// (ascending) order: two that each held one shard's locks
			// (a unique key, a queue's row) while waiting for the other's
			// would deadlock across databases, where no PostgreSQL sees
			// the cycle.
			one(k)
			continue
		}
		wg.Go(func() { one(k) })
	}
	wg.Wait()
	answered := false
	var down error
	for k, i := range idx {
		s := e.c.shards[i]
		switch err := errs[k]; {
		case skipped[k]:
			s.mu.Lock()
			down = cmpErr(down, fmt.Errorf("shard %d: %w", i, s.downErr))
			s.mu.Unlock()
		case err == nil:
			answered = true
			e.c.ok(s)
		case e.c.failed(s, err) && tolerant:
			down = cmpErr(down, fmt.Errorf("shard %d: %w", i, err))
		default:
			return fmt.Errorf("shard %d: %w", i, err)
		}
	}
	if !answered && down != nil {
		return fmt.Errorf("%w: %w", errAllDown, down)
	}
	return nil
}

// statement runs fn on shard i's executor in this context; inside a
// fleet's transaction, with the wait the transaction allows.
func (e *exec) statement(ctx context.Context, i int, fn func(ctx context.Context, ex droverdriver.Executor) error) error {
	ex, err := e.on(ctx, i)
	if err != nil {
		return err
	}
	if e.tx == nil {
		return fn(ctx, ex)
	}
	ctx, end := e.tx.bound(ctx)
	return end(fn(ctx, ex))
}

// cmpErr keeps the first error.
func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// gather runs fn on the shards idx and concatenates what they return, in
// shard order.
func gather[T any](ctx context.Context, e *exec, idx []int, tolerant bool, fn func(ctx context.Context, ex droverdriver.Executor, i int) ([]T, error)) ([]T, error) {
	parts := make([][]T, len(idx))
	err := e.run(ctx, idx, tolerant, func(ctx context.Context, k int, ex droverdriver.Executor) error {
		var err error
		parts[k], err = fn(ctx, ex, idx[k])
		return err
	})
	if err != nil {
		return nil, err
	}
	return slices.Concat(parts...), nil
}

// everywhere gathers fn from every shard the executor reaches.
func everywhere[T any](ctx context.Context, e *exec, tolerant bool, fn func(ctx context.Context, ex droverdriver.Executor, i int) ([]T, error)) ([]T, error) {
	idx, err := e.all(ctx)
	if err != nil {
		return nil, err
	}
	return gather(ctx, e, idx, tolerant, fn)
}

// split groups ids by shard. IDs of no shard of the fleet match no job and
// are left out, as a store leaves out IDs it does not know; in a caller's
// transaction, an ID of a shard it does not reach is an error.
func (e *exec) split(ctx context.Context, ids []int64) (map[int][]int64, error) {
	groups := map[int][]int64{}
	for _, id := range ids {
		i := droverdriver.ShardOf(id)
		if id <= 0 || i >= len(e.c.shards) {
			continue
		}
		groups[i] = append(groups[i], id)
	}
	if e.reach != nil {
		for i := range groups {
			if err := e.reachable(ctx, i); err != nil {
				return nil, err
			}
		}
	}
	return groups, nil
}

// byIDs runs fn on each shard with its share of ids and concatenates what
// they return.
func byIDs[T any](ctx context.Context, e *exec, ids []int64, tolerant bool, fn func(ctx context.Context, ex droverdriver.Executor, ids []int64) ([]T, error)) ([]T, error) {
	groups, err := e.split(ctx, ids)
	if err != nil {
		return nil, err
	}
	return gather(ctx, e, sortedKeys(groups), tolerant, func(ctx context.Context, ex droverdriver.Executor, i int) ([]T, error) {
		return fn(ctx, ex, groups[i])
	})
}

// inputOrder sorts rows by the place of their IDs in ids, the order a
// store returns rows about the IDs it was given.
func inputOrder[T any](rows []T, ids []int64, id func(T) int64) []T {
	at := make(map[int64]int, len(ids))
	for k, v := range ids {
		if _, ok := at[v]; !ok {
			at[v] = k
		}
	}
	slices.SortStableFunc(rows, func(a, b T) int { return at[id(a)] - at[id(b)] })
	return rows
}

func finishedID(r droverdriver.FinishedRow) int64 { return r.ID }

// one runs fn on shard i.
func (e *exec) one(ctx context.Context, i int, fn func(ctx context.Context, ex droverdriver.Executor) error) error {
	if e.reach != nil {
		if err := e.reachable(ctx, i); err != nil {
			return err
		}
	}
	return e.run(ctx, []int{i}, false, func(ctx context.Context, _ int, ex droverdriver.Executor) error { return fn(ctx, ex) })
}

// first is the shard that holds what lives on one shard only (leadership,
// periodic ticks, bulk tasks): shard 0.
const first = 0

// Inserts.

// place returns the shard job p must live on, or -1 when it may go
// anywhere: a keyed job lives with its key, a unique job with its unique
// key (a job with both with its key), a job of a limited or strict queue
// on the queue's shard.
func (e *exec) place(ctx context.Context, keys int, p *droverdriver.InsertParams) (int, error) {
	switch {
	case p.Key != "":
		return keyShard(keys, p.Queue, p.Key), nil
	case p.UniqueKey != "":
		return uniqueShard(keys, p), nil
	}
	pinned, err := e.c.pinned(ctx, keys, p.Queue)
	if err != nil {
		return 0, err
	}
	if pinned {
		return queueShard(keys, p.Queue), nil
	}
	return -1, nil
}

// spread returns the next shard in turn that takes placements, other
// than those in skip.
func (e *exec) spread(ctx context.Context, skip []int) (int, error) {
	idx, err := e.all(ctx)
	if err != nil {
		return 0, err
	}
	now := time.Now()
	var ok []int
	for _, i := range idx {
		s := e.c.shards[i]
		if slices.Contains(skip, i) {
			continue
		}
		if s.placeable(now) || e.user && s.attached() {
			ok = append(ok, i)
		}
	}
	if len(ok) == 0 {
		return 0, fmt.Errorf("droverfleet: no shard takes new jobs (of shards %v, every one is down, draining or not attached)", idx)
	}
	return ok[int(e.c.spread.Add(1)%uint64(len(ok)))], nil
}

// placeAll returns the shard of each job: the one it must live on, or
// one shard for all those that may go anywhere (so that a batch stays one
// statement), and that shard (-1 when every job is placed by rule).
func (e *exec) placeAll(ctx context.Context, jobs []droverdriver.InsertParams) ([]int, int, error) {
	keys, err := e.c.ready(ctx)
	if err != nil {
		return nil, 0, err
	}
	target := make([]int, len(jobs))
	free := -1
	for i := range jobs {
		t, err := e.place(ctx, keys, &jobs[i])
		if err != nil {
			return nil, 0, err
		}
		if t < 0 {
			if free < 0 {
				if free, err = e.spread(ctx, nil); err != nil {
					return nil, 0, err
				}
			}
			t = free
		} else if e.reach != nil {
			if err := e.reachable(ctx, t); err != nil {
				return nil, 0, fmt.Errorf("job %d of %d: %w", i+1, len(jobs), err)
			}
		}
		target[i] = t
	}
	return target, free, nil
}

func (e *exec) JobInsertMany(ctx context.Context, jobs []droverdriver.InsertParams) ([]int64, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	target, free, err := e.placeAll(ctx, jobs)
	if err != nil {
		return nil, err
	}
	groups := map[int][]int{}
	for i, t := range target {
		groups[t] = append(groups[t], i)
	}
	if len(groups) == 1 {
		var ids []int64
		err := e.retrySpread(ctx, target[0], target[0] == free, func(ctx context.Context, ex droverdriver.Executor) error {
			var err error
			ids, err = ex.JobInsertMany(ctx, jobs)
			return err
		})
		return ids, err
	}
	if e.tx == nil && !e.user {
		// Several shards: one transaction of the fleet's, so that a
		// failure leaves none of the jobs (each shard commits its own).
		var ids []int64
		err := e.Tx(ctx, func(ctx context.Context, tx droverdriver.Executor) error {
			var err error
			ids, err = tx.(*exec).insertGroups(ctx, jobs, groups)
			return err
		})
		return ids, err
	}
	return e.insertGroups(ctx, jobs, groups)
}

// insertGroups inserts each shard's jobs on it, in parallel, and returns
// the IDs in input order.
func (e *exec) insertGroups(ctx context.Context, jobs []droverdriver.InsertParams, groups map[int][]int) ([]int64, error) {
	ids := make([]int64, len(jobs))
	idx := sortedKeys(groups)
	err := e.run(ctx, idx, false, func(ctx context.Context, k int, ex droverdriver.Executor) error {
		pos := groups[idx[k]]
		part := make([]droverdriver.InsertParams, len(pos))
		for j, p := range pos {
			part[j] = jobs[p]
		}
		got, err := ex.JobInsertMany(ctx, part)
		if err != nil {
			return err
		}
		for j, p := range pos {
			ids[p] = got[j]
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// retrySpread runs fn on shard i and, when the jobs could go anywhere
// (free) and shard i turns out unreachable, on the next shards in turn.
func (e *exec) retrySpread(ctx context.Context, i int, free bool, fn func(ctx context.Context, ex droverdriver.Executor) error) error {
	var tried []int
	for {
		err := e.one(ctx, i, fn)
		if err == nil || !free || e.user || e.tx != nil || !e.c.unreachable(e.c.shards[i], err) {
			return err
		}
		tried = append(tried, i)
		next, nerr := e.spread(ctx, tried)
		if nerr != nil {
			return err
		}
		i = next
	}
}

func (e *exec) JobInsert(ctx context.Context, job droverdriver.InsertParams) (*drovertype.JobRow, error) {
	target, free, err := e.placeAll(ctx, []droverdriver.InsertParams{job})
	if err != nil {
		return nil, err
	}
	var row *drovertype.JobRow
	err = e.retrySpread(ctx, target[0], target[0] == free, func(ctx context.Context, ex droverdriver.Executor) error {
		var err error
		row, err = ex.JobInsert(ctx, job)
		return err
	})
	return row, err
}

// Claims and leases.

// JobClaim claims from every shard that is up, in parallel: Max is shared
// among them, starting at a shard that turns with every call, so that
// small claims reach every shard in turn; shards that filled their share
// are asked again for what the others lacked. A shard that fails is
// skipped. Rows come back in the claim order across shards.
func (e *exec) JobClaim(ctx context.Context, p droverdriver.ClaimParams) ([]*drovertype.JobRow, error) {
	idx, err := e.all(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	var live []int
	for _, i := range idx {
		if e.user || e.c.shards[i].up(now) {
			live = append(live, i)
		}
	}
	if len(live) == 0 {
		return nil, fmt.Errorf("claim from queue %s: %w", p.Queue, errAllDown)
	}
	if p.Token.IsZero() {
		p.Token = drovertype.NewLeaseToken() // one for every shard's rows
	}
	start := int(e.c.claims.Add(1) % uint64(len(live)))
	unasked := append(live[start:], live[:start]...)
	var rows []*drovertype.JobRow
	var full []int
	// Each round asks the shards that filled their share in the round
	// before and those not asked yet for what is still missing, so a
	// claim of one job reaches every shard before it comes back empty.
	for missing := p.Max; missing > 0; missing = p.Max - len(rows) {
		ask := append(full, unasked...)
		if len(ask) == 0 {
			break
		}
		got, asked, filled, err := e.claimRound(ctx, p, ask, missing)
		if err != nil {
			return nil, err
		}
		rows, full = append(rows, got...), filled
		unasked = slices.DeleteFunc(unasked, func(i int) bool { return slices.Contains(asked, i) })
	}
	driverrows.SortClaimed(rows)
	return rows, nil
}

// claimRound claims max jobs shared among shards, and returns the shards
// it asked and those that filled their share.
func (e *exec) claimRound(ctx context.Context, p droverdriver.ClaimParams, shards []int, max int) (rows []*drovertype.JobRow, asked, full []int, err error) {
	var share []int
	for k, i := range shards {
		n := max / len(shards)
		if k < max%len(shards) {
			n++
		}
		if n > 0 {
			asked, share = append(asked, i), append(share, n)
		}
	}
	parts := make([][]*drovertype.JobRow, len(asked))
	err = e.run(ctx, asked, true, func(ctx context.Context, k int, ex droverdriver.Executor) error {
		q := p
		q.Max = share[k]
		if q.After != nil && droverdriver.ShardOf(q.After.ID) != asked[k] {
			// A position is a place in one shard's order: the other
			// shards claim from their heads, by the statement without it.
			q.After = nil
			q.Variant = engine.ClaimVariant(q, q.Variant == droverdriver.ClaimStrict)
		}
		var err error
		parts[k], err = ex.JobClaim(ctx, q)
		e.c.shards[asked[k]].obs.claim(len(parts[k]), err)
		return err
	})
	if err != nil {
		return nil, nil, nil, err
	}
	for k := range asked {
		if len(parts[k]) == share[k] {
			full = append(full, asked[k])
		}
	}
	return slices.Concat(parts...), asked, full, nil
}

func (e *exec) JobHeartbeat(ctx context.Context, p droverdriver.HeartbeatParams) (droverdriver.HeartbeatResult, error) {
	groups := map[int]*droverdriver.HeartbeatParams{}
	for k, id := range p.IDs {
		i := droverdriver.ShardOf(id)
		if i >= len(e.c.shards) {
			continue
		}
		g := groups[i]
		if g == nil {
			g = &droverdriver.HeartbeatParams{Lease: p.Lease}
			groups[i] = g
		}
		g.IDs, g.Attempts, g.Tokens = append(g.IDs, id), append(g.Attempts, p.Attempts[k]), append(g.Tokens, p.Tokens[k])
	}
	idx := sortedKeys(groups)
	res := make([]droverdriver.HeartbeatResult, len(idx))
	err := e.run(ctx, idx, true, func(ctx context.Context, k int, ex droverdriver.Executor) error {
		var err error
		res[k], err = ex.JobHeartbeat(ctx, *groups[idx[k]])
		return err
	})
	var out droverdriver.HeartbeatResult
	for _, r := range res {
		out.Lost = append(out.Lost, r.Lost...)
		out.CancelRequested = append(out.CancelRequested, r.CancelRequested...)
	}
	return out, err
}

// Maintenance: every shard that answers.

// budget runs fn on the shards one after the other, from a shard that
// turns with every call so that none waits behind the others, each with
// what the shards before left of limit (fn returns how much it used),
// skipping the shards that are down: the contract's "at most limit"
// holds for the fleet.
func (e *exec) budget(ctx context.Context, limit int, fn func(ctx context.Context, ex droverdriver.Executor, left int) (int, error)) error {
	idx, err := e.all(ctx)
	if err != nil {
		return err
	}
	start := int(e.c.claims.Add(1) % uint64(len(idx)))
	idx = append(idx[start:], idx[:start]...)
	left := limit
	for _, i := range idx {
		if left <= 0 {
			break
		}
		err := e.run(ctx, []int{i}, true, func(ctx context.Context, _ int, ex droverdriver.Executor) error {
			used, err := fn(ctx, ex, left)
			left -= used
			return err
		})
		if err != nil && !errors.Is(err, errAllDown) {
			return err
		}
	}
	return nil
}

func (e *exec) JobRescue(ctx context.Context, p droverdriver.RescueParams) ([]droverdriver.FinishedRow, error) {
	var out []droverdriver.FinishedRow
	err := e.budget(ctx, p.Limit, func(ctx context.Context, ex droverdriver.Executor, left int) (int, error) {
		q := p
		q.Limit = left
		rows, err := ex.JobRescue(ctx, q)
		out = append(out, rows...)
		return len(rows), err
	})
	return out, err
}

func (e *exec) JobPrune(ctx context.Context, p droverdriver.PruneParams) (int, error) {
	n := 0
	err := e.budget(ctx, p.Limit, func(ctx context.Context, ex droverdriver.Executor, left int) (int, error) {
		q := p
		q.Limit = left
		k, err := ex.JobPrune(ctx, q)
		n += k
		return k, err
	})
	return n, err
}

func (e *exec) KeyBlocked(ctx context.Context, limit int) (droverdriver.KeyParams, error) {
	var out []droverdriver.KeyParams
	err := e.budget(ctx, limit, func(ctx context.Context, ex droverdriver.Executor, left int) (int, error) {
		k, err := ex.KeyBlocked(ctx, left)
		out = append(out, k)
		return len(k.Keys), err
	})
	return joinKeys(out), err
}

func (e *exec) KeyRatePrune(ctx context.Context, limit int) error {
	_, err := everywhere(ctx, e, true, func(ctx context.Context, ex droverdriver.Executor, _ int) ([]struct{}, error) {
		return nil, ex.KeyRatePrune(ctx, limit)
	})
	return err
}

// joinKeys concatenates key lists.
func joinKeys(parts []droverdriver.KeyParams) droverdriver.KeyParams {
	var out droverdriver.KeyParams
	for _, k := range parts {
		out.Queues = append(out.Queues, k.Queues...)
		out.Keys = append(out.Keys, k.Keys...)
		out.Retried = append(out.Retried, k.Retried...)
	}
	return out
}

func sum(ns []int) int {
	t := 0
	for _, n := range ns {
		t += n
	}
	return t
}

// Jobs by ID.

func (e *exec) JobGet(ctx context.Context, id int64) (*drovertype.JobRow, error) {
	i := droverdriver.ShardOf(id)
	if id <= 0 {
		// No job: a probe of whether the store answers (the completer's),
		// which a fleet answers when every shard does.
		_, err := everywhere(ctx, e, false, func(ctx context.Context, ex droverdriver.Executor, _ int) ([]struct{}, error) {
			if _, err := ex.JobGet(ctx, id); !errors.Is(err, droverdriver.ErrNotFound) {
				return nil, err
			}
			return nil, nil
		})
		if err != nil {
			return nil, err
		}
		return nil, droverdriver.ErrNotFound
	}
	if i >= len(e.c.shards) {
		return nil, droverdriver.ErrNotFound
	}
	var row *drovertype.JobRow
	err := e.one(ctx, i, func(ctx context.Context, ex droverdriver.Executor) error {
		var err error
		row, err = ex.JobGet(ctx, id)
		return err
	})
	return row, err
}

func (e *exec) JobCancel(ctx context.Context, p droverdriver.CancelParams) ([]droverdriver.FinishedRow, []int64, error) {
	var mu sync.Mutex
	var flagged []int64
	ended, err := byIDs(ctx, e, p.IDs, false, func(ctx context.Context, ex droverdriver.Executor, ids []int64) ([]droverdriver.FinishedRow, error) {
		q := p
		q.IDs = ids
		ended, f, err := ex.JobCancel(ctx, q)
		mu.Lock()
		flagged = append(flagged, f...)
		mu.Unlock()
		return ended, err
	})
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(flagged)
	return inputOrder(ended, p.IDs, finishedID), flagged, nil
}

func (e *exec) JobDiscard(ctx context.Context, ids []int64, now time.Time) ([]droverdriver.FinishedRow, error) {
	rows, err := byIDs(ctx, e, ids, false, func(ctx context.Context, ex droverdriver.Executor, ids []int64) ([]droverdriver.FinishedRow, error) {
		return ex.JobDiscard(ctx, ids, now)
	})
	return inputOrder(rows, ids, finishedID), err
}

func (e *exec) JobRetry(ctx context.Context, ids []int64, now time.Time) ([]droverdriver.RetriedRow, error) {
	rows, err := byIDs(ctx, e, ids, false, func(ctx context.Context, ex droverdriver.Executor, ids []int64) ([]droverdriver.RetriedRow, error) {
		return ex.JobRetry(ctx, ids, now)
	})
	return inputOrder(rows, ids, func(r droverdriver.RetriedRow) int64 { return r.ID }), err
}

func (e *exec) UniqueRetake(ctx context.Context, ids []int64) ([]droverdriver.UniqueConflict, error) {
	rows, err := byIDs(ctx, e, ids, false, func(ctx context.Context, ex droverdriver.Executor, ids []int64) ([]droverdriver.UniqueConflict, error) {
		return ex.UniqueRetake(ctx, ids)
	})
	return inputOrder(rows, ids, func(r droverdriver.UniqueConflict) int64 { return r.ID }), err
}

func (e *exec) JobDelete(ctx context.Context, ids []int64) ([]int64, error) {
	out, err := byIDs(ctx, e, ids, false, func(ctx context.Context, ex droverdriver.Executor, ids []int64) ([]int64, error) {
		return ex.JobDelete(ctx, ids)
	})
	slices.Sort(out)
	return out, err
}

// Lists: shards hold disjoint ranges of IDs, in shard order, so a list in
// ID order is the shards' lists one after the other.

// ordered returns the shards the executor reaches in the order of a list
// (descending for desc), keeping those whose range meets (lo, hi).
func (e *exec) ordered(ctx context.Context, desc bool, lo, hi int64) ([]int, error) {
	idx, err := e.all(ctx)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, i := range idx {
		base, next := droverdriver.ShardBase(i), droverdriver.ShardBase(i+1)
		if i == 0 {
			base = 0
		}
		if next-1 <= lo || base >= hi {
			continue
		}
		out = append(out, i)
	}
	if desc {
		slices.Reverse(out)
	}
	return out, nil
}

func (e *exec) JobList(ctx context.Context, p droverdriver.ListParams) ([]*drovertype.JobRow, error) {
	lo, hi := p.Bounds()
	idx, err := e.ordered(ctx, p.Desc, lo, hi)
	if err != nil {
		return nil, err
	}
	var out []*drovertype.JobRow
	for _, i := range idx {
		q := p
		if p.Limit > 0 {
			q.Limit = p.Limit - len(out)
		}
		err := e.one(ctx, i, func(ctx context.Context, ex droverdriver.Executor) error {
			rows, err := ex.JobList(ctx, q)
			out = append(out, rows...)
			return err
		})
		if err != nil {
			return nil, err
		}
		if p.Limit > 0 && len(out) >= p.Limit {
			break
		}
	}
	return out, nil
}

func (e *exec) JobIDNext(ctx context.Context, p droverdriver.ListParams) (int64, error) {
	lo, hi := p.Bounds()
	idx, err := e.ordered(ctx, p.Desc, lo, hi)
	if err != nil {
		return 0, err
	}
	for _, i := range idx {
		var id int64
		err := e.one(ctx, i, func(ctx context.Context, ex droverdriver.Executor) error {
			var err error
			id, err = ex.JobIDNext(ctx, p)
			return err
		})
		if err != nil || id != 0 {
			return id, err
		}
	}
	return 0, nil
}

func (e *exec) JobIDBounds(ctx context.Context) (droverdriver.IDBounds, error) {
	parts, err := everywhere(ctx, e, false, func(ctx context.Context, ex droverdriver.Executor, _ int) ([]droverdriver.IDBounds, error) {
		b, err := ex.JobIDBounds(ctx)
		return []droverdriver.IDBounds{b}, err
	})
	var out droverdriver.IDBounds
	for _, b := range parts {
		out.WaitingMin, out.WaitingMax = widen(out.WaitingMin, out.WaitingMax, b.WaitingMin, b.WaitingMax)
		out.FinishedMin, out.FinishedMax = widen(out.FinishedMin, out.FinishedMax, b.FinishedMin, b.FinishedMax)
	}
	return out, err
}

// widen returns the range [lo, hi] grown by [blo, bhi]; zeros are empty.
func widen(lo, hi, blo, bhi int64) (int64, int64) {
	if blo == 0 && bhi == 0 {
		return lo, hi
	}
	if lo == 0 && hi == 0 {
		return blo, bhi
	}
	return min(lo, blo), max(hi, bhi)
}

// JobMatchCount reads the first Examine jobs of each table in the window
// as one store would: shard after shard, in ID order, each reading what
// the shards before it left of the table's Examine.
func (e *exec) JobMatchCount(ctx context.Context, p droverdriver.MatchCountParams) (droverdriver.MatchCount, error) {
	var out droverdriver.MatchCount
	err := e.countInOrder(ctx, p, func(ctx context.Context, ex droverdriver.Executor, q droverdriver.MatchCountParams, waiting bool) (int64, error) {
		got, err := ex.JobMatchCount(ctx, q)
		t, c := &out.Finished, got.Finished
		if waiting {
			t, c = &out.Waiting, got.Waiting
		}
		add(t, c)
		return c.Examined, err
	})
	return out, err
}

// countInOrder runs count on each table p asks for, on the shards of its
// window in ID order, with q asking for that table alone and for what the
// shards before left of p.Examine; count adds what it read to its
// caller's sums and returns how many jobs the shard examined.
func (e *exec) countInOrder(ctx context.Context, p droverdriver.MatchCountParams,
	count func(ctx context.Context, ex droverdriver.Executor, q droverdriver.MatchCountParams, waiting bool) (int64, error)) error {
	lo, hi := p.Filter.Bounds()
	idx, err := e.ordered(ctx, false, lo, hi)
	if err != nil {
		return err
	}
	for _, waiting := range []bool{true, false} {
		examined := int64(0)
		for _, i := range idx {
			if !(waiting && p.Waiting || !waiting && p.Finished) || examined >= int64(p.Examine) {
				break
			}
			q := p
			q.Waiting, q.Finished = waiting, !waiting
			q.Examine = p.Examine - int(examined)
			err := e.one(ctx, i, func(ctx context.Context, ex droverdriver.Executor) error {
				n, err := count(ctx, ex, q, waiting)
				examined += n
				return err
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func add(t *droverdriver.TableCount, c droverdriver.TableCount) {
	t.Matched += c.Matched
	t.Examined += c.Examined
	if c.LastID != 0 {
		t.LastID = c.LastID
	}
}

// Counts and summaries: summed over shards.

func (e *exec) JobCountByState(ctx context.Context, queue string) (map[drovertype.JobState]int64, error) {
	parts, err := everywhere(ctx, e, false, func(ctx context.Context, ex droverdriver.Executor, _ int) ([]map[drovertype.JobState]int64, error) {
		m, err := ex.JobCountByState(ctx, queue)
		return []map[drovertype.JobState]int64{m}, err
	})
	if err != nil {
		return nil, err
	}
	out := map[drovertype.JobState]int64{}
	for _, m := range parts {
		for s, n := range m {
			out[s] += n
		}
	}
	return out, nil
}

// QueueStats also records each shard's part for its health (health.go).
func (e *exec) QueueStats(ctx context.Context, now time.Time) ([]drovertype.QueueStats, error) {
	parts, each, err := everywhereEach(ctx, e, func(ctx context.Context, ex droverdriver.Executor) ([]drovertype.QueueStats, error) {
		return ex.QueueStats(ctx, now)
	})
	e.c.noteQueues(each, now)
	if err != nil {
		return nil, err
	}
	return mergeBy(parts, func(s drovertype.QueueStats) string { return s.Queue }, func(a *drovertype.QueueStats, b drovertype.QueueStats) {
		a.Available += b.Available
		a.Scheduled += b.Scheduled
		a.Retryable += b.Retryable
		a.Running += b.Running
		if b.OldestAvailable != nil && (a.OldestAvailable == nil || b.OldestAvailable.Before(*a.OldestAvailable)) {
			a.OldestAvailable = b.OldestAvailable
		}
	}), nil
}

// FinishedStats sums the counts per queue. Percentiles cannot be merged
// from percentiles: each is the highest of the shards' (an upper bound),
// so that a slow shard shows.
// It also records each shard's part for its health (health.go).
func (e *exec) FinishedStats(ctx context.Context, since, until time.Time) ([]drovertype.FinishedStats, error) {
	parts, each, err := everywhereEach(ctx, e, func(ctx context.Context, ex droverdriver.Executor) ([]drovertype.FinishedStats, error) {
		return ex.FinishedStats(ctx, since, until)
	})
	e.c.noteFinished(each, since, until)
	if err != nil {
		return nil, err
	}
	return mergeBy(parts, func(s drovertype.FinishedStats) string { return s.Queue }, func(a *drovertype.FinishedStats, b drovertype.FinishedStats) {
		a.Completed += b.Completed
		a.Cancelled += b.Cancelled
		a.Discarded += b.Discarded
		a.PickupP50, a.PickupP95, a.PickupP99 = max(a.PickupP50, b.PickupP50), max(a.PickupP95, b.PickupP95), max(a.PickupP99, b.PickupP99)
	}), nil
}

func (e *exec) LeaseOwners(ctx context.Context) ([]drovertype.LeaseOwner, error) {
	parts, err := everywhere(ctx, e, true, func(ctx context.Context, ex droverdriver.Executor, _ int) ([]drovertype.LeaseOwner, error) {
		return ex.LeaseOwners(ctx)
	})
	if err != nil {
		return nil, err
	}
	return mergeBy(parts, func(o drovertype.LeaseOwner) string { return o.Owner }, func(a *drovertype.LeaseOwner, b drovertype.LeaseOwner) {
		a.Running += b.Running
		if b.LeaseExpiresAt.After(a.LeaseExpiresAt) {
			a.LeaseExpiresAt = b.LeaseExpiresAt
		}
	}), nil
}

// mergeBy folds rows of the same key into the first of them, in the order
// of their keys.
func mergeBy[T any](rows []T, key func(T) string, fold func(*T, T)) []T {
	at := map[string]int{}
	var out []T
	for _, r := range rows {
		k := key(r)
		if i, ok := at[k]; ok {
			fold(&out[i], r)
			continue
		}
		at[k] = len(out)
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b T) int {
		switch ka, kb := key(a), key(b); {
		case ka < kb:
			return -1
		case ka > kb:
			return 1
		}
		return 0
	})
	return out
}

// What lives on one shard: leadership and periodic ticks, so that a fleet
// has one leader (its maintenance reaches every shard) and each periodic
// tick is inserted once.

func (e *exec) PeriodicTicks(ctx context.Context, names []string) (map[string]time.Time, error) {
	var out map[string]time.Time
	err := e.one(ctx, first, func(ctx context.Context, ex droverdriver.Executor) error {
		var err error
		out, err = ex.PeriodicTicks(ctx, names)
		return err
	})
	return out, err
}

func (e *exec) PeriodicTicksRecord(ctx context.Context, names []string, ticks []time.Time) error {
	return e.one(ctx, first, func(ctx context.Context, ex droverdriver.Executor) error {
		return ex.PeriodicTicksRecord(ctx, names, ticks)
	})
}

func (e *exec) LeaderElect(ctx context.Context, p droverdriver.LeaderParams) (bool, error) {
	var ok bool
	err := e.one(ctx, first, func(ctx context.Context, ex droverdriver.Executor) error {
		var err error
		ok, err = ex.LeaderElect(ctx, p)
		return err
	})
	return ok, err
}

func (e *exec) LeaderResign(ctx context.Context, name, id string) error {
	return e.one(ctx, first, func(ctx context.Context, ex droverdriver.Executor) error {
		return ex.LeaderResign(ctx, name, id)
	})
}

// Queue settings: every shard holds a copy, since each shard's claims
// read their own; a change is written to every shard.

func (e *exec) QueueSettingsGet(ctx context.Context, queue string) (*drovertype.QueueSettings, error) {
	if e.reach != nil || e.tx != nil {
		idx, err := e.all(ctx)
		if err != nil {
			return nil, err
		}
		keys, err := e.c.ready(ctx)
		if err != nil {
			return nil, err
		}
		i := queueShard(keys, queue)
		if !slices.Contains(idx, i) {
			i = idx[0]
		}
		var s *drovertype.QueueSettings
		err = e.one(ctx, i, func(ctx context.Context, ex droverdriver.Executor) error {
			var err error
			s, err = ex.QueueSettingsGet(ctx, queue)
			return err
		})
		return s, err
	}
	keys, err := e.c.ready(ctx)
	if err != nil {
		return nil, err
	}
	return e.c.settingsGet(ctx, keys, queue)
}

func (e *exec) QueueSettingsList(ctx context.Context) ([]*drovertype.QueueSettings, error) {
	idx, err := e.all(ctx)
	if err != nil {
		return nil, err
	}
	var lastErr error
	for _, i := range idx {
		var out []*drovertype.QueueSettings
		err := e.one(ctx, i, func(ctx context.Context, ex droverdriver.Executor) error {
			var err error
			out, err = ex.QueueSettingsList(ctx)
			return err
		})
		if err == nil {
			return out, nil
		}
		if e.user || !e.c.unreachable(e.c.shards[i], err) {
			return nil, err
		}
		lastErr = err
	}
	return nil, lastErr
}

func (e *exec) QueueKnown(ctx context.Context, queue string) (bool, error) {
	known, err := everywhere(ctx, e, true, func(ctx context.Context, ex droverdriver.Executor, _ int) ([]bool, error) {
		ok, err := ex.QueueKnown(ctx, queue)
		return []bool{ok}, err
	})
	return slices.Contains(known, true), err
}

// QueueSettingsSet writes the change to every shard, the queue's own shard
// first, and returns the row as that shard stored it. A shard that fails
// is named in the error; the others keep the change, and running the same
// change again completes it.
func (e *exec) QueueSettingsSet(ctx context.Context, p droverdriver.QueueSettingsSetParams) (*drovertype.QueueSettings, error) {
	keys, err := e.c.ready(ctx)
	if err != nil {
		return nil, err
	}
	defer e.c.forget(p.Queue)
	home := queueShard(keys, p.Queue)
	rows, err := everywhere(ctx, e, false, func(ctx context.Context, ex droverdriver.Executor, i int) ([]*drovertype.QueueSettings, error) {
		s, err := ex.QueueSettingsSet(ctx, p)
		if err != nil || i != home {
			return nil, err
		}
		return []*drovertype.QueueSettings{s}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("set queue %s on every shard: %w", p.Queue, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("set queue %s: its shard %d is not in this transaction", p.Queue, home)
	}
	return rows[0], nil
}

// Workflows and batches: a workflow's and a batch's jobs live together.

// placeFlow returns the one shard of p's jobs: that of its stored parents,
// of its keyed and unique jobs, or of its pinned queues, which must all
// agree; any shard in turn when nothing places it.
func (e *exec) placeFlow(ctx context.Context, p droverdriver.FlowInsertParams) (int, error) {
	keys, err := e.c.ready(ctx)
	if err != nil {
		return 0, err
	}
	shard, why := -1, ""
	set := func(t int, what string) error {
		if shard >= 0 && t != shard {
			return fmt.Errorf("droverfleet: a workflow's or batch's jobs live on one shard, but %s places them on shard %d and %s on shard %d (give them one key, or insert them apart)", what, t, why, shard)
		}
		shard, why = t, what
		return nil
	}
	for _, id := range engine.FlowParents(p) {
		if err := set(droverdriver.ShardOf(id), fmt.Sprintf("stored parent %d", id)); err != nil {
			return 0, err
		}
	}
	jobs := make([]*droverdriver.InsertParams, 0, len(p.Jobs)+1)
	for i := range p.Jobs {
		jobs = append(jobs, &p.Jobs[i].InsertParams)
	}
	if p.Batch && p.Callback != nil {
		jobs = append(jobs, p.Callback)
	}
	for n, j := range jobs {
		t, err := e.place(ctx, keys, j)
		if err != nil {
			return 0, err
		}
		if t >= 0 {
			if err := set(t, fmt.Sprintf("job %d (its key, unique key or queue)", n+1)); err != nil {
				return 0, err
			}
		}
	}
	if shard < 0 {
		return e.spread(ctx, nil)
	}
	if e.reach != nil {
		return shard, e.reachable(ctx, shard)
	}
	return shard, nil
}

func (e *exec) JobFlowParents(ctx context.Context, ids []int64) (map[int64]bool, map[int64]drovertype.JobState, error) {
	live, ended := map[int64]bool{}, map[int64]drovertype.JobState{}
	var mu sync.Mutex
	_, err := byIDs(ctx, e, ids, false, func(ctx context.Context, ex droverdriver.Executor, ids []int64) ([]struct{}, error) {
		l, en, err := ex.JobFlowParents(ctx, ids)
		mu.Lock()
		defer mu.Unlock()
		for id, v := range l {
			live[id] = v
		}
		for id, s := range en {
			ended[id] = s
		}
		return nil, err
	})
	return live, ended, err
}

func (e *exec) JobInsertFlow(ctx context.Context, p droverdriver.FlowInsertParams, plan droverdriver.FlowInsertPlan) (droverdriver.FlowInsertResult, error) {
	var res droverdriver.FlowInsertResult
	i, err := e.placeFlow(ctx, p)
	if err != nil {
		return res, err
	}
	err = e.one(ctx, i, func(ctx context.Context, ex droverdriver.Executor) error {
		var err error
		res, err = ex.JobInsertFlow(ctx, p, plan)
		return err
	})
	return res, err
}

func (e *exec) BatchGet(ctx context.Context, id int64) (*drovertype.Batch, error) {
	i := droverdriver.ShardOf(id)
	if id <= 0 || i >= len(e.c.shards) {
		return nil, droverdriver.ErrNotFound
	}
	var b *drovertype.Batch
	err := e.one(ctx, i, func(ctx context.Context, ex droverdriver.Executor) error {
		var err error
		b, err = ex.BatchGet(ctx, id)
		return err
	})
	return b, err
}

func (e *exec) BatchResults(ctx context.Context, p droverdriver.BatchResultsParams) ([]drovertype.JobResult, error) {
	i := droverdriver.ShardOf(p.BatchID)
	if p.BatchID <= 0 || i >= len(e.c.shards) {
		return nil, nil
	}
	var out []drovertype.JobResult
	err := e.one(ctx, i, func(ctx context.Context, ex droverdriver.Executor) error {
		var err error
		out, err = ex.BatchResults(ctx, p)
		return err
	})
	return out, err
}

// BatchList walks the shards from the last, newest first by ID as one
// store lists them.
func (e *exec) BatchList(ctx context.Context, p droverdriver.BatchListParams) ([]*drovertype.Batch, error) {
	hi := int64(1<<63 - 1)
	if p.BeforeID > 0 {
		hi = p.BeforeID
	}
	idx, err := e.ordered(ctx, true, 0, hi)
	if err != nil {
		return nil, err
	}
	var out []*drovertype.Batch
	for _, i := range idx {
		q := p
		q.Limit = p.Limit - len(out)
		err := e.one(ctx, i, func(ctx context.Context, ex droverdriver.Executor) error {
			rows, err := ex.BatchList(ctx, q)
			out = append(out, rows...)
			return err
		})
		if err != nil {
			return nil, err
		}
		if len(out) >= p.Limit {
			break
		}
	}
	return out, nil
}

func (e *exec) JobResults(ctx context.Context, ids []int64) ([]drovertype.JobResult, error) {
	return byIDs(ctx, e, ids, false, func(ctx context.Context, ex droverdriver.Executor, ids []int64) ([]drovertype.JobResult, error) {
		return ex.JobResults(ctx, ids)
	})
}

func (e *exec) JobParentResults(ctx context.Context, childID int64) ([]drovertype.JobResult, error) {
	return byIDs(ctx, e, []int64{childID}, false, func(ctx context.Context, ex droverdriver.Executor, ids []int64) ([]drovertype.JobResult, error) {
		return ex.JobParentResults(ctx, ids[0])
	})
}

func (e *exec) JobDeps(ctx context.Context, ids []int64) ([]droverdriver.Dep, error) {
	return byIDs(ctx, e, ids, false, func(ctx context.Context, ex droverdriver.Executor, ids []int64) ([]droverdriver.Dep, error) {
		return ex.JobDeps(ctx, ids)
	})
}

func (e *exec) JobsParentResults(ctx context.Context, childIDs []int64) ([]droverdriver.ParentResultRow, error) {
	return byIDs(ctx, e, childIDs, false, func(ctx context.Context, ex droverdriver.Executor, ids []int64) ([]droverdriver.ParentResultRow, error) {
		return ex.JobsParentResults(ctx, ids)
	})
}

// Finishing: by the IDs of the results, keys by their shards.

func (e *exec) JobFinishMany(ctx context.Context, p droverdriver.FinishParams) (droverdriver.FinishResult, error) {
	return e.finish(ctx, p, droverdriver.KeyParams{}, false)
}

func (e *exec) JobFinishKeyedMany(ctx context.Context, p droverdriver.FinishParams, keys droverdriver.KeyParams) (droverdriver.FinishResult, error) {
	return e.finish(ctx, p, keys, true)
}

// finish splits results (and keys) by shard and merges what the shards
// applied: All only when every shard applied all of its results. A shard
// that cannot be reached applies none of its results, which the engine
// then counts as turned away, while the other shards' are written: the
// jobs of a shard that is down run again once their leases expire there
// (as a dead worker's do), and the results of the shards that answer do
// not wait for it. When no shard answers, the call fails, and the
// completer waits the outage out.
func (e *exec) finish(ctx context.Context, p droverdriver.FinishParams, keys droverdriver.KeyParams, keyed bool) (droverdriver.FinishResult, error) {
	groups := map[int]*droverdriver.FinishParams{}
	for _, r := range p.Results {
		i := droverdriver.ShardOf(r.ID)
		if i >= len(e.c.shards) {
			continue
		}
		g := groups[i]
		if g == nil {
			g = &droverdriver.FinishParams{Refuse: p.Refuse}
			groups[i] = g
		}
		g.Results = append(g.Results, r)
	}
	var kg map[int]droverdriver.KeyParams
	if keyed {
		var err error
		if kg, err = e.splitKeys(ctx, keys); err != nil {
			return droverdriver.FinishResult{}, err
		}
	}
	idx := sortedKeys(groups)
	if len(idx) == 0 {
		return droverdriver.FinishResult{All: len(p.Results) == 0}, nil
	}
	res := make([]droverdriver.FinishResult, len(idx))
	err := e.run(ctx, idx, true, func(ctx context.Context, k int, ex droverdriver.Executor) error {
		var err error
		if keyed {
			res[k], err = ex.JobFinishKeyedMany(ctx, *groups[idx[k]], kg[idx[k]])
		} else {
			res[k], err = ex.JobFinishMany(ctx, *groups[idx[k]])
		}
		return err
	})
	if err != nil {
		return droverdriver.FinishResult{}, err
	}
	out := droverdriver.FinishResult{All: len(groups) > 0}
	n := 0
	for k, r := range res {
		out.All = out.All && r.All
		out.Applied = append(out.Applied, r.Applied...)
		n += len(groups[idx[k]].Results)
	}
	out.All = out.All && n == len(p.Results)
	ids := make([]int64, len(p.Results))
	for k := range p.Results {
		ids[k] = p.Results[k].ID
	}
	out.Applied = inputOrder(out.Applied, ids, finishedID)
	return out, nil
}

// splitKeys groups keys by the shard they live on, and Retried by the
// shards of its IDs.
func (e *exec) splitKeys(ctx context.Context, keys droverdriver.KeyParams) (map[int]droverdriver.KeyParams, error) {
	out := map[int]droverdriver.KeyParams{}
	if len(keys.Keys) == 0 && len(keys.Retried) == 0 {
		return out, nil
	}
	n, err := e.c.ready(ctx)
	if err != nil {
		return nil, err
	}
	for k := range keys.Keys {
		i := keyShard(n, keys.Queues[k], keys.Keys[k])
		g := out[i]
		g.Queues, g.Keys = append(g.Queues, keys.Queues[k]), append(g.Keys, keys.Keys[k])
		out[i] = g
	}
	for _, id := range keys.Retried {
		i := droverdriver.ShardOf(id)
		g := out[i]
		g.Retried = append(g.Retried, id)
		out[i] = g
	}
	return out, nil
}

// byKeys runs fn on each shard with its share of keys.
func (e *exec) byKeys(ctx context.Context, keys droverdriver.KeyParams, fn func(ctx context.Context, ex droverdriver.Executor, keys droverdriver.KeyParams) (int, error)) (int, error) {
	groups, err := e.splitKeys(ctx, keys)
	if err != nil {
		return 0, err
	}
	ns, err := gather(ctx, e, sortedKeys(groups), false, func(ctx context.Context, ex droverdriver.Executor, i int) ([]int, error) {
		n, err := fn(ctx, ex, groups[i])
		return []int{n}, err
	})
	return sum(ns), err
}

func (e *exec) JobFlowSettle(ctx context.Context, p droverdriver.SettleParams) (droverdriver.KeyParams, error) {
	parts, err := byIDs(ctx, e, p.IDs, false, func(ctx context.Context, ex droverdriver.Executor, ids []int64) ([]droverdriver.KeyParams, error) {
		k, err := ex.JobFlowSettle(ctx, droverdriver.SettleParams{IDs: ids, Failed: p.Failed})
		return []droverdriver.KeyParams{k}, err
	})
	return joinKeys(parts), err
}

func (e *exec) KeyLock(ctx context.Context, keys droverdriver.KeyParams) error {
	_, err := e.byKeys(ctx, keys, func(ctx context.Context, ex droverdriver.Executor, keys droverdriver.KeyParams) (int, error) {
		return 0, ex.KeyLock(ctx, keys)
	})
	return err
}

func (e *exec) KeyPromote(ctx context.Context, keys droverdriver.KeyParams) (int, error) {
	return e.byKeys(ctx, keys, func(ctx context.Context, ex droverdriver.Executor, keys droverdriver.KeyParams) (int, error) {
		return ex.KeyPromote(ctx, keys)
	})
}

func (e *exec) UniqueRelease(ctx context.Context, ids []int64) error {
	_, err := byIDs(ctx, e, ids, false, func(ctx context.Context, ex droverdriver.Executor, ids []int64) ([]struct{}, error) {
		return nil, ex.UniqueRelease(ctx, ids)
	})
	return err
}

// Routing: every shard keeps the worker registry, since each shard's
// claims and absent-worker policy read their own copy.

func (e *exec) WorkerSeen(ctx context.Context, workers []drovertype.WorkerRecord) error {
	_, err := everywhere(ctx, e, true, func(ctx context.Context, ex droverdriver.Executor, _ int) ([]struct{}, error) {
		return nil, ex.WorkerSeen(ctx, workers)
	})
	return err
}

func (e *exec) WorkerGone(ctx context.Context, name, owner string) error {
	_, err := everywhere(ctx, e, true, func(ctx context.Context, ex droverdriver.Executor, _ int) ([]struct{}, error) {
		return nil, ex.WorkerGone(ctx, name, owner)
	})
	return err
}

// WorkerList merges the shards' registries: a worker is listed once, as
// it was last seen on any shard.
func (e *exec) WorkerList(ctx context.Context) ([]drovertype.WorkerRecord, error) {
	parts, err := everywhere(ctx, e, true, func(ctx context.Context, ex droverdriver.Executor, _ int) ([]drovertype.WorkerRecord, error) {
		return ex.WorkerList(ctx)
	})
	if err != nil {
		return nil, err
	}
	return mergeBy(parts, func(w drovertype.WorkerRecord) string { return w.Name }, func(a *drovertype.WorkerRecord, b drovertype.WorkerRecord) {
		if b.LastSeen.After(a.LastSeen) {
			*a = b
		}
	}), nil
}

// WorkerPrune reports the most rows one shard deleted: every shard holds
// the same registry.
func (e *exec) WorkerPrune(ctx context.Context, before time.Time) (int, error) {
	ns, err := everywhere(ctx, e, true, func(ctx context.Context, ex droverdriver.Executor, _ int) ([]int, error) {
		n, err := ex.WorkerPrune(ctx, before)
		return []int{n}, err
	})
	return slices.Max(append(ns, 0)), err
}

// RouteWaiting merges the groups of the shards that wait with the same
// queue, kind and routing.
func (e *exec) RouteWaiting(ctx context.Context) ([]droverdriver.RouteGroup, error) {
	groups, err := everywhere(ctx, e, true, func(ctx context.Context, ex droverdriver.Executor, _ int) ([]droverdriver.RouteGroup, error) {
		return ex.RouteWaiting(ctx)
	})
	if err != nil {
		return nil, err
	}
	return mergeBy(groups, func(g droverdriver.RouteGroup) string {
		b, _ := json.Marshal(g.Routing) // a struct of strings and numbers cannot fail
		return g.Queue + "\x00" + g.Kind + "\x00" + string(b)
	}, foldGroup), nil
}

func (e *exec) JobRouteAbsent(ctx context.Context, p droverdriver.RouteAbsentParams) ([]droverdriver.FinishedRow, int, error) {
	var failed []droverdriver.FinishedRow
	fell := 0
	err := e.budget(ctx, p.Limit, func(ctx context.Context, ex droverdriver.Executor, left int) (int, error) {
		q := p
		q.Limit = left
		f, n, err := ex.JobRouteAbsent(ctx, q)
		failed, fell = append(failed, f...), fell+n
		return len(f) + n, err
	})
	return failed, fell, err
}

// Bulk tasks live on the first shard.

func (e *exec) BulkTaskInsert(ctx context.Context, t *droverdriver.BulkTaskRow, keep int) (int64, error) {
	var id int64
	err := e.one(ctx, first, func(ctx context.Context, ex droverdriver.Executor) error {
		var err error
		id, err = ex.BulkTaskInsert(ctx, t, keep)
		return err
	})
	return id, err
}

func (e *exec) BulkTaskUpdate(ctx context.Context, p droverdriver.BulkTaskUpdateParams) error {
	return e.one(ctx, droverdriver.ShardOf(p.ID), func(ctx context.Context, ex droverdriver.Executor) error {
		return ex.BulkTaskUpdate(ctx, p)
	})
}

func (e *exec) BulkTaskGet(ctx context.Context, id int64) (*droverdriver.BulkTaskRow, error) {
	i := droverdriver.ShardOf(id)
	if id <= 0 || i >= len(e.c.shards) {
		return nil, nil
	}
	var t *droverdriver.BulkTaskRow
	err := e.one(ctx, i, func(ctx context.Context, ex droverdriver.Executor) error {
		var err error
		t, err = ex.BulkTaskGet(ctx, id)
		return err
	})
	return t, err
}

// Refused implements droverdriver.RefusalReporter as the shards' store
// does.
func (e *exec) Refused(err error) bool {
	rr, ok := e.c.shards[0].d.Executor().(droverdriver.RefusalReporter)
	return ok && rr.Refused(err)
}

// Unavailable implements droverdriver.UnavailableReporter: a shard that
// could not be reached, or no shard answering, is an outage.
func (e *exec) Unavailable(err error) bool {
	return errors.Is(err, errAllDown) || e.c.unreachable(e.c.shards[0], err)
}
