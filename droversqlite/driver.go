// Package droversqlite runs Drover on an embedded SQLite file through the
// cgo-free modernc.org/sqlite driver. It suits one machine: a single process,
// or a few processes sharing one file, with no server to run.
//
//	d, err := droversqlite.Open(ctx, "sqlite:///var/lib/app/jobs.db")
//	...
//	defer d.Close()
//
// Open gives Drover a database of its own; New runs on a *sql.DB the
// application already has, so that jobs can be inserted in the application's
// own transactions (UnwrapExecutor).
//
// SQLite allows one writer at a time per file, so the driver funnels every
// write through one connection and starts each write transaction with BEGIN
// IMMEDIATE: a transaction takes the file's write lock before it reads
// anything, so writers in other processes queue on busy_timeout instead of
// failing halfway with SQLITE_BUSY. That lock is also what makes a claim
// exclusive, where PostgreSQL needs FOR UPDATE SKIP LOCKED. Writes that
// queue for the connection while a transaction runs share the next one,
// each in a savepoint of its own (rounds.go). Reads go through
// a separate pool of query_only connections, which WAL mode lets run
// alongside the writer.
//
// SQLite cannot notify other connections of inserts. Drivers on the same
// file in one process share an in-process hub instead, so their listeners
// hear of inserts at once; other processes find new jobs by polling, which
// is why PollInterval is short.
package droversqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/sqlfile"
)

//go:embed queries.sql
var queriesSQL string

//go:embed migrations/*.sql
var migrationFiles embed.FS

// DefaultSchema is the table prefix Drover uses unless told otherwise.
const DefaultSchema = "drover"

// busyTimeout is how long a connection waits for another one's lock before
// giving up. Write transactions are short (a batch of a few hundred rows),
// so ten seconds only runs out when something is badly wrong.
const busyTimeout = 10 * time.Second

// readConns bounds the read-only pool. Reads (inspection, counts) are rare
// next to claims and completions, and two cores gain nothing from more.
const readConns = 4

// pollInterval is the fallback fetch interval. Inserts made in this process
// wake listeners at once through the in-process hub, but SQLite has no way to
// tell another process that rows arrived, so a worker process only sees jobs
// inserted elsewhere when it polls. An empty claim is one indexed lookup on a
// local file (tens of microseconds), so polling every 50 ms keeps that
// latency low at a negligible cost.
const pollInterval = 50 * time.Millisecond

// Option configures a Driver.
type Option func(*Driver)

// WithSchema names Drover's tables "<schema>_jobs" and so on instead of
// "drover_jobs", so several Drover installations can share one file.
func WithSchema(schema string) Option {
	return func(d *Driver) { d.schema = schema }
}

// Driver is the SQLite store. Create it with Open, or with New on a
// *sql.DB of your own.
type Driver struct {
	*shared              // what the driver and its executors have in common
	exec        executor // the statements, reached through Executor
	schema      string
	minFree     int64 // see WithMinFreeBytes
	migrations  []drovertype.Migration
	owned       []*sql.DB     // closed by Close: what Open opened
	checkpoints *checkpointer // Open's files: see checkpoint.go
}

var _ droverdriver.TxDriver[*sql.Tx] = (*Driver)(nil)

// Open opens (creating it if missing) the database at dsnOrPath for
// Drover's own use. dsnOrPath is a file path, a "sqlite://path" or
// "sqlite:path" URL, a "file:" URI, or ":memory:" ("sqlite::memory:") for a
// private in-memory database that lives until Close.
//
// The file is put in WAL mode with synchronous=NORMAL: commits then append to
// the log without waiting for the disk, and a crash can lose at most the last
// transactions, never corrupt the file. Writes use one connection, reads a
// small pool of query_only connections.
func Open(ctx context.Context, dsnOrPath string, opts ...Option) (*Driver, error) {
	target, err := parseTarget(dsnOrPath)
	if err != nil {
		return nil, err
	}
	d, err := newDriver(opts)
	if err != nil {
		return nil, err
	}

	if target.memory {
		// A shared-cache memory database is visible to every connection
		// that names it, and it lives as long as one of them is open. Reads
		// still go through the writer: connections sharing a cache lock
		// whole tables against each other instead of reading a snapshot,
		// which a second pool would only turn into waits and deadlock
		// errors.
		w, err := openPool(ctx, "file:"+target.name+"?mode=memory&cache=shared&_txlock=immediate", 1)
		if err != nil {
			return nil, err
		}
		d.owned = []*sql.DB{w}
		d.init(w, w, "memory:"+target.name)
		return d, nil
	}

	w, err := openPool(ctx, target.dsn(false), 1)
	if err != nil {
		return nil, err
	}
	r, err := openPool(ctx, target.dsn(true), readConns)
	if err != nil {
		w.Close()
		return nil, err
	}
	d.owned = []*sql.DB{w, r}
	key, err := hubKey(ctx, w)
	if err != nil {
		d.Close()
		return nil, err
	}
	d.init(w, r, key)
	d.gate = openGate(target.path)
	d.checkpoints = startCheckpointer(r)
	return d, nil
}

