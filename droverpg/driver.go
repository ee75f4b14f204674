// Package droverpg runs Drover on PostgreSQL through a pgx v5 pool. It is
// the production store: many processes on many machines share one
// database, claim with FOR UPDATE SKIP LOCKED and wake each other with
// LISTEN/NOTIFY.
package droverpg

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/sqlfile"
)

//go:embed queries.sql
var queriesSQL string

//go:embed migrations/*.sql
var migrationFiles embed.FS

// DefaultSchema is the schema Drover's tables live in unless told otherwise.
const DefaultSchema = "drover"

// Option configures a Driver.
type Option func(*Driver)

// WithSchema puts Drover's tables in schema instead of DefaultSchema.
func WithSchema(schema string) Option {
	return func(d *Driver) { d.schema = schema }
}

// Driver is the PostgreSQL store. Create it with New.
type Driver struct {
	exec       executor // the statements, reached through Executor
	pool       *pgxpool.Pool
	hub        *hub // the listening connection its listeners share
	schema     string
	migrations []drovertype.Migration
}

var _ droverdriver.TxDriver[pgx.Tx] = (*Driver)(nil)

// New returns a driver on pool. The pool stays the caller's: Close does not
// close it.
func New(pool *pgxpool.Pool, opts ...Option) (*Driver, error) {
	d := &Driver{pool: pool, schema: DefaultSchema}
	for _, o := range opts {
		o(d)
	}
	if err := droverdriver.ValidateSchema(d.schema); err != nil {
		return nil, err
	}
	prefix := pgx.Identifier{d.schema}.Sanitize() + "."
	q, err := sqlfile.ParseQueries(queriesSQL, prefix)
	if err == nil {
		err = sqlfile.WithClaimAfter(q, "AND (priority, run_at, id) > ($8, $9, $10)")
	}
	if err == nil {
		err = sqlfile.WithClaimKinds(q, "AND kind = ANY($8::text[])",
			"AND (priority, run_at, id) > ($8, $9, $10) AND kind = ANY($11::text[])")
	}
	if err == nil {
		err = sqlfile.WithClaimExceptKinds(q, "AND kind <> ALL($8::text[])",
			"AND (priority, run_at, id) > ($8, $9, $10) AND kind <> ALL($11::text[])")
	}
	if err == nil {
		err = withClaimSlots(q)
	}
	if err == nil {
		err = sqlfile.WithDescending(q, "JobList", "JobListDesc")
	}
	if err == nil {
		err = sqlfile.WithDescending(q, "JobIDNext", "JobIDPrev")
	}
	if err != nil {
		return nil, fmt.Errorf("droverpg: %w", err)
	}
	d.migrations, err = sqlfile.LoadMigrations(migrationFiles, "migrations", prefix)
	if err != nil {
		return nil, err
	}
	channel := notifyChannel(d.schema)
	d.exec = executor{db: pool, waker: newWaker(pool, q, channel), q: q, schema: d.schema, channel: channel}
	d.hub = newHub(pool, channel)
	return d, nil
}

// notifyChannel is the LISTEN channel for one schema, so that several
// Drover schemas in one database do not wake each other.
func notifyChannel(schema string) string { return "drover_insert_" + schema }

// Name implements droverdriver.Driver.
func (d *Driver) Name() string { return "postgres" }

// Schema implements droverdriver.Driver.
func (d *Driver) Schema() string { return d.schema }

// Pool returns the pool the driver runs on.
func (d *Driver) Pool() *pgxpool.Pool { return d.pool }

// Migrations implements droverdriver.Driver.
func (d *Driver) Migrations() []drovertype.Migration { return d.migrations }

// PollInterval implements droverdriver.Driver. Notifications carry wake-ups
// between processes, so polling is only a safety net.
func (d *Driver) PollInterval() time.Duration { return time.Second }

// Close implements droverdriver.Driver. It returns once the notifications of
// inserts that already committed have gone out and the goroutine sending
// them has returned; inserts made after it notify nobody (polls still
// find their jobs). Listeners stop with the contexts their callers gave
// Listen. The pool belongs to the caller and stays open.
func (d *Driver) Close() error {
	d.exec.waker.close()
	return nil
}

// Executor implements droverdriver.Driver: statements run on the pool.
func (d *Driver) Executor() droverdriver.Executor { return &d.exec }

// UnwrapExecutor implements droverdriver.TxDriver: statements run in the caller's
// transaction, and insert notifications are delivered when it commits.
func (d *Driver) UnwrapExecutor(tx pgx.Tx) droverdriver.Executor {
	e := d.exec
	e.db, e.waker = tx, nil
	return &e
}

// SchemaVersion implements droverdriver.Driver.
func (d *Driver) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := schemaVersion.queryRow(ctx, d.pool, d.exec.q, struct{}{}).Scan(&v)
	if isUndefinedTable(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

// MigrateTx implements droverdriver.Driver. A transaction-scoped advisory lock
// keyed by the schema serialises concurrent migrators.
func (d *Driver) MigrateTx(ctx context.Context, fn func(context.Context, droverdriver.Migrator) error) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		h := fnv.New64a()
		h.Write([]byte("drover.migrate." + d.schema))
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(h.Sum64())); err != nil {
			return fmt.Errorf("take migration lock: %w", err)
		}
		if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{d.schema}.Sanitize()); err != nil {
			return fmt.Errorf("create schema %s: %w", d.schema, err)
		}
		if _, err := migrationsTable.exec(ctx, tx, d.exec.q, struct{}{}); err != nil {
			return fmt.Errorf("create migrations table: %w", err)
		}
		return fn(ctx, &migrator{tx: tx, q: d.exec.q})
	})
}

type migrator struct {
	tx pgx.Tx
	q  map[string]string
}

func (m *migrator) Version(ctx context.Context) (int, error) {
	var v int
	err := schemaVersion.queryRow(ctx, m.tx, m.q, struct{}{}).Scan(&v)
	return v, err
}

func (m *migrator) Apply(ctx context.Context, mig drovertype.Migration) error {
	if _, err := m.tx.Exec(ctx, mig.SQL); err != nil {
		return fmt.Errorf("migration %03d_%s: %w", mig.Version, mig.Name, err)
	}
	_, err := migrationRecord.exec(ctx, m.tx, m.q, migrationRecordParams{mig.Version, mig.Name})
	return err
}

func isUndefinedTable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "42P01" || pgErr.Code == "3F000")
}
