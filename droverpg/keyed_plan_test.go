package droverpg

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/testkit/testdb"
)

// TestKeyPlansAfterGrowth checks that the statements that look up jobs by
// ordering key find them by index once the hot table has grown, on a
// connection that ran them while the table was empty. PostgreSQL caches a
// prepared statement's generic plan from its sixth execution when that
// plan costs no more than the custom ones did, and keeps it until the
// table's statistics change: planned on an empty table, JobInsertKeyed's
// generic plan scanned jobs whole (issue 36, the keys sweep: a batch of
// 10,000 keyed jobs took over 7 minutes). Each statement, run after the
// growth, must read fewer of the table's rows than one full scan.
func TestKeyPlansAfterGrowth(t *testing.T) {
	t.Parallel()
	keyed := func(batch string, n int) []droverdriver.InsertParams {
		jobs := make([]droverdriver.InsertParams, n)
		for i := range jobs {
			jobs[i] = droverdriver.InsertParams{Queue: "q", Kind: "k", Args: []byte(`{}`), MaxAttempts: 25,
				Key: fmt.Sprintf("%s-%d", batch, i), KeyLimit: 1}
		}
		return jobs
	}
	keys := func(batch string, n int) droverdriver.KeyParams {
		var k droverdriver.KeyParams
		for _, j := range keyed(batch, n) {
			k.Queues, k.Keys = append(k.Queues, j.Queue), append(k.Keys, j.Key)
		}
		return k
	}
	cases := []struct {
		name string
		// custom, when set, must have run no generic plan on the
		// connection: its reads after the growth show a cached plan only
		// if no invalidation (the DDL of tests running alongside can
		// cause one) replanned it for the grown table first.
		custom string
		// run runs the statement once on keys named by batch.
		run func(ctx context.Context, e *executor, batch string, n int) error
		// grow, when set, grows unique_keys instead of jobs (the table
		// the statement looks up).
		grow string
	}{
		{"JobInsertKeyed", jobInsertKeyed.name, func(ctx context.Context, e *executor, batch string, n int) error {
			_, err := e.JobInsertMany(ctx, keyed(batch, n))
			return err
		}, ""},
		{"JobInsertFlow", jobInsertFlow.name, func(ctx context.Context, e *executor, batch string, n int) error {
			states, zeros := make([]drovertype.JobState, n), make([]int, n)
			for i := range states {
				states[i] = drovertype.JobStateAvailable
			}
			_, err := e.insertFlowRows(ctx, keyed(batch, n), states, zeros, zeros, nil, wakeSet{})
			return err
		}, ""},
		{"KeyPromote", "", func(ctx context.Context, e *executor, batch string, n int) error {
			_, err := e.KeyPromote(ctx, keys(batch, n))
			return err
		}, ""},
		{"UniqueRelease", "", func(ctx context.Context, e *executor, batch string, n int) error {
			ids := make([]int64, n)
			for i := range ids {
				ids[i] = int64(i + 1)
			}
			return e.UniqueRelease(ctx, ids)
		}, `INSERT INTO %s.unique_keys (job_id, kind, queue, unique_key, final_states)
			SELECT g, 'k', '', 'grown-' || g, 0 FROM generate_series(1, %d) g`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			d := emptyOnOneConn(t)
			for i := range 10 {
				if err := c.run(ctx, &d.exec, fmt.Sprintf("warm%d", i), 100); err != nil {
					t.Fatal(err)
				}
			}
			const grown = 20000
			grow := `INSERT INTO %s.jobs (queue, kind, args, max_attempts, ordering_key, key_limit, flow)
				SELECT 'q', 'k', '{}', 25, 'grown-' || g, 1, 16 FROM generate_series(1, %d) g`
			if c.grow != "" {
				grow = c.grow
			}
			if _, err := d.Pool().Exec(ctx, fmt.Sprintf(grow, pgx.Identifier{d.Schema()}.Sanitize(), grown)); err != nil {
				t.Fatal(err)
			}
			// pg_stat_xact_user_tables counts this transaction's reads,
			// which the backend has not reported to the cumulative
			// statistics yet.
			tx, err := d.Pool().Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			if err := c.run(ctx, d.UnwrapExecutor(tx).(*executor), "after", 20); err != nil {
				t.Fatal(err)
			}
			var read int64
			if err := tx.QueryRow(ctx, `SELECT coalesce(sum(seq_tup_read), 0) FROM pg_stat_xact_user_tables WHERE schemaname = $1`,
				d.Schema()).Scan(&read); err != nil {
				t.Fatal(err)
			}
			if read >= grown {
				t.Errorf("%s on 20 keys of a table grown to %d rows read %d rows by sequential scans, want fewer than one scan",
					c.name, grown, read)
			}
			if c.custom == "" {
				return
			}
			var generic int64
			if err := tx.QueryRow(ctx, `SELECT coalesce(sum(generic_plans), 0) FROM pg_prepared_statements WHERE statement = $1`,
				d.exec.q[c.custom]).Scan(&generic); err != nil {
				t.Fatal(err)
			}
			if generic > 0 {
				t.Errorf("%s ran a generic plan %d times, want a plan for its parameters at every execution", c.custom, generic)
			}
		})
	}
}

// emptyOnOneConn returns a driver on a pool of one connection, so that
// every statement runs on the connection that cached its plans, and on a
// migrated schema of its own.
func emptyOnOneConn(t *testing.T) *Driver {
	t.Helper()
	ctx := context.Background()
	d, err := New(testdb.PoolAt(t, testdb.URL(t), 1), WithSchema(testdb.NewSchema(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if _, _, err := droverdriver.MigrateUpTo(ctx, d, math.MaxInt); err != nil {
		t.Fatal(err)
	}
	// An ANALYZE by autovacuum after the growth would replace the cached
	// plans and hide the trap. Altered first: the change invalidates the
	// plans of the tables' statements.
	for _, table := range []string{"jobs", "unique_keys"} {
		name := pgx.Identifier{d.Schema(), table}.Sanitize()
		if _, err := d.Pool().Exec(ctx, `ALTER TABLE `+name+` SET (autovacuum_enabled = false)`); err != nil {
			t.Fatal(err)
		}
	}
	return d
}
