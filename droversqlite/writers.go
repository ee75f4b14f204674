package droversqlite

import (
	"context"
	"database/sql"
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
// writer kept out for writerStarved announces itself with a shared lock on
// a file beside the database, and every writer of the file, before it
// begins its next transaction, waits until no announced writer is left
// (an exclusive lock on that file, taken without waiting and released at
// once). The announced writer's next look finds the file free, it gets in
// and withdraws. A writer that gets in within writerStarved, nearly all of
// them, costs two system calls (the probe for an announcement) and a
// timer. The wait itself stays SQLite's: cutting it short to look more
// often would also cut short a wait that is only the machine being busy,
// and throw away a BEGIN that had got in.

// writerStarved is how long a writer waits for the file's write lock
// before the other writers stand aside. SQLite's busy handler looks again
// 18 ms after the first try (1 + 2 + 5 + 10): announced at 15 ms, a
// writer usually gets in at that look, the holder's transaction
// permitting, or else at the next, 33 ms after the first try.
const writerStarved = 15 * time.Millisecond

// Standing aside is bounded: an announced writer that has not got in
// within standAsideMax (its next looks come 33, 53 and 78 ms after its
// first try) is taken to be stuck (its process paused, or a transaction of
// the application's holding the lock), and the writer that stood aside
// ignores announcements for ignoreStuck: a paused process costs the others
// a tenth of their time at most, where an unbounded wait would stop every
// writer of the file. A writer standing aside looks every standAsidePoll:
// another writer's probe holds the lock file for microseconds, an
// announcement for milliseconds.
const (
	standAsideMax  = 100 * time.Millisecond
	ignoreStuck    = time.Second
	standAsidePoll = 250 * time.Microsecond
)

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
// transaction outlives ctx's cancellation, which would roll back a round
// of other callers' writes (rounds.go); the wait for the lock is bounded
// by the busy timeout.
func (g *writerGate) begin(ctx context.Context, conn *sql.Conn) (*sql.Tx, error) {
	if g == nil {
		return conn.BeginTx(context.WithoutCancel(ctx), nil)
	}
	if err := g.standAside(ctx); err != nil {
		return nil, err
	}
	a := &announcement{lock: g.lock}
	t := time.AfterFunc(writerStarved, a.announce)
	tx, err := conn.BeginTx(context.WithoutCancel(ctx), nil)
	t.Stop()
	a.withdraw()
	return tx, err
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

// announcement is one writer's announcement, made by its timer while the
// writer waits and withdrawn once it got the lock or gave up, whichever of
// the two runs first.
type announcement struct {
	lock gateFile
	mu   sync.Mutex
	done bool // withdrawn: the timer's announce comes too late
	held bool
}

func (a *announcement) announce() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.done {
		a.held = a.lock.announce() == nil
	}
}

func (a *announcement) withdraw() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.done = true
	if a.held {
		a.lock.withdraw()
	}
}
