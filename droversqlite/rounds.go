package droversqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// Group commit. SQLite writes one transaction at a time, and a driver has
// one writer connection, so its writes (inserts, claims, finishes, from
// every goroutine and client of the process) used to queue for that
// connection and each begin, write and commit its own transaction: the
// commit, which appends every page the transaction changed to the WAL,
// and the turn at the connection cost more than a one-job insert or a
// claim of a few jobs, and more streams meant more of them per job.
//
// Instead the writes that queue while a transaction runs share the next
// one, a round: the first caller to find no round under way leads it. The
// leader takes the connection and begins the transaction (and so the
// file's write lock), then takes every write queued by then, runs each in
// a savepoint of its own, commits once, and hands each caller its own
// outcome; it then names the first write queued meanwhile the next leader.
// A write that fails is rolled back to its savepoint and fails alone; the
// others' work commits. Nothing is acknowledged before the commit that
// holds it: a failed commit fails every write of the round, as it failed
// the one write of a transaction before.
//
// A write's statements run with its context's values but without its
// cancellation: SQLite answers an interrupted write by rolling back the
// whole transaction, which would take the round's other writes with it.
// A write whose context ends before its turn does not run, and one whose
// context ends while it runs is rolled back to its savepoint, so that a
// cancelled caller still gets an error only when nothing of it was
// written, as with its own transaction.

// writeRounds is the queue of one driver's writes that wait for a round.
type writeRounds struct {
	mu    sync.Mutex
	queue []*writeCall
	// leading: a round is under way, or its leader has been named and
	// not yet started.
	leading bool
}

// writeCall is one write transaction's work, waiting for its round.
type writeCall struct {
	ctx context.Context
	fn  func(ctx context.Context, tx *sql.Tx) error
	// share, when not nil, lets the round run fn's work together with
	// the calls that share its key (shared.go); fn still runs it alone
	// when that fails.
	share sharedWrite
	// wake hands the caller the next round to lead (true) or its outcome
	// (false). Buffered, so that the leader never waits for a caller.
	wake chan bool
	// leads marks the named next leader; guarded by writeRounds.mu.
	leads bool
	// Set by the leader before it wakes the caller (or by the caller
	// that leads): done says the outcome is err (or a panic of fn's).
	done     bool
	err      error
	panicked any
}

// combine runs c in the next round and returns its outcome, leading rounds
// until c has one when no other caller leads.
func (e *executor) combine(c *writeCall) error {
	r := &e.rounds
	r.mu.Lock()
	r.queue = append(r.queue, c)
	lead := !r.leading
	r.leading = true
	r.mu.Unlock()
	if !lead {
		select {
		case lead = <-c.wake:
		case <-c.ctx.Done():
			if r.withdraw(c) {
				return c.ctx.Err()
			}
			lead = <-c.wake // taken into a round: its outcome is coming
		}
	}
	if lead {
		e.lead(c)
	}
	if c.panicked != nil {
		panic(c.panicked)
	}
	return c.err
}

// withdraw takes c out of the queue, reporting whether it was still there
// (not taken into a round). A withdrawn call named the next leader passes
// that on.
func (r *writeRounds) withdraw(c *writeCall) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := slices.Index(r.queue, c)
	if i < 0 {
		return false
	}
	r.queue = slices.Delete(r.queue, i, i+1)
	if c.leads {
		r.handOff()
	}
	return true
}

// handOff names the first queued call the next leader, or ends the
// leading when none is queued. r.mu is held.
func (r *writeRounds) handOff() {
	if len(r.queue) == 0 {
		r.leading = false
		return
	}
	next := r.queue[0]
	next.leads = true
	next.wake <- true
}

// lead runs rounds until c, queued, has its outcome, then hands the lead
// on. A round that could not begin fails c alone: the calls still queued
// try for themselves under the next leader.
func (e *executor) lead(c *writeCall) {
	r := &e.rounds
	for !c.done {
		if err := e.round(c); err != nil {
			r.mu.Lock()
			if i := slices.Index(r.queue, c); i >= 0 {
				r.queue = slices.Delete(r.queue, i, i+1)
			}
			r.mu.Unlock()
			c.done, c.err = true, err
		}
	}
	r.mu.Lock()
	r.handOff()
	r.mu.Unlock()
}

