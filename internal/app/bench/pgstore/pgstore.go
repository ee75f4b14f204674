// Package pgstore is what the bench reads from and does to a PostgreSQL
// store beside Drover's own statements: the figures of pg_stat (rows
// written, the hot table's health, commits), the vacuum and checkpoint
// between runs, the raw SQL floor a run is compared with, and the faults
// of the chaos bench (other sessions' connections killed, connections and
// a snapshot held). None of it belongs on the driver's public type:
// nothing a user reaches should be able to terminate other sessions.
package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverpg"
)

// Store is a PostgreSQL store as the bench sees it: the driver's pool and
// the schema its tables are in.
type Store struct {
	pool   *pgxpool.Pool
	schema string
}

// Of returns the PostgreSQL store d runs on, and false when d is not a
// PostgreSQL driver.
func Of(d droverdriver.Driver) (*Store, bool) {
	pg, ok := d.(*droverpg.Driver)
	if !ok {
		return nil, false
	}
	return &Store{pool: pg.Pool(), schema: pg.Schema()}, true
}

// ResetPool closes the pool's idle connections, so that their backends
// exit and flush their statistics (RowsWritten).
func (d *Store) ResetPool() { d.pool.Reset() }

// DBStats reports database-side figures for the bench: size and dead
// tuples of the hot table, and the database's commit counter (whose delta
// over a run, divided by jobs, is transactions per job).
func (d *Store) DBStats(ctx context.Context) (map[string]any, error) {
	var (
		xacts, tupIns, dead, live, size, idxSize int64
	)
	err := d.pool.QueryRow(ctx, `
		SELECT
			(SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()),
			coalesce(s.n_tup_ins, 0), coalesce(s.n_dead_tup, 0), coalesce(s.n_live_tup, 0),
			pg_table_size(c.oid), pg_indexes_size(c.oid)
		FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
		WHERE n.nspname = $1 AND c.relname = 'jobs'`, d.schema).Scan(&xacts, &tupIns, &dead, &live, &size, &idxSize)
	if err != nil {
		return nil, fmt.Errorf("read database stats: %w", err)
	}
	return map[string]any{
		"transactions":         xacts,
		"jobs_dead_tuples":     dead,
		"jobs_live_tuples":     live,
		"jobs_table_bytes":     size,
		"jobs_index_bytes":     idxSize,
		"jobs_tuples_inserted": tupIns,
	}, nil
}