// New returns a driver on db, a *sql.DB of the "sqlite" driver that the
// caller opened, so that jobs can be inserted in the caller's transactions
// (see UnwrapExecutor). db stays the caller's: Close does not close it.
//
// Reads and writes both use db, which must be a file (or a shared-cache
// memory database) so that all its connections see one database. Write
// transactions begin the way db's DSN says. Every write transaction of the
// driver, migrations aside, starts with a statement that writes, which takes
// the lock before anything is read even in a DEFERRED transaction; still,
// a busy_timeout is needed for connections and processes to wait for each
// other, and _txlock=immediate is the safer setting for MigrateTx and for
// the application's own transactions. Prefer db.SetMaxOpenConns(1): SQLite
// runs one writer at a time anyway, and one connection turns lock waits into
// a queue in Go.
func New(db *sql.DB, opts ...Option) (*Driver, error) {
	d, err := newDriver(opts)
	if err != nil {
		return nil, err
	}
	key, err := hubKey(context.Background(), db)
	if err != nil {
		return nil, err
	}
	d.init(db, db, key)
	return d, nil
}

func newDriver(opts []Option) (*Driver, error) {
	d := &Driver{schema: DefaultSchema}
	for _, o := range opts {
		o(d)
	}
	if err := droverdriver.ValidateSchema(d.schema); err != nil {
		return nil, err
	}
	prefix := d.schema + "_"
	q, err := sqlfile.ParseQueries(queriesSQL, prefix)
	if err == nil {
		err = sqlfile.WithClaimAfter(q, "AND (priority, run_at, id) > (?8, ?9, ?10)")
	}
	if err == nil {
		err = sqlfile.WithClaimKinds(q, "AND kind IN (SELECT value FROM json_each(?8))",
			"AND (priority, run_at, id) > (?8, ?9, ?10) AND kind IN (SELECT value FROM json_each(?11))")
	}
	if err == nil {
		err = sqlfile.WithDescending(q, "JobList", "JobListDesc")
	}
	if err == nil {
		err = sqlfile.WithDescending(q, "JobIDNext", "JobIDPrev")
	}
	if err == nil {
		err = sqlfile.WithClaimExceptKinds(q, "AND kind NOT IN (SELECT value FROM json_each(?8))",
			"AND (priority, run_at, id) > (?8, ?9, ?10) AND kind NOT IN (SELECT value FROM json_each(?11))")
	}
	for _, name := range []string{"JobClaim", "JobClaimKinds", "JobClaimExcept"} {
		if err == nil {
			err = withClaimShared(q, name, prefix)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("droversqlite: %w", err)
	}
	insertQueries(q)
	d.migrations, err = sqlfile.LoadMigrations(migrationFiles, "migrations", prefix)
	if err != nil {
		return nil, err
	}
	d.shared = &shared{q: q, schema: d.schema}
	d.exec = executor{shared: d.shared}
	return d, nil
}

func (d *Driver) init(writer, reader *sql.DB, key string) {
	s := d.shared
	s.writer, s.reader = writer, reader
	s.hubKey = key + "\x00" + d.schema
}

// target is a parsed Open argument.
type target struct {
	memory bool
	name   string     // memory: the unique shared-cache name
	path   string     // file: the path SQLite opens
	query  url.Values // file: parameters the caller gave in a file: URI
}

func parseTarget(s string) (target, error) {
	// A sqlite: URL carries its parameters as a file: URI does; a bare
	// path is taken as it is.
	uri := false
	switch {
	case strings.HasPrefix(s, "sqlite://"):
		s, uri = strings.TrimPrefix(s, "sqlite://"), true
	case strings.HasPrefix(s, "sqlite:"):
		s, uri = strings.TrimPrefix(s, "sqlite:"), true
	}
	if s == "" {
		return target{}, errors.New("droversqlite: no database file given")
	}
	if s == ":memory:" || s == "file::memory:" {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return target{}, err
		}
		return target{memory: true, name: "drover-" + hex.EncodeToString(b[:])}, nil
	}
	t := target{path: s, query: url.Values{}}
	rest, file := strings.CutPrefix(s, "file:")
	if file || uri {
		p, raw, _ := strings.Cut(rest, "?")
		q, err := url.ParseQuery(raw)
		if err != nil {
			return target{}, fmt.Errorf("droversqlite: %q: %w", s, err)
		}
		if q.Get("mode") == "memory" {
			return target{}, fmt.Errorf("droversqlite: %q: use :memory: for an in-memory database", s)
		}
		t.path, t.query = p, q
	}
	abs, err := filepath.Abs(t.path)
	if err != nil {
		return target{}, fmt.Errorf("droversqlite: %q: %w", s, err)
	}
	t.path = abs
	return t, nil
}

