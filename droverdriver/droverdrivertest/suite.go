// Package droverdrivertest is the test suite every Drover driver passes.
// It checks the contract of droverdriver's Driver, TxDriver and Executor
// through those interfaces only, so that a driver for another store runs
// the same tests as droverpg and droversqlite:
//
//	func TestSuite(t *testing.T) {
//		droverdrivertest.Exercise(t, droverdrivertest.Factory[*sql.Tx]{
//			Open:     func(t *testing.T) droverdriver.TxDriver[*sql.Tx] { … a driver on an empty store … },
//			Begin:    func(ctx context.Context, d droverdriver.TxDriver[*sql.Tx]) (*sql.Tx, error) { … },
//			Commit:   func(ctx context.Context, tx *sql.Tx) error { return tx.Commit() },
//			Rollback: func(ctx context.Context, tx *sql.Tx) error { return tx.Rollback() },
//		})
//	}
//
// Subtests are named after the method they test ("JobClaim/order"), so
// that -run selects one method's tests. Each opens a store of its own and
// runs in parallel with the others. Where the contract takes the time as
// a parameter the tests pass it, and they never sleep: a lease expires by
// rescuing at a later Now, a leader's by electing with a negative TTL.
//
// What the suite asserts is what the stored rows say afterwards (read back
// with JobGet and the other reads), never how a driver gets there, so a
// driver may use any statements its store offers.
package droverdrivertest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/engine"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// Factory opens the stores the suite runs on, and begins and ends the
// caller's transactions that TxDriver.UnwrapExecutor runs in.
type Factory[TTx any] struct {
	// Open returns a driver on an empty store of its own (a schema, a
	// file), with no migration applied: the suite migrates it, or tests
	// what happens before. The factory closes the driver when t ends.
	Open func(t *testing.T) droverdriver.TxDriver[TTx]
	// Begin starts a transaction on d's store, as an application would
	// to insert jobs together with its own rows.
	Begin func(ctx context.Context, d droverdriver.TxDriver[TTx]) (TTx, error)
	// Commit and Rollback end a transaction from Begin. The suite also
	// rolls back every transaction when its test ends, ended or not, and
	// ignores that call's error.
	Commit   func(ctx context.Context, tx TTx) error
	Rollback func(ctx context.Context, tx TTx) error
}

// Exercise runs the whole suite against the drivers f opens.
func Exercise[TTx any](t *testing.T, f Factory[TTx]) {
	t.Helper()
	setup := func(t *testing.T) droverdriver.Driver {
		t.Helper()
		return migrate(t, f.Open(t))
	}
	fresh := func(t *testing.T) droverdriver.Driver {
		t.Helper()
		return f.Open(t)
	}
	testInsert(t, setup)
	testClaim(t, setup)
	testPoll(t, setup)
	testFinish(t, setup)
	testLease(t, setup)
	testAdmin(t, setup)
	testRead(t, setup)
	testSearch(t, setup)
	testMaintenance(t, setup)
	testFlow(t, setup)
	testTopics(t, setup)
	testTopicTail(t, setup)
	testRouting(t, setup)
	testHistory(t, setup)
	testMigrations(t, fresh)
	testTx(t, f)
}

// opener returns a driver on a store of its own; setup's stores are
// migrated to the latest version, fresh ones are empty.
type opener func(t *testing.T) droverdriver.Driver

// migrate applies every migration of d and returns it.
func migrate[D droverdriver.Driver](t *testing.T, d D) D {
	t.Helper()
	if _, _, err := droverdriver.MigrateUpTo(context.Background(), d, droverdriver.LatestVersion(d)); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return d
}

// job is a plain job of queue with attempts to spare.
func job(queue string) droverdriver.InsertParams {
	return droverdriver.InsertParams{Queue: queue, Kind: "noop", Args: []byte(`{}`), MaxAttempts: 3}
}

// with returns p changed by f, for table rows that differ from job in one
// field.
func with(p droverdriver.InsertParams, f func(*droverdriver.InsertParams)) droverdriver.InsertParams {
	f(&p)
	return p
}

// keyed is a job of queue under key, one of the key's jobs at a time.
func keyed(queue, key string) droverdriver.InsertParams {
	return with(job(queue), func(p *droverdriver.InsertParams) { p.Key, p.KeyLimit = key, 1 })
}

// unique is a job of queue holding unique key, freeing it when it ends.
func unique(queue, key string) droverdriver.InsertParams {
	return with(job(queue), func(p *droverdriver.InsertParams) { p.UniqueKey = key })
}

func insert(t *testing.T, e droverdriver.Executor, jobs ...droverdriver.InsertParams) []int64 {
	t.Helper()
	ids, err := e.JobInsertMany(context.Background(), jobs)
	if err != nil {
		t.Fatalf("insert: %v", err)
	}
	if len(ids) != len(jobs) {
		t.Fatalf("insert of %d jobs returned %d IDs", len(jobs), len(ids))
	}
	return ids
}