// RowsWritten counts, per table of the driver's schema, the rows inserted,
// updated and deleted so far according to PostgreSQL's statistics, a
// partitioned table's partitions counted under its own name (the
// generations of topic_messages; a dropped partition takes its counts
// along). The bench reads it before and after a run to show what a
// delivery writes. Each backend flushes its counts at most once a second,
// and when it goes idle or exits.
func (d *Store) RowsWritten(ctx context.Context) (map[string]int64, error) {
	rows, err := d.pool.Query(ctx, `
		SELECT coalesce(p.relname, c.relname), sum(s.n_tup_ins + s.n_tup_upd + s.n_tup_del)::bigint
		FROM pg_stat_user_tables AS s
		JOIN pg_class AS c ON c.oid = s.relid
		LEFT JOIN pg_inherits AS i ON i.inhrelid = c.oid
		LEFT JOIN pg_class AS p ON p.oid = i.inhparent
		WHERE s.schemaname = $1
		GROUP BY 1`, d.schema)
	if err != nil {
		return nil, fmt.Errorf("read rows written: %w", err)
	}
	out := map[string]int64{}
	var table string
	var n int64
	_, err = pgx.ForEachRow(rows, []any{&table, &n}, func() error {
		out[table] = n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read rows written: %w", err)
	}
	return out, nil
}

// Settle vacuums and analyzes Drover's tables, then asks for a checkpoint.
// The bench runs it between inserting a backlog and working it, and
// between the points of bench fanout, so that one
// run's dead rows and stale statistics do not bill the next run, and
// neither does a checkpoint the runs before it brought on. After a
// checkpoint starts, the first change to every page writes the whole page
// to the WAL, and a checkpoint that started inside a sweep made its later
// points 10-14% slower (docs/design/measuring.md, "The curves in rounds"). With
// one just before each point, every point pays the same. A role that may
// not checkpoint (neither superuser nor pg_checkpoint) skips it.
func (d *Store) Settle(ctx context.Context) error {
	for _, t := range []string{"jobs", "finished_jobs", "topics", "topic_subscriptions", "topic_lanes", "topic_messages", "topic_sequencer"} {
		if _, err := d.pool.Exec(ctx, "VACUUM (ANALYZE) "+pgx.Identifier{d.schema, t}.Sanitize()); err != nil {
			return fmt.Errorf("vacuum %s: %w", t, err)
		}
	}
	return d.checkpoint(ctx)
}

// checkpoint asks for a checkpoint, and does nothing when the role may not
// (neither superuser nor pg_checkpoint).
func (d *Store) checkpoint(ctx context.Context) error {
	if _, err := d.pool.Exec(ctx, "CHECKPOINT"); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42501" { // insufficient_privilege
			return nil
		}
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// TerminateBackends kills every client connection to the database except
// the caller's own, as `pg_terminate_backend` would in an outage; the chaos
// bench uses it to prove that clients reconnect and lose nothing.
func (d *Store) TerminateBackends(ctx context.Context) (int, error) {
	var n int
	err := d.pool.QueryRow(ctx, `
		SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("terminate backends: %w", err)
	}
	return n, nil
}

// HoldConnections opens n connections to the database and keeps them idle
// until release is called, as another client exhausting max_connections
// would. The chaos bench uses it; n is capped by what the server accepts.
func (d *Store) HoldConnections(ctx context.Context, n int) (release func(), held int, err error) {
	var conns []*pgx.Conn
	release = func() {
		for _, c := range conns {
			_ = c.Close(context.Background())
		}
	}
	cfg := d.pool.Config().ConnConfig
	for range n {
		c, err := pgx.ConnectConfig(ctx, cfg.Copy())
		if err != nil {
			break // the server is full: that is the point
		}
		conns = append(conns, c)
	}
	return release, len(conns), nil
}

// HoldSnapshot opens a transaction that keeps a snapshot (and so pins the
// MVCC horizon: vacuum cannot remove dead rows) until release is called, as
// a forgotten long transaction elsewhere would.
func (d *Store) HoldSnapshot(ctx context.Context) (release func(), err error) {
	conn, err := pgx.ConnectConfig(ctx, d.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("hold snapshot: %w", err)
	}
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err == nil {
		_, err = tx.Exec(ctx, "SELECT txid_current()")
	}
	if err != nil {
		_ = conn.Close(ctx)
		return nil, fmt.Errorf("hold snapshot: %w", err)
	}
	return func() {
		_ = tx.Rollback(context.Background())
		_ = conn.Close(context.Background())
	}, nil
}

// MaxConnections reports the server's max_connections.
func (d *Store) MaxConnections(ctx context.Context) (int, error) {
	var n int
	err := d.pool.QueryRow(ctx, "SELECT current_setting('max_connections')::int").Scan(&n)
	return n, err
}

// TableHealth is one sample of the hot table's physical state, taken by the
// bench's long runs to show that size and dead tuples stay flat under load.
type TableHealth struct {
	LiveTuples, DeadTuples   int64
	TableBytes, IndexBytes   int64
	FinishedBytes            int64
	DeadPercent, FreePercent float64 // from pgstattuple; -1 when unavailable
	AutovacuumCount          int64
}

// Health samples the hot table from pg_stat_user_tables and, when the
// pgstattuple extension can be created (it needs a superuser and the
// server's contrib files), from an exact scan of the hot table, which is
// cheap because that table only holds work in flight.
func (d *Store) Health(ctx context.Context) (TableHealth, error) {
	h := TableHealth{DeadPercent: -1, FreePercent: -1}
	err := d.pool.QueryRow(ctx, `
		SELECT coalesce(s.n_live_tup, 0), coalesce(s.n_dead_tup, 0),
			pg_table_size(c.oid), pg_indexes_size(c.oid),
			pg_total_relation_size(to_regclass(quote_ident($1) || '.finished_jobs')),
			coalesce(s.autovacuum_count, 0)
		FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
		WHERE n.nspname = $1 AND c.relname = 'jobs'`, d.schema).Scan(
		&h.LiveTuples, &h.DeadTuples, &h.TableBytes, &h.IndexBytes, &h.FinishedBytes, &h.AutovacuumCount)
	if err != nil {
		return h, fmt.Errorf("read table health: %w", err)
	}
	if _, err := d.pool.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pgstattuple"); err != nil {
		return h, nil // not available here: the statistics above still tell the trend
	}
	_ = d.pool.QueryRow(ctx, `SELECT dead_tuple_percent, free_percent FROM pgstattuple(to_regclass(quote_ident($1) || '.jobs'))`,
		d.schema).Scan(&h.DeadPercent, &h.FreePercent)
	return h, nil
}

// FloorCommand and CompleteFloorCommand describe what Floor measures, for
// reports.
const (
	FloorCommand         = "raw SQL floor: %d clients each loop { claim %d ids with FOR UPDATE SKIP LOCKED; DELETE them } over %d rows in a scratch table (the loop of shared/peers/claim_delete.sql)"
	CompleteFloorCommand = "claim-and-complete floor: %d clients each loop { claim %d ids with FOR UPDATE SKIP LOCKED; mark them completed } over %d rows in a scratch table (the loop of shared/peers/claim_complete.sql)"
)

// Floor measures the raw SQL floor of a job queue on this database: the
// rate at which bare statements claim a batch of rows with FOR UPDATE SKIP
// LOCKED and delete them, with no queue library around them, or with
// complete, mark them completed: the floor of a queue that keeps the
// history of its jobs, as Drover does. It uses a scratch table in the
// driver's schema and drops it afterwards. The bench reports Drover's rate
// against it, measured in the same run. loopStarts, when not nil, is
// called as the timed loop begins, after the set-up, so that the bench can
// read its CPU and WAL counters around the loop alone.
func (d *Store) Floor(ctx context.Context, rows, batch, clients int, complete bool, loopStarts func()) (float64, error) {
	table := pgx.Identifier{d.schema, "floor_jobs"}.Sanitize()
	setup := []string{
		"DROP TABLE IF EXISTS " + table,
		"CREATE TABLE " + table + " (id bigserial PRIMARY KEY, queue text, args jsonb, state smallint DEFAULT 0, run_at timestamptz DEFAULT now(), attempt int DEFAULT 0, locked_by text)",
		"CREATE INDEX ON " + table + " (id) WHERE state = 0",
		fmt.Sprintf("INSERT INTO %s (queue, args) SELECT 'default', jsonb_build_object('n', g) FROM generate_series(1, %d) g", table, rows),
		"VACUUM ANALYZE " + table,
	}
	for _, q := range setup {
		if _, err := d.pool.Exec(ctx, q); err != nil {
			return 0, fmt.Errorf("floor setup: %w", err)
		}
	}
	// The loop starts after a checkpoint, as Drover's work-off and the
	// store ceiling do (Settle): the first change to each page after one
	// writes the whole page to the WAL, and a floor whose table was
	// written since the last checkpoint paid none of that (issue 36: 190
	// of Drover's 1,125 WAL bytes a job were such pages).
	if err := d.checkpoint(ctx); err != nil {
		return 0, fmt.Errorf("floor setup: %w", err)
	}
	defer d.pool.Exec(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+table)

	claim := `WITH c AS (SELECT id FROM ` + table + ` WHERE state = 0 ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED),
		u AS (UPDATE ` + table + ` t SET state = 1, attempt = t.attempt + 1, locked_by = 'w' FROM c WHERE t.id = c.id RETURNING t.id)
		SELECT coalesce(array_agg(id), '{}') FROM u`
	del := `DELETE FROM ` + table + ` WHERE id = ANY($1)`
	if complete {
		del = `UPDATE ` + table + ` SET state = 2, locked_by = NULL WHERE id = ANY($1)`
	}
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	if loopStarts != nil {
		loopStarts()
	}
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				var ids []int64
				if err := d.pool.QueryRow(ctx, claim, batch).Scan(&ids); err != nil {
					errs <- err
					return
				}
				if len(ids) == 0 {
					return
				}
				if _, err := d.pool.Exec(ctx, del, ids); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return 0, fmt.Errorf("floor loop: %w", err)
	}
	return float64(rows) / elapsed.Seconds(), nil
}