// round begins a write transaction, runs in it every call queued by then,
// each in a savepoint when there are several, and commits. Each call taken
// gets its outcome and is woken, but for the leader's own, which it reads
// from its call. Calls that a transaction lost before their turn go back
// to the head of the queue for the next round. It returns the error that
// kept the round from beginning; then no call was taken.
func (e *executor) round(own *writeCall) error {
	ctx := own.ctx
	// The connection first, then the file's lock: the gate measures how
	// long this process waits for other processes' writers, not for the
	// connection.
	conn, err := e.writer.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	tx, err := e.gate.begin(ctx, conn)
	if err != nil {
		return err
	}
	r := &e.rounds
	r.mu.Lock()
	calls := r.queue
	r.queue = nil
	r.mu.Unlock()

	sctx := context.WithoutCancel(ctx)
	retry := e.runCalls(sctx, tx, calls)
	if len(retry) > 0 || len(calls) == 1 && calls[0].err != nil {
		err = tx.Rollback()
	} else {
		err = tx.Commit()
	}
	for _, c := range calls {
		if !slices.Contains(retry, c) && c.err == nil {
			c.err = err // a failed commit fails every write of the round
		}
	}
	if len(retry) > 0 {
		r.mu.Lock()
		// A copy: withdraw edits the queue in place, and retry is a
		// part of calls, which is read below.
		r.queue = append(slices.Clone(retry), r.queue...)
		r.mu.Unlock()
	}
	for _, c := range calls {
		if c == own || slices.Contains(retry, c) {
			continue
		}
		c.wake <- false
	}
	return nil
}

// runCalls runs calls in tx and returns those that did not run because a
// failure before their turn rolled the whole transaction back: the calls
// before it then fail with it. Calls that share a key (shared.go) run as
// one, in the place of the first or the last of them (sharedWrite.early);
// when that fails, each runs alone there.
func (e *executor) runCalls(ctx context.Context, tx *sql.Tx, calls []*writeCall) (retry []*writeCall) {
	if len(calls) == 1 {
		c := calls[0]
		c.done = true
		c.err = c.run(tx)
		return nil
	}
	steps := shareSteps(calls)
	for k := 0; k < len(steps); k++ {
		step := steps[k]
		var err error
		if len(step) > 1 {
			err = e.savepoint(ctx, tx, func() error { return runShared(ctx, e, tx, step) })
			var lost txLostError
			if err != nil && !errors.As(err, &lost) {
				// Each runs alone, in the shared write's place.
				singles := make([][]*writeCall, len(step))
				for i, c := range step {
					singles[i] = []*writeCall{c}
				}
				steps = slices.Replace(steps, k, k+1, singles...)
				k--
				continue
			}
			for _, c := range step {
				c.done, c.err = true, err
			}
		} else {
			c := step[0]
			c.done = true
			err = e.savepoint(ctx, tx, func() error { return c.run(tx) })
			c.err = err
		}
		var lost txLostError
		if errors.As(err, &lost) {
			for _, before := range steps[:k] {
				for _, c := range before {
					if c.err == nil {
						c.err = fmt.Errorf("droversqlite: another write of the round failed: %w", lost)
					}
				}
			}
			for _, after := range steps[k+1:] {
				for _, c := range after {
					c.done = false
					retry = append(retry, c)
				}
			}
			return retry
		}
	}
	return nil
}

// shareSteps orders calls into the steps a round runs: each call alone,
// in its place, but for calls whose shares have the same key, which run
// together in the place of the first or the last of them. A call whose
// context has ended runs alone, to fail there.
func shareSteps(calls []*writeCall) [][]*writeCall {
	keys := make([]string, len(calls))
	groups := map[string][]*writeCall{}
	for i, c := range calls {
		if c.share == nil || c.ctx.Err() != nil {
			continue
		}
		if keys[i] = c.share.shareKey(); keys[i] != "" {
			groups[keys[i]] = append(groups[keys[i]], c)
		}
	}
	steps := make([][]*writeCall, 0, len(calls))
	for i, c := range calls {
		g := groups[keys[i]]
		switch {
		case keys[i] == "" || len(g) < 2:
			steps = append(steps, []*writeCall{c})
		case c.share.early() && g[0] == c, !c.share.early() && g[len(g)-1] == c:
			steps = append(steps, g)
		}
	}
	return steps
}

// runShared runs the shares of calls as one (sharedWrite.runShared),
// taking a panic of it as its failure: each call then runs alone, and
// panics, if it does, to its own caller.
func runShared(ctx context.Context, e *executor, tx *sql.Tx, calls []*writeCall) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("droversqlite: shared write panicked: %v", v)
		}
	}()
	parts := make([]sharedWrite, len(calls))
	for i, c := range calls {
		parts[i] = c.share
	}
	return parts[0].runShared(ctx, e, tx, parts)
}

// run runs c's work in tx (see the cancellation above), taking a panic of
// it as its outcome for its own caller to raise.
func (c *writeCall) run(tx *sql.Tx) (err error) {
	if err := c.ctx.Err(); err != nil {
		return err
	}
	defer func() {
		if v := recover(); v != nil {
			c.panicked = v
			err = fmt.Errorf("droversqlite: write panicked: %v", v)
		}
	}()
	if err := c.fn(context.WithoutCancel(c.ctx), tx); err != nil {
		return err
	}
	return c.ctx.Err()
}
