package droverfleet

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/droverhq/drover/droverdriver"
)

// multiTx is a transaction of the fleet's: it opens a transaction on each
// shard its statements reach, when the first one does, and commits them
// all once its function returns, or rolls them all back. Each shard's
// part is atomic; the parts commit one after the other, so a failure
// between two commits leaves the first committed. The engine's
// transactions touch several shards only for jobs that are independent
// of each other (a flush of results from several shards, a rescue pass):
// a workflow's, a batch's and a key's jobs share a shard, so what one
// job's end asks for is always done in its shard's own transaction.
//
// A transaction that holds one shard's connection or rows and waits for
// another's can deadlock with one doing the opposite: neither pool, nor
// any PostgreSQL, sees the cycle (two shards on one pool make it a
// cycle on that pool alone). So a transaction waits as long as it takes
// only while it holds a single shard: a further shard that does not
// open within openPatience, or a statement that has not answered within
// waitPatience while another shard's transaction is open, ends the
// whole transaction with errShardBusy. Tx then runs it again from the
// start, holding nothing, as the fleet's one patient transaction
// (core.patient), which waits for everything: every other transaction
// in a cycle with it gives up, so it ends.
type multiTx struct {
	c       *core
	ctx     context.Context
	patient bool         // waits for every shard as long as it takes
	open    atomic.Int32 // shards whose transaction is open
	subs    []subTx
}

// subTx is one shard's transaction, held open until end says how it
// ends.
type subTx struct {
	mu  sync.Mutex
	ex  droverdriver.Executor
	end func(error) error
}

// errRollback ends a shard's transaction without committing it.
var errRollback = errors.New("droverfleet: rolled back")

// errShardBusy ends a fleet's transaction that could not open a further
// shard's transaction, or run a statement, in time while it held
// another shard's.
var errShardBusy = errors.New("droverfleet: a shard's transaction did not open in time")

// openPatience is how long a fleet's transaction that holds a shard
// waits for another shard's transaction to open (a pool's connection
// and BEGIN) before it lets go of everything and starts again.
const openPatience = 250 * time.Millisecond

// waitPatience is how long a statement of a fleet's transaction that
// holds more than one shard may take before the transaction lets go of
// everything and starts again. A statement that waits for a row another
// transaction holds waits on that transaction's commit; one that takes
// longer than this for its own work is merely run again, patiently.
const waitPatience = time.Second

// runMultiTx runs fn in a new transaction of the fleet's and ends it as
// fn's error says.
func runMultiTx(ctx context.Context, c *core, patient bool, fn func(ctx context.Context, tx droverdriver.Executor) error) error {
	m := &multiTx{c: c, ctx: ctx, patient: patient, subs: make([]subTx, len(c.shards))}
	return m.end(fn(ctx, &exec{c: c, on: m.on, tx: m}))
}

// hold runs open, a transaction that hands its callback a value, in a
// goroutine, and returns that value as soon as the callback has it, with
// end, which makes the callback return err (nil commits) and returns what
// the transaction returned. The contract's transactions are callbacks; a
// fleet holds one open per shard at once this way. With patience above
// zero, a transaction that has not handed its value over by then is
// abandoned (its context cancelled, or rolled back if it opened
// meanwhile) and hold returns errShardBusy.
func hold[T any](ctx context.Context, patience time.Duration, open func(ctx context.Context, fn func(T) error) error) (T, func(error) error, error) {
	ctx, cancel := context.WithCancel(ctx)
	ready := make(chan T, 1)
	decide, done := make(chan error, 1), make(chan error, 1)
	go func() {
		done <- open(ctx, func(v T) error {
			ready <- v
			return <-decide
		})
	}()
	var timeout <-chan time.Time
	if patience > 0 {
		t := time.NewTimer(patience)
		defer t.Stop()
		timeout = t.C
	}
	var zero T
	select {
	case v := <-ready:
		return v, func(err error) error { decide <- err; err = <-done; cancel(); return err }, nil
	case err := <-done:
		cancel()
		return zero, nil, err
	case <-timeout:
		cancel()
		select {
		case <-ready:
			decide <- errRollback
			<-done
		case <-done:
		}
		return zero, nil, errShardBusy
	}
}

