// Package storeurl turns a database URL into a Drover store and a client
// on it, for the CLI and the bench: "postgres://…" opens PostgreSQL,
// "sqlite:///path" (or "sqlite::memory:") the embedded store, and an empty
// URL the default file ./drover.db. Errors name the flag and the problem
// and never print a password.
package storeurl

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverfleet"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/drovertype"
)

// DefaultPath is the embedded store used when no URL is given.
const DefaultPath = "drover.db"

// Kinds of store.
const (
	Postgres = "postgres"
	SQLite   = "sqlite"
)

// Target is a parsed database URL.
type Target struct {
	Kind string
	// URL is the URL to connect with (PostgreSQL) or the path or memory
	// name (SQLite).
	URL string
	// Default is set when no URL was given and the default file is used.
	Default bool
	// Params are a SQLite URL's parameters (after "?"), passed to the
	// driver as a file: URI's are (droversqlite.Open).
	Params string
	// Shards, when it holds more than one URL, are the PostgreSQL
	// databases of a fleet (droverfleet), in shard order; URL is the
	// first.
	Shards []string
}

// ParseAll validates the database URLs of a store: one URL is a store as
// Parse says; several are the shards of a fleet, each a PostgreSQL URL
// (docs/scaling.md, "Past one PostgreSQL").
func ParseAll(raws []string, flag string) (Target, error) {
	if len(raws) <= 1 {
		raw := ""
		if len(raws) == 1 {
			raw = raws[0]
		}
		return Parse(raw, flag)
	}
	if len(raws) > droverdriver.MaxShards {
		return Target{}, fmt.Errorf("%s: %d databases, a fleet has at most %d", flag, len(raws), droverdriver.MaxShards)
	}
	seen := map[string]int{}
	for i, raw := range raws {
		t, err := Parse(raw, fmt.Sprintf("%s (shard %d)", flag, i))
		if err != nil {
			return Target{}, err
		}
		if t.Kind != Postgres {
			return Target{}, fmt.Errorf("%s (shard %d): a fleet is made of PostgreSQL databases, not %s", flag, i, Redact(raw))
		}
		if j, ok := seen[t.URL]; ok {
			return Target{}, fmt.Errorf("%s: shards %d and %d are the same URL %s", flag, j, i, Redact(raw))
		}
		seen[t.URL] = i
	}
	return Target{Kind: Postgres, URL: strings.TrimSpace(raws[0]), Shards: raws}, nil
}

// Redacted returns the URL with any password replaced, for logs and
// errors.
func (t Target) Redacted() string { return Redact(t.URL) }

// Parse validates a database URL. flag names where it came from in error
// messages ("--database-url").
func Parse(raw, flag string) (Target, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return Target{Kind: SQLite, URL: DefaultPath, Default: true}, nil
	}
	if rest, ok := strings.CutPrefix(raw, "sqlite:"); ok {
		switch {
		case rest == ":memory:":
			return Target{Kind: SQLite, URL: ":memory:"}, nil
		case strings.HasPrefix(rest, "//"):
			path, params, _ := strings.Cut(strings.TrimPrefix(rest, "//"), "?")
			if path == "" || path == "/" {
				return Target{}, fmt.Errorf("%s: sqlite URL has no file path (use sqlite:///path/to/file.db)", flag)
			}
			return Target{Kind: SQLite, URL: path, Params: params}, nil
		case rest != "" && !strings.HasPrefix(rest, "?"):
			path, params, _ := strings.Cut(rest, "?")
			return Target{Kind: SQLite, URL: path, Params: params}, nil
		}
		return Target{}, fmt.Errorf("%s: sqlite URL has no file path (use sqlite:///path/to/file.db)", flag)
	}
	if port, ok := rawPort(raw); ok {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return Target{}, fmt.Errorf("%s: invalid port %q", flag, port)
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		// url's messages quote parts of the input; make sure no password
		// survives in them.
		msg := err.Error()
		if u2, _ := url.Parse(raw); u2 == nil {
			msg = RedactIn(msg, raw)
		}
		return Target{}, fmt.Errorf("%s: %s", flag, msg)
	}
	switch u.Scheme {
	case "postgres", "postgresql":
	case "":
		return Target{}, fmt.Errorf("%s: %q has no scheme (use postgres://… or sqlite:///path)", flag, Redact(raw))
	default:
		return Target{}, fmt.Errorf("%s: unsupported scheme %q (use postgres://… or sqlite:///path)", flag, u.Scheme)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return Target{}, fmt.Errorf("%s: invalid port %q", flag, p)
		}
	}
	if _, err := pgxpool.ParseConfig(raw); err != nil {
		return Target{}, fmt.Errorf("%s: %s", flag, RedactIn(err.Error(), raw))
	}
	return Target{Kind: Postgres, URL: raw}, nil
}

