package droversqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Writers of one file take turns through SQLite's lock and busy handler:
// a writer that finds the file locked sleeps 1, 2, 5, 10, 15, 20, 25 … up
// to 100 ms between looks, and gets in only if its look falls between two
// of the holder's transactions. A process that writes back to back (a
// publisher, a burn-down) leaves gaps of microseconds, so another process's
// writer could wait seconds, past every lease, and with a topic's short
// retention lose messages it never got to acknowledge. A queue that hands
// the lock over at every transaction was measured to halve the throughput
// of several busy processes (docs/benchmarks.md: they form a convoy).
//
// The writer gate keeps SQLite's turns and bounds the wait instead: a
// writer kept out for writerStarved gives up its sleeping wait, announces
// itself with a shared lock on a file beside the database, and looks for
// the write lock every millisecond or two; every writer of the file,
// before it begins its next transaction, waits until no announced writer
// is left (an exclusive lock on that file, taken without waiting and
// released at once). The announced writer gets in once the transaction
// under way ends, and withdraws. A writer that gets in within
// writerStarved, nearly all of them, costs two system calls (the probe for
// an announcement), a timer and a context.

// writerStarved is how long a writer waits for the file's write lock in
// SQLite's busy handler before the other writers stand aside for it.
const writerStarved = 15 * time.Millisecond

// An announced writer looks for the lock after starvedLook, doubling up to
// starvedLookMax: the writers standing aside let it in within one
// transaction, and a lock held longer (a large transaction, a paused
// process) is not worth a look every millisecond.
const (
	starvedLook    = 2 * time.Millisecond
	starvedLookMax = 16 * time.Millisecond
)

// Standing aside is bounded: an announced writer that has not got in
// within standAsideMax is taken to be stuck (its process paused, or a
// transaction of the application's holding the lock), and the writer that
// stood aside ignores announcements for ignoreStuck: a paused process
// costs the others a tenth of their time at most, where an unbounded wait
// would stop every writer of the file. A writer standing aside looks every
// standAsidePoll: another writer's probe holds the lock file for
// microseconds, an announcement for milliseconds.
const (
	standAsideMax  = 100 * time.Millisecond
	ignoreStuck    = time.Second
	standAsidePoll = 250 * time.Microsecond
)

// errWriterBusy is returned when the file stayed locked for busyTimeout.
var errWriterBusy = fmt.Errorf("droversqlite: the database file stayed locked by other connections for %s (SQLITE_BUSY)", busyTimeout)

// errGaveUp is a look for the lock that ran out of time.
var errGaveUp = errors.New("gave up waiting for the write lock")

// writerGate is the lock file of a database file, used by one driver's
// writer connection; nil where there is none (memory databases, a
// caller's *sql.DB, systems without flock).
type writerGate struct {
	lock gateFile
	// ignoreUntil is when announcements count again after one outlived
	// standAsideMax. Only the holder of the writer connection reads or
	// writes it.
	ignoreUntil time.Time
}

// begin starts a write transaction on conn, the driver's writer
// connection, standing aside for announced writers first and announcing
// itself if it waits for the file's lock longer than writerStarved. The
// transaction's context ends with end, which the caller calls once the
// transaction is over.
func (g *writerGate) begin(ctx context.Context, conn *sql.Conn) (tx *sql.Tx, end func(), err error) {
	if g == nil {
		tx, err := conn.BeginTx(ctx, nil)
		return tx, func() {}, err
	}
	if err := g.standAside(ctx); err != nil {
		return nil, nil, err
	}
	announced := false
	defer func() {
		if announced {
			g.lock.withdraw()
		}
	}()
	start, wait := time.Now(), writerStarved
	for {
		tx, end, err := tryBegin(ctx, conn, wait)
		switch {
		case err == nil || !errors.Is(err, errGaveUp):
			return tx, end, err
		case ctx.Err() != nil:
			return nil, nil, ctx.Err()
		case time.Since(start) >= busyTimeout:
			return nil, nil, errWriterBusy
		case !announced:
			announced = g.lock.announce() == nil
			wait = starvedLook
		default:
			wait = min(2*wait, starvedLookMax)
		}
	}
}

// tryBegin begins a transaction on conn, giving up (errGaveUp) when the
// wait for the write lock takes longer than wait: the busy handler ends
// its wait once the call's context is done. A BEGIN that took effect just
// as the wait ran out is rolled back (database/sql does it for a done
// context) and reported as given up.
func tryBegin(ctx context.Context, conn *sql.Conn, wait time.Duration) (*sql.Tx, func(), error) {
	txCtx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	returned, gaveUp := false, false
	t := time.AfterFunc(wait, func() {
		mu.Lock()
		defer mu.Unlock()
		if !returned {
			gaveUp = true
			cancel()
		}
	})
	tx, err := conn.BeginTx(txCtx, nil)
	t.Stop()
	mu.Lock()
	returned = true
	late := gaveUp
	mu.Unlock()
	switch {
	case late:
		if err == nil {
			_ = tx.Rollback()
		}
		cancel()
		return nil, nil, errGaveUp
	case err != nil:
		cancel()
		return nil, nil, err
	}
	return tx, cancel, nil
}

// standAside waits while a writer is announced, up to standAsideMax.
func (g *writerGate) standAside(ctx context.Context) error {
	if g.lock.free() || time.Now().Before(g.ignoreUntil) {
		return nil
	}
	deadline := time.Now().Add(standAsideMax)
	poll := time.NewTicker(standAsidePoll)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case now := <-poll.C:
			if g.lock.free() {
				return nil
			}
			if now.After(deadline) {
				g.ignoreUntil = now.Add(ignoreStuck)
				return nil
			}
		}
	}
}