// named is p as engine.Claim hands it to a driver: its excepted kinds
// taken out of its kinds, and the claim statement named
// (engine.ClaimStatement; strict: the claimer's settings put the queue in
// strict order).
func named(p droverdriver.ClaimParams, strict bool) droverdriver.ClaimParams {
	return engine.ClaimStatement(p, strict)
}

// claimAs claims up to n jobs of queue for owner under a lease of lease.
func claimAs(t *testing.T, e droverdriver.Executor, owner, queue string, n int, lease time.Duration) []*drovertype.JobRow {
	t.Helper()
	rows, err := e.JobClaim(context.Background(), droverdriver.ClaimParams{Queue: queue, Max: n, Owner: owner, Lease: lease})
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	return rows
}

// claim claims up to n jobs of queue for owner "w1" under a minute's lease.
func claim(t *testing.T, e droverdriver.Executor, queue string, n int) []*drovertype.JobRow {
	t.Helper()
	return claimAs(t, e, "w1", queue, n, time.Minute)
}

// claimOne claims the next job of queue and fails unless it is id.
func claimOne(t *testing.T, e droverdriver.Executor, queue string, id int64) *drovertype.JobRow {
	t.Helper()
	rows := claim(t, e, queue, 1)
	if len(rows) != 1 || rows[0].ID != id {
		t.Fatalf("claimed %v of %s, want job %d", ids(rows), queue, id)
	}
	return rows[0]
}

func get(t *testing.T, e droverdriver.Executor, id int64) *drovertype.JobRow {
	t.Helper()
	j, err := e.JobGet(context.Background(), id)
	if err != nil {
		t.Fatalf("get %d: %v", id, err)
	}
	return j
}

// wantState fails unless each job of want is stored in its state.
func wantState(t *testing.T, e droverdriver.Executor, want map[int64]drovertype.JobState) {
	t.Helper()
	for _, id := range slices.Sorted(maps.Keys(want)) {
		if got := get(t, e, id).State; got != want[id] {
			t.Errorf("job %d is %s, want %s", id, got, want[id])
		}
	}
}

func ids(rows []*drovertype.JobRow) []int64 {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return out
}

// attemptError is one entry of a job's errors column, as the tests write
// them (and as the rescue writes its own).
type attemptError struct {
	Attempt int    `json:"attempt"`
	At      string `json:"at"`
	Error   string `json:"error"`
}

// errorJSON encodes the error of attempt, for Result.Error.
func errorJSON(attempt int, msg string) []byte {
	b, _ := json.Marshal(attemptError{Attempt: attempt, At: "2024-01-01T00:00:00Z", Error: msg})
	return b
}

// attemptErrors returns a job's errors, failing the test when the store
// recorded some its column could not decode (a job's ErrorCount counts
// every error recorded, so a row that counts some must show at least one).
func attemptErrors(t *testing.T, j *drovertype.JobRow) []drovertype.AttemptError {
	t.Helper()
	if len(j.Errors) == 0 && j.ErrorCount > 0 {
		t.Fatalf("job %d counts %d errors and shows none: its errors column did not decode", j.ID, j.ErrorCount)
	}
	return j.Errors
}

// sameTime reports whether stored is t as a store keeps it: to the
// microsecond, rounded (PostgreSQL) or truncated (SQLite).
func sameTime(stored, t time.Time) bool {
	d := stored.Sub(t)
	return d > -time.Microsecond && d < time.Microsecond
}

// listen starts a listener on d and returns the queues it hears of, or
// skips the test when d cannot push notifications. The listener stops
// when the test ends.
func listen(t *testing.T, d droverdriver.Driver) <-chan string {
	t.Helper()
	l := d.NewListener()
	if l == nil {
		t.Skipf("%s pushes no notifications", d.Name())
	}
	ctx, cancel := context.WithCancel(context.Background())
	heard := make(chan string, 100)
	connected := make(chan struct{})
	var once sync.Once
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = l.Listen(ctx, func() { once.Do(func() { close(connected) }) }, func(q string) int {
			select {
			case heard <- q:
			default:
			}
			return 1
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-connected:
	case <-done:
		t.Fatal("listener returned before it connected")
	}
	return heard
}

// heardOf waits until the listener heard of every one of queues, in any
// order.
func heardOf(t *testing.T, heard <-chan string, queues ...string) {
	t.Helper()
	missing := map[string]bool{}
	for _, q := range queues {
		missing[q] = true
	}
	waitfor.Cond(t, fmt.Sprintf("notifications for queues %v", queues), func() bool {
		for {
			select {
			case q := <-heard:
				delete(missing, q)
			default:
				return len(missing) == 0
			}
		}
	})
}