// ownedSettings are the DSN keys through which modernc would set what dsn
// sets itself: a caller's value for them is dropped, since Drover's
// correctness across processes depends on WAL, the busy timeout and
// IMMEDIATE transactions.
var ownedSettings = []string{"_txlock", "_busy_timeout", "_timeout", "_journal_mode", "_journal",
	"_synchronous", "_sync", "_query_only"}

// ownedPragmas are the pragmas dsn sets; see ownedSettings.
var ownedPragmas = []string{"busy_timeout", "journal_mode", "synchronous", "query_only", "cache_size", "temp_store", "wal_autocheckpoint"}

// pageSize is the page size of a database file Open creates. 16 KiB pages
// measured about 5% faster than SQLite's default of 4 KiB on the claim and
// finish path: a batch of a few hundred rows dirties fewer pages, so there
// are fewer B-tree rebalances and fewer frames to append to the WAL. It only
// takes effect on a new file; an existing one keeps its page size.
const pageSize = 16384

// dsn is the modernc DSN of a writer or reader connection: the caller's
// parameters from a file: URI, less the settings Drover owns, plus Drover's.
func (t target) dsn(reader bool) string {
	q := url.Values{}
	for k, v := range t.query {
		if !slices.Contains(ownedSettings, k) && k != "_pragma" {
			q[k] = v
		}
	}
	callerPageSize := false
	for _, p := range t.query["_pragma"] {
		name, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(p)), "(")
		name, _, _ = strings.Cut(name, "=")
		name = strings.TrimSpace(name)
		callerPageSize = callerPageSize || name == "page_size"
		if !slices.Contains(ownedPragmas, name) {
			q.Add("_pragma", p)
		}
	}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(busyTimeout.Milliseconds(), 10)+")")
	// modernc applies the _journal_mode shorthand after every _pragma, so
	// the page size below is set while a new file is still empty: turning
	// on WAL writes the first page and fixes the size.
	q.Set("_journal_mode", "WAL")
	q.Add("_pragma", "synchronous(NORMAL)")
	if reader {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Set("_txlock", "immediate")
		if !callerPageSize {
			q.Add("_pragma", "page_size("+strconv.Itoa(pageSize)+")")
		}
		// A larger page cache keeps the claim index and the tail of the
		// hot table in memory between batches (negative: KiB), and the
		// temporary tables behind RETURNING and MATERIALIZED never spill
		// to a file.
		q.Add("_pragma", "cache_size(-65536)")
		q.Add("_pragma", "temp_store(MEMORY)")
		// Checkpoints run beside the writer (checkpoint.go); a commit
		// takes one only past the backstop.
		q.Add("_pragma", "wal_autocheckpoint("+strconv.Itoa(checkpointBackstop)+")")
	}
	return "file:" + (&url.URL{Path: t.path}).EscapedPath() + "?" + q.Encode()
}

