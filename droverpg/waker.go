package droverpg

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PostgreSQL serialises the commits of all transactions that sent a
// notification: a notifying transaction takes a database-wide lock before
// it commits and keeps it until its commit record is flushed to disk. With
// NOTIFY inside every insert, single-job inserts therefore commit one at a
// time at the pace of the disk, however many clients insert (measured with
// pgbench, one-row inserts, 4 / 16 / 64 clients: 10.5K / 20.3K / 25.0K
// transactions/s without NOTIFY, 4.7K / 4.3K / 3.7K with it).
//
// A transaction that only notifies writes nothing and needs no flush, so
// it holds that lock for microseconds. The driver's own inserts therefore
// commit first and notify afterwards, from a waker: one statement at a
// time per driver, carrying every queue that asked since the last one,
// and at most one per wakeGap. Inserts into a caller's transaction still
// notify inside it, because only its commit makes the jobs visible.

// wakeGap is the least time between two notifications of one driver. An
// isolated insert is announced at once; a stream of inserts is announced
// once per gap, which bounds how often it wakes every listening process.
const wakeGap = time.Millisecond

// wakeTimeout bounds one notification statement. A lost notification costs
// latency, not jobs: producers also poll.
const wakeTimeout = 5 * time.Second

// waker sends the notifications of committed inserts.
type waker struct {
	pool    *pgxpool.Pool
	q       map[string]string // the driver's statements: Notify
	channel string

	mu      sync.Mutex
	pending wakeSet
	sending bool      // a sender goroutine runs
	closed  bool      // close was called: no sender starts anymore
	last    time.Time // start of the last send
	// sender is the sender goroutine, which close waits for so that it
	// never outlives the driver.
	sender sync.WaitGroup
}

func newWaker(pool *pgxpool.Pool, q map[string]string, channel string) *waker {
	return &waker{pool: pool, q: q, channel: channel, pending: wakeSet{}}
}

// wake announces new jobs. It never blocks: a sender goroutine, started
// when none runs and gone once nothing is pending, does the work. After
// close it drops the announcement; producers' polls find those jobs.
func (w *waker) wake(s wakeSet) {
	if len(s) == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.pending.merge(s)
	if !w.sending {
		w.sending = true
		w.sender.Add(1)
		go w.send()
	}
}

// close stops the waker once the announcements already asked for have
// gone out, so that inserts made before it still wake other processes at
// once. It waits for the send under way and at most one more (everything
// pending goes in one statement), each bounded by wakeTimeout.
func (w *waker) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.sender.Wait()
}

func (w *waker) send() {
	defer w.sender.Done()
	for {
		w.mu.Lock()
		if len(w.pending) == 0 {
			w.sending = false
			w.mu.Unlock()
			return
		}
		if wait := time.Until(w.last.Add(wakeGap)); wait > 0 {
			w.mu.Unlock()
			time.Sleep(wait)
			continue
		}
		payloads := w.pending.payloads()
		clear(w.pending)
		w.last = time.Now()
		w.mu.Unlock()

		ctx, cancel := context.WithTimeout(context.Background(), wakeTimeout)
		_, _ = notifyStmt.exec(ctx, w.pool, w.q, notifyParams{Channel: w.channel, Payloads: payloads}) // polling covers a failure
		cancel()
	}
}

// wakeSet collects the queues an operation makes jobs available in, with
// how many jobs: a notification about a few jobs wakes only a few of the
// listeners of a process (listener.go). allJobs marks a count not known,
// which wakes every listener.
type wakeSet map[string]int

const allJobs = -1

// add wakes every listener of queues.
func (s wakeSet) add(queues []string) {
	for _, q := range queues {
		s[q] = allJobs
	}
}

// count adds one job to queue.
func (s wakeSet) count(queue string) {
	if s[queue] != allJobs {
		s[queue]++
	}
}

func (s wakeSet) merge(o wakeSet) {
	for q, n := range o {
		if n == allJobs || s[q] == allJobs {
			s[q] = allJobs
		} else {
			s[q] += n
		}
	}
}

// payloads are the notifications to send, one per queue.
func (s wakeSet) payloads() []string {
	out := make([]string, 0, len(s))
	for q, n := range s {
		out = append(out, wakeMsg{queue: q, jobs: max(n, 0)}.String())
	}
	return out
}

// announce wakes queues once the implicit transaction of a batch that
// made jobs available in them has committed. Inside a Tx it leaves them to
// the Tx, and in a caller's transaction it notifies inside that
// transaction, delivered when it commits.
func (e *executor) announce(ctx context.Context, queues []string) error {
	if len(queues) == 0 {
		return nil
	}
	wake := wakeSet{}
	wake.add(queues)
	if e.waker != nil || e.pending != nil {
		e.wakeAfter(wake)
		return nil
	}
	return e.notifyIn(ctx, e.db, wake)
}

// wakeAfter hands wake to the Tx the executor runs in, or to the waker,
// which sends it at once: the statements that made the jobs available
// have committed. It does nothing in a caller's transaction, whose
// notifications its statements sent inside it.
func (e *executor) wakeAfter(wake wakeSet) {
	switch {
	case e.pending != nil:
		e.pending.merge(wake)
	case e.waker != nil:
		e.waker.wake(wake)
	}
}

// notifyIn sends wake's notifications through db, inside its transaction:
// they are delivered when it commits.
func (e *executor) notifyIn(ctx context.Context, db dbtx, wake wakeSet) error {
	if len(wake) == 0 {
		return nil
	}
	_, err := notifyStmt.exec(ctx, db, e.q, notifyParams{Channel: e.channel, Payloads: wake.payloads()})
	return err
}

// inTx runs fn in a transaction (a savepoint inside a Tx or a caller's
// transaction) and announces the queues fn adds to its wakeSet: after the
// commit through the waker, through the enclosing Tx's set, or, in a
// caller's transaction, by a NOTIFY inside that transaction, delivered
// when the caller commits.
func (e *executor) inTx(ctx context.Context, fn func(tx pgx.Tx, wake wakeSet) error) error {
	wake := wakeSet{}
	err := pgx.BeginFunc(ctx, e.db, func(tx pgx.Tx) error {
		if err := fn(tx, wake); err != nil {
			return err
		}
		if e.waker != nil || e.pending != nil {
			return nil
		}
		if err := e.notifyIn(ctx, tx, wake); err != nil {
			return fmt.Errorf("notify: %w", err)
		}
		return nil
	})
	if err == nil {
		e.wakeAfter(wake)
	}
	return err
}
