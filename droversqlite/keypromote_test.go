package droversqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/engine"
)

// TestKeyPromoteSkipsFreeKeys finishes a batch of keyed jobs of distinct
// keys through the engine, as the keys sweep of issue 36 does with 50,000
// keys of one job each, and counts the KeyPromote statements SQLite runs
// there and in the inserts, which promote their keys too: none while no
// job waits behind any of the keys, and one, for its key only, once a job
// does, which that finish then starts. KeyPromote is a statement of
// several searches and a write, 35 µs a job in the sweep's profile; a key
// with nothing blocked costs one index search of KeyWaiting, which EXPLAIN
// QUERY PLAN must show reading jobs_key_idx by queue, key and state, never
// scanning a table.
func TestKeyPromoteSkipsFreeKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, promotes := openCounting(t, "KeyPromote")
	migrate(t, d)
	ex := d.Executor()

	const keys = 50
	in := make([]droverdriver.InsertParams, keys)
	for i := range in {
		in[i] = job("q")
		in[i].Key, in[i].KeyLimit = fmt.Sprintf("k%d", i), 1
	}
	insert(t, ex, in...)
	if n := promotes.Swap(0); n != 0 {
		t.Errorf("inserting %d keyed jobs of free keys ran KeyPromote %d times, want 0", keys, n)
	}
	finish := func(want int) {
		t.Helper()
		rows := claim(t, ex, "q", keys, time.Minute)
		if len(rows) != want {
			t.Fatalf("claimed %d jobs, want %d", len(rows), want)
		}
		res := make([]droverdriver.Result, len(rows))
		for i, r := range rows {
			res[i] = droverdriver.Result{ID: r.ID, Attempt: r.Attempt, LeaseToken: r.LeaseToken, Outcome: droverdriver.OutcomeCompleted,
				Flow: r.Flow, Key: r.Key, Queue: r.Queue}
		}
		acc, err := engine.Finish(ctx, ex, res)
		if err != nil {
			t.Fatal(err)
		}
		if len(acc) != len(res) {
			t.Fatalf("finished %d of %d", len(acc), len(res))
		}
	}

	finish(keys)
	if n := promotes.Swap(0); n != 0 {
		t.Errorf("finishing %d keyed jobs with nothing blocked behind their keys ran KeyPromote %d times, want 0", keys, n)
	}

	// The next round: every key gets a job again, and k7 a second one,
	// which waits behind the first until that finishes. The insert
	// promotes k7 (whose first job leaves it no room), and only k7.
	in = append(in, in[7])
	ids := insert(t, ex, in...)
	waiting := ids[keys]
	if j := get(t, ex, waiting); j.State != drovertype.JobStateBlocked {
		t.Fatalf("second job of k7 is %s, want blocked", j.State)
	}
	if n := promotes.Swap(0); n != 1 {
		t.Errorf("inserting %d keyed jobs, one behind another of its key, ran KeyPromote %d times, want 1", len(in), n)
	}
	finish(keys)
	if n := promotes.Swap(0); n != 1 {
		t.Errorf("finishing %d keyed jobs, one with a job blocked behind its key, ran KeyPromote %d times, want 1", keys, n)
	}
	if j := get(t, ex, waiting); j.State != drovertype.JobStateAvailable {
		t.Fatalf("the finish left the second job of k7 %s, want it promoted to available", j.State)
	}
	finish(1)

	pairs := `[["q","k1"],["q","k2"]]`
	plan := explain(t, d, keyWaiting.name, keyWaiting.args(&keyWaitingParams{pairs, "[]"})...)
	t.Logf("\n%s", plan)
	if !strings.Contains(plan, "drover_jobs USING COVERING INDEX drover_jobs_key_idx (queue=? AND ordering_key=? AND state=?)") {
		t.Errorf("KeyWaiting does not search jobs_key_idx by queue, key and state:\n%s", plan)
	}
	for _, line := range strings.Split(plan, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "SCAN drover_") {
			t.Errorf("KeyWaiting scans a table: %s", line)
		}
	}
}

// openCounting opens a driver on a new file through a database/sql driver
// that counts the executions of the named statement of queries.sql.
func openCounting(t *testing.T, name string) (*Driver, *atomic.Int64) {
	t.Helper()
	plain, err := sql.Open("sqlite", "")
	if err != nil {
		t.Fatal(err)
	}
	base := plain.Driver()
	plain.Close()
	q, err := newDriver(nil)
	if err != nil {
		t.Fatal(err)
	}
	n := new(atomic.Int64)
	path := filepath.Join(t.TempDir(), "count.db")
	db := sql.OpenDB(&countingConnector{
		dsn: "file:" + path + "?_txlock=immediate&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)",
		d:   base, text: q.q[name], n: n,
	})
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	d, err := New(db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, n
}

// countingConnector opens connections of d that count in n the
// executions of the statements whose SQL is text.
type countingConnector struct {
	dsn  string
	d    driver.Driver
	text string
	n    *atomic.Int64
}

func (c *countingConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := c.d.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: conn, c: c}, nil
}

func (c *countingConnector) Driver() driver.Driver { return c.d }

type countingConn struct {
	driver.Conn
	c *countingConnector
}

func (c *countingConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *countingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	st, err := c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil || query != c.c.text {
		return st, err
	}
	return &countingStmt{Stmt: st, n: c.c.n}, nil
}

func (c *countingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

// ExecContext runs unprepared statements, counting the one of interest.
func (c *countingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if query == c.c.text {
		c.c.n.Add(1)
	}
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
}

type countingStmt struct {
	driver.Stmt
	n *atomic.Int64
}

func (s *countingStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	s.n.Add(1)
	return s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (s *countingStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	s.n.Add(1)
	return s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
}
