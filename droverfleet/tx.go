package droverfleet

import (
	"context"
	"errors"
	"fmt"
	"sync"

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
type multiTx struct {
	c    *core
	ctx  context.Context
	subs []subTx
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

func newMultiTx(ctx context.Context, c *core) *multiTx {
	return &multiTx{c: c, ctx: ctx, subs: make([]subTx, len(c.shards))}
}

// hold runs open, a transaction that hands its callback a value, in a
// goroutine, and returns that value as soon as the callback has it, with
// end, which makes the callback return err (nil commits) and returns what
// the transaction returned. The contract's transactions are callbacks; a
// fleet holds one open per shard at once this way.
func hold[T any](open func(fn func(T) error) error) (T, func(error) error, error) {
	ready := make(chan T, 1)
	decide, done := make(chan error, 1), make(chan error, 1)
	go func() {
		done <- open(func(v T) error {
			ready <- v
			return <-decide
		})
	}()
	select {
	case v := <-ready:
		return v, func(err error) error { decide <- err; return <-done }, nil
	case err := <-done:
		var zero T
		return zero, nil, err
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
	ex, end, err := hold(func(fn func(droverdriver.Executor) error) error {
		return m.c.shards[i].d.Executor().Tx(m.ctx, func(_ context.Context, ex droverdriver.Executor) error { return fn(ex) })
	})
	if err != nil {
		return nil, err
	}
	s.ex, s.end = ex, end
	return ex, nil
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
	m := newMultiTx(ctx, e.c)
	err := fn(ctx, &exec{c: e.c, on: m.on, tx: m})
	return m.end(err)
}
