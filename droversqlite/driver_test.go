package droversqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/engine"
)

// setup returns a migrated driver on a fresh file.
func setup(t testing.TB, opts ...Option) *Driver {
	t.Helper()
	d, _ := setupFile(t, opts...)
	return d
}

// setupFile is setup that also returns the file, for tests that open it
// again.
func setupFile(t testing.TB, opts ...Option) (*Driver, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "drover.db")
	d := open(t, path, opts...)
	migrate(t, d)
	return d, path
}

func open(t testing.TB, path string, opts ...Option) *Driver {
	t.Helper()
	d, err := Open(context.Background(), path, opts...)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// migrate applies every migration the driver has not applied yet, the way
// the root package's migrate command does.
func migrate(t testing.TB, d *Driver) {
	t.Helper()
	if err := applyUpTo(context.Background(), d, math.MaxInt); err != nil {
		t.Fatalf("migrate: %v", err)
	}
}

// applyUpTo applies the migrations not applied yet up to version last.
func applyUpTo(ctx context.Context, d *Driver, last int) error {
	_, _, err := droverdriver.MigrateUpTo(ctx, d, last)
	return err
}

func job(queue string) droverdriver.InsertParams {
	return droverdriver.InsertParams{Queue: queue, Kind: "noop", Args: []byte(`{}`), MaxAttempts: 3}
}

func insert(t testing.TB, e droverdriver.Executor, jobs ...droverdriver.InsertParams) []int64 {
	t.Helper()
	ids, err := e.JobInsertMany(context.Background(), jobs)
	if err != nil {
		t.Fatalf("insert: %v", err)
	}
	return ids
}

func claim(t testing.TB, e droverdriver.Executor, queue string, n int, lease time.Duration) []*drovertype.JobRow {
	t.Helper()
	jobs, err := e.JobClaim(context.Background(), droverdriver.ClaimParams{Queue: queue, Max: n, Owner: "w1", Lease: lease})
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	return jobs
}

func get(t testing.TB, e droverdriver.Executor, id int64) *drovertype.JobRow {
	t.Helper()
	j, err := e.JobGet(context.Background(), id)
	if err != nil {
		t.Fatalf("get %d: %v", id, err)
	}
	return j
}

func ids(jobs []*drovertype.JobRow) []int64 {
	out := make([]int64, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

// TestInsertWakesListenersWithRoom checks who an insert wakes among the
// listeners of one process: in turn, from one further on each time, until
// those woken have room for the inserted jobs, and every listener when a
// finish promotes a key's next job (a count the driver does not keep).
func TestInsertWakesListenersWithRoom(t *testing.T) {
	keyed := func(key string) droverdriver.InsertParams {
		j := job("q")
		j.Key, j.KeyLimit = key, 1
		return j
	}
	tests := []struct {
		name  string
		rooms []int
		act   func(t *testing.T, d *Driver)
		want  []int
	}{
		{"one job at a time, in turn", []int{10, 10, 10}, func(t *testing.T, d *Driver) {
			for range 4 {
				insert(t, d.Executor(), job("q"))
			}
		}, []int{2, 1, 1}},
		{"more jobs than one listener has room for", []int{2, 2, 2}, func(t *testing.T, d *Driver) {
			insert(t, d.Executor(), job("q"), job("q"), job("q"))
		}, []int{1, 1, 0}},
		{"listeners without room are passed over", []int{0, 0, 5}, func(t *testing.T, d *Driver) {
			insert(t, d.Executor(), job("q"))
		}, []int{1, 1, 1}},
		{"jobs scheduled later wake nobody", []int{10, 10}, func(t *testing.T, d *Driver) {
			later := job("q")
			later.RunAt = time.Now().Add(time.Hour)
			insert(t, d.Executor(), later)
		}, []int{0, 0}},
		{"a promoted key wakes every listener", []int{10, 10}, func(t *testing.T, d *Driver) {
			insert(t, d.Executor(), keyed("a"), keyed("a")) // wakes one
			rows := claim(t, d.Executor(), "q", 1, time.Minute)
			if _, err := engine.Finish(context.Background(), d.Executor(), fenced(t, d, []droverdriver.Result{{ID: rows[0].ID, Attempt: rows[0].Attempt,
				Outcome: droverdriver.OutcomeCompleted, Key: rows[0].Key, Queue: "q"}})); err != nil {
				t.Fatal(err)
			}
		}, []int{2, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := setup(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var mu sync.Mutex
			woken := make([]int, len(tc.rooms))
			for i, room := range tc.rooms {
				connected := make(chan struct{})
				go d.NewListener().Listen(ctx, func() { close(connected) }, func(q string) int {
					mu.Lock()
					defer mu.Unlock()
					woken[i]++
					return room
				})
				<-connected
			}
			tc.act(t, d)
			// Delivery is synchronous: the calls above returned after it.
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(woken, tc.want) {
				t.Fatalf("wake-ups per listener %v, want %v", woken, tc.want)
			}
		})
	}
}

func TestInsertWakesListeners(t *testing.T) {
	d, path := setupFile(t)
	// A second driver on the same file shares the hub, as two clients in
	// one process would.
	other := open(t, path)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	connected := make(chan struct{})
	got := make(chan string, 10)
	go d.NewListener().Listen(ctx, func() { close(connected) }, func(q string) int { got <- q; return 1 })
	<-connected

	insert(t, other.Executor(), job("later"))
	insert(t, other.Executor(), droverdriver.InsertParams{Queue: "future", Kind: "k", Args: []byte(`{}`), MaxAttempts: 1, RunAt: time.Now().Add(time.Hour)})
	insert(t, other.Executor(), job("now"), job("now"))
	// The queues of one insert are woken in no defined order.
	seen := map[string]bool{}
	for len(seen) < 2 {
		select {
		case q := <-got:
			if q != "later" && q != "now" {
				t.Fatalf("notification %q, want later and now (future jobs wake nobody)", q)
			}
			seen[q] = true
		case <-time.After(5 * time.Second):
			t.Fatalf("notifications so far %v, want later and now", seen)
		}
	}
}

// TestMigrationsAcrossDrivers runs three drivers, each with a writer
// connection of its own as three processes would have, migrating one file
// at once: the file's write lock must make each migration apply once.
func TestMigrationsAcrossDrivers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "race.db")
	drivers := []*Driver{open(t, path), open(t, path), open(t, path)}
	errs := make(chan error, len(drivers))
	for _, d := range drivers {
		go func() { errs <- applyUpTo(ctx, d, math.MaxInt) }()
	}
	for range drivers {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent migrate: %v", err)
		}
	}
	var n int
	if err := open(t, path).reader.QueryRowContext(ctx, "SELECT count(*) FROM drover_schema_migrations").Scan(&n); err != nil || n != len(drivers[0].Migrations()) {
		t.Fatalf("recorded %d migrations, %v", n, err)
	}
}

// TestMigrationKeepsUniqueKeys stores an unfinished unique job the way
// migration 003 did (the key on the hot row), applies migration 004 and
// checks that the job still holds its key, is flagged so at claim, and
// gives the key up when it completes.
func TestMigrationKeepsUniqueKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := open(t, filepath.Join(t.TempDir(), "m.db"))
	if err := applyUpTo(ctx, d, 3); err != nil {
		t.Fatal(err)
	}
	const key = "noop\x1fk"
	now := micros(time.Now())
	if _, err := d.writer.ExecContext(ctx, `INSERT INTO drover_jobs (queue, kind, args, max_attempts, created_at, run_at, unique_key)
		VALUES ('default', 'noop', '{}', 3, ?, ?, ?)`, now, now, key); err != nil {
		t.Fatal(err)
	}
	migrate(t, d)
	dup := job("default")
	dup.UniqueKey = key
	if ids := insert(t, d.Executor(), dup); ids[0] != 0 {
		t.Fatalf("insert of a key held before the migration stored job %d", ids[0])
	}
	jobs := claim(t, d.Executor(), "default", 10, time.Minute)
	if len(jobs) != 1 || jobs[0].Flow&droverdriver.FlowUnique == 0 {
		t.Fatalf("claimed %+v, want the old unique job flagged unique", jobs)
	}
	if _, err := engine.Finish(ctx, d.Executor(), fenced(t, d, []droverdriver.Result{{ID: jobs[0].ID, Attempt: 1, Outcome: droverdriver.OutcomeCompleted, Flow: jobs[0].Flow}})); err != nil {
		t.Fatal(err)
	}
	if ids := insert(t, d.Executor(), dup); ids[0] == 0 {
		t.Fatal("key still held after the old unique job completed")
	}
}