// on returns shard i's transaction, opening it on first use.
func (m *multiTx) on(_ context.Context, i int) (droverdriver.Executor, error) {
	s := &m.subs[i]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ex != nil {
		return s.ex, nil
	}
	var patience time.Duration
	if !m.patient && m.open.Load() > 0 {
		patience = openPatience
	}
	ex, end, err := hold(m.ctx, patience, func(ctx context.Context, fn func(droverdriver.Executor) error) error {
		return m.c.shards[i].d.Executor().Tx(ctx, func(_ context.Context, ex droverdriver.Executor) error { return fn(ex) })
	})
	if err != nil {
		return nil, err
	}
	s.ex, s.end = ex, end
	m.open.Add(1)
	return ex, nil
}

// bound returns the context for a statement on one of the transaction's
// open shards, and a function that ends it and maps the statement's
// error: a statement that outlives waitPatience while the
// transaction holds another shard too fails with errShardBusy.
func (m *multiTx) bound(ctx context.Context) (context.Context, func(error) error) {
	if m.patient || m.open.Load() < 2 {
		return ctx, func(err error) error { return err }
	}
	bctx, cancel := context.WithTimeoutCause(ctx, waitPatience, errShardBusy)
	return bctx, func(err error) error {
		busy := err != nil && ctx.Err() == nil && errors.Is(context.Cause(bctx), errShardBusy)
		cancel()
		if busy {
			// Not wrapping err: the shard is slow or its rows held, not
			// down, and its health must not say otherwise.
			return fmt.Errorf("%w (the statement: %v)", errShardBusy, err)
		}
		return err
	}
}

// end commits every shard's transaction when err is nil, in shard order,
// and rolls them back otherwise (and those after a commit that failed).
func (m *multiTx) end(err error) error {
	for i := range m.subs {
		s := &m.subs[i]
		if s.ex == nil {
			continue
		}
		if err != nil {
			_ = s.end(errRollback)
			continue
		}
		if cerr := s.end(nil); cerr != nil {
			err = fmt.Errorf("commit on shard %d: %w", i, cerr)
		}
	}
	return err
}

// Tx runs fn in a transaction of the fleet's. Inside one, fn runs in it
// (a nested call makes no savepoint across shards: an error fn returns
// rolls back the whole transaction once it reaches the outer fn's
// caller). In a caller's transaction on one shard it is that shard's
// savepoint.
func (e *exec) Tx(ctx context.Context, fn func(ctx context.Context, tx droverdriver.Executor) error) error {
	switch {
	case e.tx != nil:
		return fn(ctx, e)
	case e.user:
		idx, err := e.all(ctx)
		if err != nil {
			return err
		}
		if len(idx) != 1 {
			return fn(ctx, e)
		}
		ex, err := e.on(ctx, idx[0])
		if err != nil {
			return err
		}
		return ex.Tx(ctx, func(ctx context.Context, sub droverdriver.Executor) error {
			return fn(ctx, &exec{c: e.c, user: true, reach: e.reach, on: func(context.Context, int) (droverdriver.Executor, error) { return sub, nil }})
		})
	}
	err := runMultiTx(ctx, e.c, false, fn)
	if !errors.Is(err, errShardBusy) || ctx.Err() != nil {
		return err
	}
	// Everything is rolled back. Start again after a random pause, so
	// that transactions that each held what another waited for do not
	// meet again at once, then as the one patient transaction.
	select {
	case <-time.After(time.Millisecond + rand.N(10*time.Millisecond)):
	case <-ctx.Done():
		return err
	}
	e.c.patient.Lock()
	defer e.c.patient.Unlock()
	return runMultiTx(ctx, e.c, true, fn)
}