// rawPort finds the port of a URL's host without parsing the rest, so that
// a bad port gets its own message rather than the URL parser's.
func rawPort(raw string) (string, bool) {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return "", false
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		rest = rest[at+1:]
	}
	if strings.HasPrefix(rest, "[") { // [ipv6]:port
		_, after, _ := strings.Cut(rest, "]")
		port, ok := strings.CutPrefix(after, ":")
		return port, ok
	}
	if strings.Contains(rest, ",") { // several hosts: leave it to pgx
		return "", false
	}
	_, port, ok := strings.Cut(rest, ":")
	return port, ok
}

// secretParams are the connection parameters whose values are secrets. pgx
// honours them in a URL's query string (postgres://h/db?password=…) and in
// the keyword/value form (host=h password=…), so both are redacted.
var secretParams = []string{"password", "sslpassword"}

// keywordSecret finds a secret in a keyword/value connection string, which
// has no URL structure to parse.
var keywordSecret = regexp.MustCompile(`(?i)\b(password|sslpassword)(\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// Redact hides every secret of a database URL (the password of its user
// info and the password parameters of its query string, or of a
// keyword/value connection string), for logs and reports.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return RedactIn(raw, raw)
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), redacted)
		}
	}
	if q := u.Query(); len(q) > 0 {
		changed := false
		for _, name := range secretParams {
			for key := range q {
				if strings.EqualFold(key, name) {
					q[key] = []string{redacted}
					changed = true
				}
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
	}
	return u.String()
}

// redacted replaces a secret wherever one would be printed.
const redacted = "xxxxx"

// Secrets returns the secret values raw carries, as written and, when they
// differ, percent-decoded, so that a message quoting either form can be
// cleaned by RedactIn. raw need not parse as a URL.
func Secrets(raw string) []string {
	var out []string
	add := func(s string) {
		if s == "" {
			return
		}
		out = append(out, s)
		if dec, err := url.QueryUnescape(s); err == nil && dec != s && dec != "" {
			out = append(out, dec)
		}
	}
	if _, rest, ok := strings.Cut(raw, "://"); ok {
		authority, query, _ := strings.Cut(rest, "?")
		if at := strings.LastIndex(authority, "@"); at > 0 {
			if _, pw, ok := strings.Cut(authority[:at], ":"); ok {
				add(pw)
			}
		}
		for part := range strings.SplitSeq(query, "&") {
			key, val, _ := strings.Cut(part, "=")
			for _, name := range secretParams {
				if strings.EqualFold(key, name) {
					add(val)
				}
			}
		}
		return out
	}
	for _, m := range keywordSecret.FindAllStringSubmatch(raw, -1) {
		add(strings.Trim(m[3], "'"))
	}
	return out
}

// RedactIn removes every secret of the database URL raw from msg, even when
// raw does not parse as a URL: it is the last line of defence for messages
// (from pgx, url, cobra) that might quote the URL or part of it.
func RedactIn(msg, raw string) string {
	secrets := Secrets(raw)
	// Longest first, so that a secret containing another is replaced whole.
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	for _, s := range secrets {
		msg = strings.ReplaceAll(msg, s, redacted)
	}
	return keywordSecret.ReplaceAllString(msg, "${1}${2}"+redacted)
}

// Options tune Open.
type Options struct {
	Schema string
	// AutoMigrate migrates the schema when it is behind. Commands that need
	// a store do this on the embedded default so that the first run works
	// with no set-up; on PostgreSQL only the bench does it.
	AutoMigrate bool
	// MaxConns sizes the PostgreSQL pool; 0 lets pgx choose.
	MaxConns int
	// Logf reports what Open did (for example creating ./drover.db).
	Logf func(format string, args ...any)
	// Logger receives a fleet's reports of shards that stop answering
	// and come back; nil discards them.
	Logger *slog.Logger
}

// PoolStats are the figures of a store's connection pool, for metrics.
type PoolStats struct {
	Open, InUse, Idle, Max int
	// WaitCount and WaitDuration total the waits for a free connection.
	WaitCount    int64
	WaitDuration time.Duration
}

// Store is an open store.
type Store struct {
	Target Target
	Driver droverdriver.Driver
	// PoolStats reads the connection pool: pgx's pool on PostgreSQL, the
	// single writer connection (where SQLite's contention is) on SQLite.
	PoolStats func() PoolStats
	// Shards reads the health of a fleet's shards (droverfleet); nil for a
	// lone database or file.
	Shards droverfleet.HealthReporter
	// newClient makes a client of the store's transaction type (NewClient).
	newClient func(cfg *drover.Config) (any, error)
	// DropSchema drops Drover's schema with every job in it: the
	// PostgreSQL schema, or on SQLite every table with the schema's
	// prefix. It is for stores a program made for itself (the bench's),
	// never for an application's.
	DropSchema func(ctx context.Context) error
	close      func()
}

// Close releases the store.
func (s *Store) Close() { s.close() }

// NewClient makes a client on the store, a *drover.Client of the store's
// transaction type (pgx.Tx or *sql.Tx), and returns it as C: the interface
// of the calls its caller makes. The CLI, the bench and the server each
// declare the few methods they use, rather than share one interface that
// mirrors every method of Client; a C the client does not implement is a
// programming error, reported here (every caller's tests open both
// stores).
func NewClient[C any](s *Store, cfg *drover.Config) (C, error) {
	var zero C
	c, err := s.newClient(cfg)
	if err != nil {
		return zero, err
	}
	typed, ok := c.(C)
	if !ok {
		return zero, fmt.Errorf("storeurl: %T does not implement %T", c, (*C)(nil))
	}
	return typed, nil
}

// Open connects to the store a Target names and checks that it answers.
func Open(ctx context.Context, t Target, opts Options) (*Store, error) {
	if opts.Schema == "" {
		opts.Schema = "drover"
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	var s *Store
	switch {
	case len(t.Shards) > 1:
		var err error
		if s, err = openFleet(ctx, t, opts); err != nil {
			return nil, err
		}
	case t.Kind == Postgres:
		cfg, err := pgxpool.ParseConfig(t.URL)
		if err != nil {
			return nil, fmt.Errorf("--database-url: %s", RedactIn(err.Error(), t.URL))
		}
		if opts.MaxConns > 0 {
			cfg.MaxConns = int32(opts.MaxConns)
		}
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("open %s: %s", t.Redacted(), RedactIn(err.Error(), t.URL))
		}
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = pool.Ping(pctx)
		cancel()
		if err != nil {
			pool.Close()
			return nil, connectError(err, cfg.ConnConfig.Config, t.URL)
		}
		d, err := droverpg.New(pool, droverpg.WithSchema(opts.Schema))
		if err != nil {
			pool.Close()
			return nil, fmt.Errorf("--schema: %w", err)
		}
		s = &Store{Target: t, Driver: d, close: pool.Close,
			PoolStats: func() PoolStats {
				st := pool.Stat()
				return PoolStats{Open: int(st.TotalConns()), InUse: int(st.AcquiredConns()), Idle: int(st.IdleConns()),
					Max: int(st.MaxConns()), WaitCount: st.EmptyAcquireCount(), WaitDuration: st.EmptyAcquireWaitTime()}
			},
			newClient: func(cfg *drover.Config) (any, error) { return drover.NewClient(d, cfg) },
			DropSchema: func(ctx context.Context) error {
				_, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{opts.Schema}.Sanitize()+" CASCADE")
				return err
			}}
	case t.Kind == SQLite:
		if t.Default {
			opts.Logf("no --database-url or DATABASE_URL: using the embedded store ./%s", DefaultPath)
		}
		if t.URL != ":memory:" {
			if err := checkSQLitePath(t.URL); err != nil {
				return nil, fmt.Errorf("open sqlite store %s: %w", t.URL, err)
			}
		}
		name := t.URL
		if t.Params != "" {
			name = "sqlite:" + t.URL + "?" + t.Params
		}
		d, err := droversqlite.Open(ctx, name, droversqlite.WithSchema(opts.Schema))
		if err != nil {
			return nil, fmt.Errorf("open sqlite store %s: %w", t.URL, err)
		}
		s = &Store{Target: t, Driver: d, close: func() { _ = d.Close() },
			PoolStats: func() PoolStats {
				st := d.DB().Stats()
				return PoolStats{Open: st.OpenConnections, InUse: st.InUse, Idle: st.Idle, Max: st.MaxOpenConnections,
					WaitCount: st.WaitCount, WaitDuration: st.WaitDuration}
			},
			newClient:  func(cfg *drover.Config) (any, error) { return drover.NewClient(d, cfg) },
			DropSchema: func(ctx context.Context) error { return dropSQLitePrefix(ctx, d.DB(), opts.Schema+"_") }}
	default:
		return nil, fmt.Errorf("unknown store kind %q", t.Kind)
	}
	if opts.AutoMigrate {
		res, err := drover.Migrate(ctx, s.Driver)
		if err != nil {
			s.Close()
			return nil, err
		}
		// One line, however many migrations a fresh store took (18 lines
		// before the bench's report, say); `drover migrate` lists them.
		switch n := len(res.Applied); n {
		case 0:
		case 1:
			opts.Logf("migrated schema %q to version %d (%s)", opts.Schema, res.Version, res.Applied[0].Name)
		default:
			opts.Logf("migrated schema %q to version %d (%d migrations)", opts.Schema, res.Version, n)
		}
	}
	return s, nil
}

// openFleet opens a pool and a driver per shard and the fleet over them.
// A shard that does not answer is reported and left to come back: a
// worker starts with one shard down and catches up once it answers. A
// shard whose server refuses the connection (a password, a missing
// database) is an error.
func openFleet(ctx context.Context, t Target, opts Options) (*Store, error) {
	var pools []*pgxpool.Pool
	closeAll := func() {
		for _, p := range pools {
			p.Close()
		}
	}
	var shards []droverdriver.TxDriver[pgx.Tx]
	for i, raw := range t.Shards {
		cfg, err := pgxpool.ParseConfig(raw)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("--database-url (shard %d): %s", i, RedactIn(err.Error(), raw))
		}
		if opts.MaxConns > 0 {
			cfg.MaxConns = int32(opts.MaxConns)
		}
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("open shard %d %s: %s", i, Redact(raw), RedactIn(err.Error(), raw))
		}
		pools = append(pools, pool)
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = pool.Ping(pctx)
		cancel()
		if err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) {
				closeAll()
				return nil, fmt.Errorf("shard %d: %w", i, connectError(err, cfg.ConnConfig.Config, raw))
			}
			opts.Logf("shard %d: %v: starting without it, its jobs wait until it answers", i, connectError(err, cfg.ConnConfig.Config, raw))
		}
		d, err := droverpg.New(pool, droverpg.WithSchema(opts.Schema))
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("--schema: %w", err)
		}
		shards = append(shards, d)
	}
	f, err := droverfleet.New(ctx, shards, droverfleet.Options{Logger: opts.Logger})
	if err != nil {
		closeAll()
		return nil, err
	}
	return &Store{Target: t, Driver: f, Shards: f, close: closeAll,
		PoolStats: func() PoolStats {
			var out PoolStats
			for _, pool := range pools {
				st := pool.Stat()
				out.Open += int(st.TotalConns())
				out.InUse += int(st.AcquiredConns())
				out.Idle += int(st.IdleConns())
				out.Max += int(st.MaxConns())
				out.WaitCount += st.EmptyAcquireCount()
				out.WaitDuration += st.EmptyAcquireWaitTime()
			}
			return out
		},
		newClient: func(cfg *drover.Config) (any, error) { return drover.NewClient(f, cfg) },
		DropSchema: func(ctx context.Context) error {
			for _, pool := range pools {
				if _, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{opts.Schema}.Sanitize()+" CASCADE"); err != nil {
					return err
				}
			}
			return nil
		}}, nil
}

// connectError turns a failed first connection into one line that names
// the cause a user can act on. pgx reports every attempt it made (with
// sslmode=prefer, a TLS one and a plain one, per host) wrapped in
// "failed to connect to …"; the server's answer, when there was one, is
// the only part that says what is wrong, and its SQLSTATE says which fix
// applies. raw is the URL as given, whose secrets never reach the message.
func connectError(err error, cfg pgconn.Config, raw string) error {
	host := net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		var msg string
		switch pgErr.Code {
		case "28P01": // invalid_password
			msg = fmt.Sprintf("authentication failed for user %q at PostgreSQL %s: check the password", cfg.User, host)
		case "3D000": // invalid_catalog_name
			msg = fmt.Sprintf("database %q does not exist on PostgreSQL at %s: create it, or fix the URL's database", cfg.Database, host)
		case "28000": // invalid_authorization_specification: pg_hba.conf, unknown role
			msg = fmt.Sprintf("PostgreSQL at %s refused user %q: %s (check the user and the server's pg_hba.conf)", host, cfg.User, pgErr.Message)
		case "53300": // too_many_connections
			msg = fmt.Sprintf("PostgreSQL at %s has no free connection: %s", host, pgErr.Message)
		default:
			msg = fmt.Sprintf("PostgreSQL at %s refused the connection: %s (SQLSTATE %s)", host, pgErr.Message, pgErr.Code)
		}
		return errors.New(RedactIn(msg, raw))
	}
	return errors.New(RedactIn(fmt.Sprintf("cannot connect to PostgreSQL at %s (is the database up?): %s", host, networkCause(err)), raw))
}

// networkCause is the innermost useful reason a connection attempt failed
// without an answer from the server: refused, timed out, no such host.
func networkCause(err error) string {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var netErr net.Error
	switch {
	case errors.As(err, &dnsErr):
		return dnsErr.Error()
	case errors.As(err, &opErr) && opErr.Err != nil:
		if opErr.Timeout() {
			return "timed out"
		}
		var se *os.SyscallError
		if errors.As(opErr.Err, &se) {
			return se.Err.Error()
		}
		return opErr.Err.Error()
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timed out"
	}
	// Unknown shape: keep pgx's text, folded to the last attempt's cause.
	msg := err.Error()
	if i := strings.LastIndex(msg, "\n"); i >= 0 {
		msg = msg[i+1:]
	}
	return strings.TrimSpace(msg)
}

// checkSQLitePath says why path cannot hold a SQLite store, naming the
// path and the cause, before SQLite reduces every such case to "unable to
// open database file (14)": it needs the file to be a regular file it can
// read and write, and its directory to exist and be writable, since the
// journal and WAL files are created beside it.
func checkSQLitePath(path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("directory %s does not exist (create it, or point --database-url elsewhere)", dir)
	case err != nil:
		return fmt.Errorf("directory %s: %w", dir, unwrapPath(err))
	case !st.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	st, err = os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		// Created on open: the directory must let SQLite create it.
		if err := writableDir(dir); err != nil {
			return err
		}
		return nil
	case err != nil:
		return unwrapPath(err)
	case st.IsDir():
		return fmt.Errorf("%s is a directory, not a database file (use a file in it, e.g. %s)", path, filepath.Join(path, DefaultPath))
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("cannot open the file for writing: %w", unwrapPath(err))
	}
	_ = f.Close()
	return writableDir(dir)
}

// writableDir checks that a file can be created in dir, by creating one.
func writableDir(dir string) error {
	f, err := os.CreateTemp(dir, ".drover-write-check-*")
	if err != nil {
		return fmt.Errorf("directory %s is not writable: %w", dir, unwrapPath(err))
	}
	name := f.Name()
	_ = f.Close()
	_ = os.Remove(name)
	return nil
}

// unwrapPath drops the operation and path of an *fs.PathError, which the
// caller's message already names.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Migrations returns the migrations of the store kind t names, with the
// schema (PostgreSQL) or table prefix (SQLite) substituted as the driver
// would apply them. It reads the binary's embedded SQL and touches no
// store: nothing connects, and no SQLite file is created.
func Migrations(ctx context.Context, t Target, schema string) ([]drovertype.Migration, error) {
	switch t.Kind {
	case Postgres:
		cfg, err := pgxpool.ParseConfig(t.URL)
		if err != nil {
			return nil, fmt.Errorf("--database-url: %s", RedactIn(err.Error(), t.URL))
		}
		// A pool connects on first use only; this one is never used.
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("--database-url: %s", RedactIn(err.Error(), t.URL))
		}
		defer pool.Close()
		d, err := droverpg.New(pool, droverpg.WithSchema(schema))
		if err != nil {
			return nil, fmt.Errorf("--schema: %w", err)
		}
		return d.Migrations(), nil
	case SQLite:
		d, err := droversqlite.Open(ctx, ":memory:", droversqlite.WithSchema(schema))
		if err != nil {
			return nil, fmt.Errorf("--schema: %w", err)
		}
		defer d.Close()
		return d.Migrations(), nil
	}
	return nil, fmt.Errorf("unknown store kind %q", t.Kind)
}

// dropSQLitePrefix drops every table whose name starts with prefix (their
// indexes go with them), in one transaction.
func dropSQLitePrefix(ctx context.Context, db *sql.DB, prefix string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND substr(name, 1, length(?1)) = ?1`, prefix)
	if err != nil {
		return err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, n := range names {
		if _, err := tx.ExecContext(ctx, `DROP TABLE "`+strings.ReplaceAll(n, `"`, `""`)+`"`); err != nil {
			return err
		}
	}
	return tx.Commit()
}