// TestMigrationRebuildsStateChecks applies migration 007, which rebuilds
// both job tables, to a store holding a waiting, a running and a finished
// job: every row keeps every column, the running job is rescued (it holds
// no lease token, which migration 009 added, so no upgraded process can
// finish it), new IDs continue past the old ones and both tables still
// refuse a state that is not theirs. The rows are written in SQL, since
// the driver's statements are those of the latest schema.
func TestMigrationRebuildsStateChecks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := open(t, filepath.Join(t.TempDir(), "m.db"))
	if err := applyUpTo(ctx, d, 6); err != nil {
		t.Fatal(err)
	}
	now := micros(time.Now())
	for _, q := range []string{
		`INSERT INTO drover_jobs (id, queue, kind, args, max_attempts, created_at, run_at, state, attempt, attempted_at,
			lease_owner, lease_expires_at) VALUES (2, 'q', 'noop', '{}', 3, ?1, ?1, 'running', 1, ?1, 'w1', ?1 + 60000000)`,
		`INSERT INTO drover_jobs (id, queue, kind, args, max_attempts, created_at, run_at, tags, metadata, ordering_key,
			key_limit) VALUES (3, 'q', 'noop', '{}', 3, ?1, ?1, '["a"]', '{"m":1}', 'k', 1)`,
		`INSERT INTO drover_finished_jobs (id, state, queue, kind, priority, timeout_ms, tags, metadata, args, max_attempts, attempt, created_at, run_at,
			attempted_at, finalized_at) VALUES (1, 'completed', 'q', 'noop', 1, 0, '[]', '{}', '{}', 3, 1, ?1, ?1, ?1, ?1)`,
		`INSERT INTO sqlite_sequence (name, seq) VALUES ('drover_jobs', 3)`,
	} {
		if _, err := d.writer.ExecContext(ctx, q, now); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	ids := []int64{1, 2, 3}
	before := rawRows(t, d)

	// Up to 009: every column kept. 010 then gives the keyed job its
	// flow bit (FlowKeyed), checked below.
	if err := applyUpTo(ctx, d, 9); err != nil {
		t.Fatal(err)
	}
	after := rawRows(t, d)
	migrate(t, d)
	var flow int
	if err := d.writer.QueryRowContext(ctx, "SELECT flow FROM drover_jobs WHERE id = 3").Scan(&flow); err != nil || flow != droverdriver.FlowKeyed {
		t.Fatalf("keyed job's flow after migration 010: %d, %v; want %d", flow, err, droverdriver.FlowKeyed)
	}
	for table, rows := range before {
		for i, row := range rows {
			for col, v := range row {
				got, kept := after[table][i][col]
				if !kept {
					continue // dropped by a later migration (008: part)
				}
				if !reflect.DeepEqual(got, v) {
					t.Errorf("%s row %d column %s after the migration: %v, before %v", table, i, col, got, v)
				}
			}
		}
	}
	if n, err := engine.Rescue(ctx, d.Executor(), droverdriver.RescueParams{Now: time.Now().Add(time.Hour), Limit: 10}); err != nil || n != 1 {
		t.Fatalf("rescuing the job that ran across the migration: %d, %v", n, err)
	}
	if j := get(t, d.Executor(), ids[1]); j.State != drovertype.JobStateAvailable || j.ErrorCount != 1 {
		t.Fatalf("job that ran across the migration: %+v", j)
	}
	if next := insert(t, d.Executor(), job("q"))[0]; next <= ids[2] {
		t.Fatalf("new job got ID %d, not past %d", next, ids[2])
	}
	for _, bad := range []string{
		"UPDATE drover_jobs SET state = 'completed'",
		"UPDATE drover_finished_jobs SET state = 'running'",
	} {
		if _, err := d.writer.ExecContext(ctx, bad); err == nil || !strings.Contains(err.Error(), "CHECK") {
			t.Errorf("%s: %v, want a CHECK constraint error", bad, err)
		}
	}
}

