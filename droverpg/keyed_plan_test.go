package droverpg

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/testkit/testdb"
)

// TestKeyedInsertPlanAfterGrowth checks that a keyed insert made after the
// hot table has grown finds its keys' jobs by index, on a connection whose
// earlier keyed inserts ran while the table was empty. PostgreSQL caches a
// prepared statement's generic plan from its sixth execution when that
// plan costs no more than the custom ones did, and keeps it until the
// table's statistics change: planned on an empty table, JobInsertKeyed's
// generic plan scanned jobs whole once per inserted job (issue 36, the keys
// sweep: a batch of 10,000 keyed jobs took over 7 minutes). The insert
// after the growth must read fewer of the table's rows than one full scan.
func TestKeyedInsertPlanAfterGrowth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// One connection: every insert runs on the connection that cached the
	// statements' plans.
	pool := testdb.PoolAt(t, testdb.URL(t), 1)
	d, err := New(pool, WithSchema(testdb.NewSchema(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if _, _, err := droverdriver.MigrateUpTo(ctx, d, math.MaxInt); err != nil {
		t.Fatal(err)
	}
	table := pgx.Identifier{d.Schema(), "jobs"}.Sanitize()
	// An ANALYZE by autovacuum after the growth would replace the cached
	// plan, and hide the trap. Altered first: the change invalidates the
	// plans of the table's statements.
	if _, err := pool.Exec(ctx, `ALTER TABLE `+table+` SET (autovacuum_enabled = false)`); err != nil {
		t.Fatal(err)
	}
	keyed := func(batch string, n int) []droverdriver.InsertParams {
		jobs := make([]droverdriver.InsertParams, n)
		for i := range jobs {
			jobs[i] = droverdriver.InsertParams{Queue: "q", Kind: "k", Args: []byte(`{}`), MaxAttempts: 25,
				Key: fmt.Sprintf("%s-%d", batch, i), KeyLimit: 1}
		}
		return jobs
	}
	for i := range 10 {
		if _, err := d.exec.JobInsertMany(ctx, keyed(fmt.Sprintf("warm%d", i), 100)); err != nil {
			t.Fatal(err)
		}
	}
	const grown = 20000
	if _, err := pool.Exec(ctx, fmt.Sprintf(`INSERT INTO %s (queue, kind, args, max_attempts, ordering_key, key_limit, flow)
		SELECT 'q', 'k', '{}', 25, 'grown-' || g, 1, 16 FROM generate_series(1, %d) g`, table, grown)); err != nil {
		t.Fatal(err)
	}
	// pg_stat_xact_user_tables counts this transaction's reads, which the
	// backend has not yet reported to the cumulative statistics.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	ids, err := d.UnwrapExecutor(tx).JobInsertMany(ctx, keyed("after", 20))
	if err != nil {
		t.Fatal(err)
	}
	var read int64
	if err := tx.QueryRow(ctx, `SELECT seq_tup_read FROM pg_stat_xact_user_tables WHERE relid = $1::regclass`,
		table).Scan(&read); err != nil {
		t.Fatal(err)
	}
	if read >= grown {
		t.Errorf("inserting %d keyed jobs into a table of %d read %d rows by sequential scans, want fewer than one scan",
			len(ids), grown, read)
	}
}