// openPool opens a *sql.DB of at most conns connections and checks that it
// works. Connections never expire: each one holds SQLite's parsed schema and
// its prepared statements, which are worth keeping.
func openPool(ctx context.Context, dsn string, conns int) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("droversqlite: open: %w", err)
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	// Connect now, so that a bad path fails Open rather than the first
	// query, and so that the writer has switched the file to WAL (a
	// persistent setting) before any reader connects.
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("droversqlite: open: %w", err)
	}
	return db, nil
}

// hubKey names the database db is connected to, so that every Driver on one
// file in this process shares one notification hub. SQLite reports the
// absolute path of the main database; a memory database has none, and then
// only drivers on this very *sql.DB share notifications.
func hubKey(ctx context.Context, db *sql.DB) (string, error) {
	rows, err := db.QueryContext(ctx, "PRAGMA database_list")
	if err != nil {
		return "", fmt.Errorf("droversqlite: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var seq int
		var name, file string
		if err := rows.Scan(&seq, &name, &file); err != nil {
			return "", fmt.Errorf("droversqlite: %w", err)
		}
		if name == "main" && file != "" {
			return "file:" + file, nil
		}
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("droversqlite: %w", err)
	}
	return fmt.Sprintf("db:%p", db), nil
}

// Name implements droverdriver.Driver.
func (d *Driver) Name() string { return "sqlite" }

// Schema implements droverdriver.Driver.
func (d *Driver) Schema() string { return d.schema }

// DB returns the database the driver writes through, for example to begin
// a transaction whose *sql.Tx goes to UnwrapExecutor. For a driver from
// Open it has a single connection, the file's only writer: while a
// transaction on it is open, run Drover calls through UnwrapExecutor(tx),
// since any other write waits for the transaction to end.
func (d *Driver) DB() *sql.DB { return d.writer }

// Migrations implements droverdriver.Driver.
func (d *Driver) Migrations() []drovertype.Migration { return d.migrations }

// PollInterval implements droverdriver.Driver. Notifications cannot cross
// processes on SQLite, so polling is how a worker process learns of jobs
// another process inserted; see pollInterval.
func (d *Driver) PollInterval() time.Duration { return pollInterval }

// Close implements droverdriver.Driver. It closes the connections Open made; a
// *sql.DB given to New belongs to the caller and stays open.
func (d *Driver) Close() error {
	d.checkpoints.stop()
	d.checkpoints = nil
	d.mu.Lock()
	for _, s := range d.stmts {
		s.Close()
	}
	d.stmts, d.prepared = nil, false
	d.mu.Unlock()
	var errs []error
	for _, db := range d.owned {
		errs = append(errs, db.Close())
	}
	d.owned = nil
	errs = append(errs, d.gate.close())
	d.gate = nil
	return errors.Join(errs...)
}

// Executor implements droverdriver.Driver: statements run on the
// driver's writer and reader connections.
func (d *Driver) Executor() droverdriver.Executor { return &d.exec }

// UnwrapExecutor implements droverdriver.TxDriver: statements run in tx, which
// stays the caller's to commit or roll back. Listeners in this process are
// woken as soon as an insert runs rather than at commit, since database/sql
// offers no commit hook; a listener that wakes early finds nothing yet and
// the poll picks the jobs up after the commit.
func (d *Driver) UnwrapExecutor(tx *sql.Tx) droverdriver.Executor {
	return &executor{shared: d.shared, tx: tx}
}

// SchemaVersion implements droverdriver.Driver.
func (d *Driver) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := d.reader.QueryRowContext(ctx, d.q[schemaVersion.name]).Scan(&v)
	if isMissingTable(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

// MigrateTx implements droverdriver.Driver. The BEGIN IMMEDIATE transaction is the
// lock: it holds the file's write lock from its first statement, so a second
// migrator, in this process or another, waits and then sees the versions the
// first one recorded.
func (d *Driver) MigrateTx(ctx context.Context, fn func(context.Context, droverdriver.Migrator) error) error {
	tx, err := d.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, d.q[migrationsTable.name]); err != nil {
		return fmt.Errorf("create migrations table: %w", err)
	}
	if err := fn(ctx, &migrator{tx: tx, q: d.q}); err != nil {
		return err
	}
	return tx.Commit()
}

type migrator struct {
	tx *sql.Tx
	q  map[string]string
}

func (m *migrator) Version(ctx context.Context) (int, error) {
	var v int
	err := m.tx.QueryRowContext(ctx, m.q[schemaVersion.name]).Scan(&v)
	return v, err
}

func (m *migrator) Apply(ctx context.Context, mig drovertype.Migration) error {
	if _, err := m.tx.ExecContext(ctx, mig.SQL); err != nil {
		return fmt.Errorf("migration %03d_%s: %w", mig.Version, mig.Name, err)
	}
	rec := migrationRecordParams{mig.Version, mig.Name, time.Now().UnixMicro()}
	_, err := m.tx.ExecContext(ctx, m.q[migrationRecord.name], migrationRecord.args(&rec)...)
	return err
}

// NewListener implements droverdriver.Driver. The listener hears inserts made by
// any Driver on the same database in this process.
func (d *Driver) NewListener() droverdriver.Listener {
	return &listener{key: d.hubKey, e: &d.exec}
}

// isMissingTable reports whether err is SQLite's complaint about a table
// that does not exist, which means the schema was never migrated.
func isMissingTable(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no such table")
}

// shared is what a Driver and the executors it hands out have in common.
type shared struct {
	q      map[string]string
	schema string
	writer *sql.DB
	reader *sql.DB
	hubKey string
	// gate bounds how long the writer waits for other processes' writers
	// (writers.go); nil but for files Open opened.
	gate *writerGate
	// rounds combines the writes of the driver's goroutines into shared
	// transactions (rounds.go).
	rounds writeRounds

	mu       sync.Mutex
	prepared bool
	stmts    map[stmtKey]*sql.Stmt
}

// stmtKey names a prepared statement on one pool.
type stmtKey struct {
	db   *sql.DB
	name string
}

// readQueries run on the reader pool as well as, inside write transactions,
// on the writer.
var readQueries = []string{jobClaimable.name, queuesDue.name, jobGet.name, jobList.name, jobCountByState.name, queueStats.name, finishedStats.name, leaseOwners.name, queueSettingsGet.name, queueSettingsList.name, queueKnown.name,
	// Workflows and batches (flow.go).
	batchGet.name, batchResults.name, jobResults.name, jobParentResults.name, jobsParentResults.name,
	// Periodic jobs (periodic.go).
	periodicTicks.name, periodicList.name,
	// Routing (routing.go).
	workerList.name, routeWaiting.name, queueHead.name, kindsWaiting.name}

// unprepared are the queries that are not statements of their own (templates)
// or that must work before the schema exists (migrations).
var unprepared = map[string]bool{
	jobInsertHead.name: true, jobInsertRow.name: true, jobInsertRoutedHead.name: true, jobInsertRoutedRow.name: true,
	schemaVersion.name: true, migrationsTable.name: true, migrationRecord.name: true,
}

// ready prepares every statement once, the first time the schema is there.
// It has to happen before a write transaction begins: the writer pool has a
// single connection, which the transaction holds, so preparing on the pool
// from inside it would wait forever. Once prepared, a statement is compiled
// once per connection instead of once per call. A missing schema fails here,
// and the next call tries again, so migrating later just works.
func (s *shared) ready(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prepared {
		return nil
	}
	stmts := map[stmtKey]*sql.Stmt{}
	prepare := func(db *sql.DB, name string) error {
		k := stmtKey{db, name}
		if stmts[k] != nil {
			return nil
		}
		st, err := db.PrepareContext(ctx, s.q[name])
		if err != nil {
			return err
		}
		stmts[k] = st
		return nil
	}
	var err error
	for name := range s.q {
		if !unprepared[name] {
			err = errors.Join(err, prepare(s.writer, name))
		}
	}
	for _, name := range readQueries {
		err = errors.Join(err, prepare(s.reader, name))
	}
	if err != nil {
		for _, st := range stmts {
			st.Close()
		}
		return err
	}
	s.stmts, s.prepared = stmts, true
	return nil
}

// stmt returns the named statement prepared on db by ready.
func (s *shared) stmt(db *sql.DB, name string) (*sql.Stmt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stmts[stmtKey{db, name}]
	if st == nil {
		return nil, fmt.Errorf("droversqlite: statement %s is not prepared", name)
	}
	return st, nil
}