// rawRows reads every row of both job tables by column name, in ID order.
func rawRows(t *testing.T, d *Driver) map[string][]map[string]any {
	t.Helper()
	out := map[string][]map[string]any{}
	for _, table := range []string{"drover_jobs", "drover_finished_jobs"} {
		rows, err := d.writer.QueryContext(context.Background(), "SELECT * FROM "+table+" ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			row := map[string]any{}
			for i, c := range cols {
				row[c] = vals[i]
			}
			out[table] = append(out[table], row)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return out
}

func TestWithSchema(t *testing.T) {
	t.Parallel()
	if _, err := Open(context.Background(), filepath.Join(t.TempDir(), "x.db"), WithSchema("Bad-Name")); err == nil {
		t.Fatal("invalid schema accepted")
	}
	path := filepath.Join(t.TempDir(), "shared.db")
	a, b := open(t, path, WithSchema("alpha")), open(t, path, WithSchema("beta"))
	migrate(t, a)
	migrate(t, b)
	insert(t, a.Executor(), job("q"))
	if jobs := claim(t, b.Executor(), "q", 10, time.Minute); len(jobs) != 0 {
		t.Fatalf("beta claimed alpha's jobs")
	}
	if jobs := claim(t, a.Executor(), "q", 10, time.Minute); len(jobs) != 1 {
		t.Fatalf("alpha claimed %d", len(jobs))
	}
	if a.Schema() != "alpha" || a.Name() != "sqlite" {
		t.Fatalf("schema %q name %q", a.Schema(), a.Name())
	}
}

func TestMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, err := Open(ctx, "sqlite::memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	other, err := Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	migrate(t, d)
	id := insert(t, d.Executor(), job("q"))[0]
	if j := get(t, d.Executor(), id); j.State != drovertype.JobStateAvailable {
		t.Fatalf("state %s", j.State)
	}
	// Every :memory: driver has a database of its own.
	if v, err := other.SchemaVersion(ctx); err != nil || v != 0 {
		t.Fatalf("second memory database is at version %d, %v", v, err)
	}
}

// TestNew checks a driver on the caller's *sql.DB: its jobs are those of
// the file, which a driver Open made sees too, and Close leaves the
// caller's database open. The suite covers what UnwrapExecutor does.
func TestNew(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tx.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d, err := New(db)
	if err != nil {
		t.Fatal(err)
	}
	migrate(t, d)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "CREATE TABLE app_users (name TEXT)"); err != nil {
		t.Fatal(err)
	}
	committed := insert(t, d.UnwrapExecutor(tx), job("q"), job("q"))
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if jobs := claim(t, open(t, path).Executor(), "q", 10, time.Minute); !slices.Equal(ids(jobs), committed) {
		t.Fatalf("claimed %v, want %v", ids(jobs), committed)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("caller's db closed: %v", err)
	}
}

// TestConcurrentClaimsAcrossDrivers runs two drivers on one file, each with
// its own writer connection as two processes would have, claiming from
// several goroutines: the write lock must hand every job out exactly once.
func TestConcurrentClaimsAcrossDrivers(t *testing.T) {
	ctx := context.Background()
	const total = 20000
	path := filepath.Join(t.TempDir(), "race.db")
	a := open(t, path)
	migrate(t, a)
	b := open(t, path)
	in := make([]droverdriver.InsertParams, total)
	for i := range in {
		in[i] = job("q")
	}
	insert(t, a.Executor(), in...)

	var mu sync.Mutex
	seen := make(map[int64]int, total)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		d := []*Driver{a, b}[i%2]
		wg.Go(func() {
			for {
				jobs, err := d.exec.JobClaim(ctx, droverdriver.ClaimParams{Queue: "q", Max: 37, Owner: fmt.Sprint("w", i), Lease: time.Minute})
				if err != nil {
					errs <- err
					return
				}
				if len(jobs) == 0 {
					return
				}
				res := make([]droverdriver.Result, len(jobs))
				for k, j := range jobs {
					res[k] = droverdriver.Result{ID: j.ID, Attempt: j.Attempt, LeaseToken: j.LeaseToken, Outcome: droverdriver.OutcomeCompleted}
				}
				if acc, err := engine.Finish(ctx, d.Executor(), res); err != nil || len(acc) != len(res) {
					errs <- fmt.Errorf("finish: accepted %d of %d: %v", len(acc), len(res), err)
					return
				}
				mu.Lock()
				for _, j := range jobs {
					seen[j.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(seen) != total {
		t.Fatalf("claimed %d distinct jobs, want %d", len(seen), total)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("job %d claimed %d times", id, n)
		}
	}
	counts, err := b.Executor().JobCountByState(ctx, "q")
	if err != nil || counts[drovertype.JobStateCompleted] != total || len(counts) != 1 {
		t.Fatalf("counts %v %v", counts, err)
	}
}

func TestParseTarget(t *testing.T) {
	t.Parallel()
	abs, _ := filepath.Abs("rel.db")
	tests := []struct {
		in, path string
		memory   bool
	}{
		{"sqlite::memory:", "", true},
		{":memory:", "", true},
		{"sqlite:///tmp/x.db", "/tmp/x.db", false},
		{"sqlite://rel.db", abs, false},
		{"/tmp/x.db", "/tmp/x.db", false},
		{"file:/tmp/x.db?_pragma=foreign_keys(1)", "/tmp/x.db", false},
		{"sqlite:///tmp/x.db?_pragma=foreign_keys(1)", "/tmp/x.db", false},
		{"sqlite:rel.db?cache=private", abs, false},
	}
	for _, tt := range tests {
		got, err := parseTarget(tt.in)
		if err != nil || got.memory != tt.memory || (!tt.memory && got.path != tt.path) {
			t.Errorf("%s: %+v %v", tt.in, got, err)
		}
		if _, q, ok := strings.Cut(tt.in, "?"); ok {
			if want, _ := url.ParseQuery(q); !maps.EqualFunc(got.query, want, slices.Equal) {
				t.Errorf("%s: parameters %v, want %v", tt.in, got.query, want)
			}
		}
	}
	if _, err := parseTarget("sqlite:"); err == nil {
		t.Error("empty target accepted")
	}

	// A caller's settings survive unless Drover owns them.
	got, err := parseTarget("file:/tmp/x.db?_pragma=foreign_keys(1)&_pragma=busy_timeout(5)&_journal_mode=DELETE&_txlock=deferred&cache=private")
	if err != nil {
		t.Fatal(err)
	}
	dsn, err := url.ParseQuery(strings.SplitN(got.dsn(false), "?", 2)[1])
	if err != nil {
		t.Fatal(err)
	}
	pragmas := dsn["_pragma"]
	if !slices.Contains(pragmas, "foreign_keys(1)") || slices.Contains(pragmas, "busy_timeout(5)") ||
		!slices.Contains(pragmas, "busy_timeout(10000)") || dsn.Get("_journal_mode") != "WAL" ||
		dsn.Get("_txlock") != "immediate" || dsn.Get("cache") != "private" {
		t.Errorf("writer DSN %v", dsn)
	}
	reader, _ := url.ParseQuery(strings.SplitN(got.dsn(true), "?", 2)[1])
	if !slices.Contains(reader["_pragma"], "query_only(1)") || reader.Get("_txlock") != "" {
		t.Errorf("reader DSN %v", reader)
	}
}

func TestFileSettings(t *testing.T) {
	t.Parallel()
	d := setup(t)
	for pragma, want := range map[string]string{
		"journal_mode": "wal", "page_size": "16384", "synchronous": "1", "busy_timeout": "10000",
	} {
		var got string
		if err := d.writer.QueryRow("PRAGMA " + pragma).Scan(&got); err != nil || got != want {
			t.Errorf("writer %s = %q, %v; want %s", pragma, got, err, want)
		}
	}
	var ro string
	if err := d.reader.QueryRow("PRAGMA query_only").Scan(&ro); err != nil || ro != "1" {
		t.Errorf("reader query_only = %q, %v", ro, err)
	}
	if _, err := d.reader.Exec("DELETE FROM drover_jobs"); err == nil {
		t.Error("reader connection wrote")
	}
}

func TestListener(t *testing.T) {
	d := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	connects := 0
	connected := make(chan struct{})
	done := make(chan error)
	go func() {
		done <- d.NewListener().Listen(ctx, func() { connects++; close(connected) }, func(string) int { return 1 })
	}()
	<-connected
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || connects != 1 {
			t.Fatalf("Listen returned %v after %d connects", err, connects)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Listen did not return when its context ended")
	}
	if d.PollInterval() <= 0 || d.PollInterval() > time.Second {
		t.Errorf("poll interval %v", d.PollInterval())
	}
}

// TestIdleClaimTakesNoWriteLock holds the file's write lock from another
// connection, as a writer in another process would, and claims from an
// idle queue and from one with a job only scheduled later: both answer at
// once with nothing, read on a reader, instead of queueing for the lock.
// A queue with a due job still claims it once the lock is free.
func TestIdleClaimTakesNoWriteLock(t *testing.T) {
	ctx := context.Background()
	d, path := setupFile(t)
	later := job("later")
	later.RunAt = time.Now().Add(time.Hour)
	insert(t, d.Executor(), later, job("due"))
	other := open(t, path)
	lock, err := other.writer.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the write lock
	if err != nil {
		t.Fatal(err)
	}
	for _, queue := range []string{"idle", "later"} {
		short, cancel := context.WithTimeout(ctx, 2*time.Second)
		jobs, err := d.exec.JobClaim(short, droverdriver.ClaimParams{Queue: queue, Max: 10, Owner: "w1", Lease: time.Minute})
		cancel()
		if err != nil || len(jobs) != 0 {
			t.Fatalf("claim of queue %s while another connection writes: %v, %v; want nothing at once", queue, jobs, err)
		}
	}
	type result struct {
		jobs []*drovertype.JobRow
		err  error
	}
	claimed := make(chan result, 1)
	go func() {
		jobs, err := d.exec.JobClaim(ctx, droverdriver.ClaimParams{Queue: "due", Max: 10, Owner: "w1", Lease: time.Minute})
		claimed <- result{jobs, err}
	}()
	if err := lock.Rollback(); err != nil {
		t.Fatal(err)
	}
	if r := <-claimed; r.err != nil || len(r.jobs) != 1 || r.jobs[0].Queue != "due" {
		t.Fatalf("claimed %+v, %v from queue due, want its one job", r.jobs, r.err)
	}
}

// TestListenerHearsTopicsOfOtherProcesses: a message stored by a writer
// this process's hub does not hear of (another process's, here raw SQL on
// a connection of its own) wakes the listener's topic consumer.
func TestListenerHearsTopicsOfOtherProcesses(t *testing.T) {
	d, path := setupFile(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	woken := make(chan string, 100)
	done := make(chan error, 1)
	go func() {
		done <- d.NewListener().Listen(ctx, func() {}, func(name string) int {
			select {
			case woken <- name:
			default:
			}
			return 0
		})
	}()
	other := open(t, path)
	// Publish until the listener wakes: its first read of the last ID
	// may come after the first message, which it then takes as seen.
	deadline := time.After(10 * time.Second)
	for n := 0; ; n++ {
		if _, err := other.writer.ExecContext(ctx, `INSERT INTO drover_topic_messages (topic, lane, payload, created_at)
			VALUES ('elsewhere', 0, x'00', 0)`); err != nil {
			t.Fatal(err)
		}
		select {
		case name := <-woken:
			if name != droverdriver.TopicWakePrefix {
				t.Fatalf("woken for %q, want the topics' wake-up %q", name, droverdriver.TopicWakePrefix)
			}
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("Listen returned %v", err)
			}
			return
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("no wake-up after %d messages stored by another writer", n+1)
		}
	}
}
