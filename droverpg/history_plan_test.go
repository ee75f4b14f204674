package droverpg

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
)

// TestStatsRecordReadsTheMinute checks that the leader's minute sample,
// on a store that finished jobs for an hour since the last VACUUM, reads
// the pages of the minute it samples and not the hour behind it; and so
// does a JobPrune that finds nothing due. Both read finished_jobs through
// its BRIN index on finalized_at, which summarises a block range only when
// VACUUM (or a summary) comes: before, every range filled since had to be
// read and rechecked, and after an hour's soak at 4,000 finishes a second
// the sample took 10 s and the pruning 0.9 s.
func TestStatsRecordReadsTheMinute(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := migrated(t)
	finished := pgx.Identifier{d.Schema(), "finished_jobs"}.Sanitize()
	at := time.Now().Truncate(time.Minute)
	// An hour of finished jobs, 500 a minute in finalized_at order, as
	// finishes append them (about 7 a page): the last minute's are the
	// last 500.
	const perMinute = 500
	if _, err := d.Pool().Exec(ctx, `INSERT INTO `+finished+` (id, state, queue, kind, priority, args, metadata, tags,
			attempt, max_attempts, timeout_ms, created_at, run_at, attempted_at, finalized_at)
		SELECT i, 'completed', 'q', 'k', 0, jsonb_build_object('pad', repeat('x', 1000)), '{}', '{}', 1, 25, 0, t, t, t, t
		FROM (SELECT i, $1::timestamptz - interval '1 hour' + i * interval '1 minute' / $2 AS t
			FROM generate_series(1, 60 * $2) i) s`, at, perMinute); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Pool().Exec(ctx, `ANALYZE `+finished); err != nil {
		t.Fatal(err)
	}
	var pages float64
	if err := d.Pool().QueryRow(ctx, `SELECT relpages FROM pg_class WHERE oid = $1::regclass`, finished).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if pages < 30*128 {
		t.Fatalf("the hour fills %v pages, want at least 30 block ranges for the minute to stand out", pages)
	}

	if _, err := d.exec.StatsRecord(ctx, droverdriver.StatsRecordParams{At: at, Since: at.Add(-time.Minute), Until: at, Now: at}); err != nil {
		t.Fatal(err)
	}
	var completed int
	if err := d.Pool().QueryRow(ctx, `SELECT completed FROM `+pgx.Identifier{d.Schema(), "stat_samples"}.Sanitize()+
		` WHERE resolution = 60 AND at = $1 AND queue = '' AND kind = ''`, at).Scan(&completed); err != nil {
		t.Fatal(err)
	}
	if completed != perMinute {
		t.Errorf("the sample counted %d completed jobs, want the minute's %d", completed, perMinute)
	}

	// The next samples and prunes find the ranges summarised: a minute is
	// one or two of them (about 70 pages here, 128 pages a range), the
	// hour 30 and more.
	pp, _ := pruneArgs(droverdriver.PruneParams{Now: at, Limit: 10_000, CompletedRetention: drover.CompletedRetentionDefault,
		CancelledRetention: drover.CancelledRetentionDefault, DiscardedRetention: drover.DiscardedRetentionDefault})
	for _, c := range []struct {
		name string
		sql  string
		args []any
	}{
		{"StatsRecord", d.exec.q[statsRecord.name], statsRecord.bind(statsRecordParams{at.Add(time.Minute), at.Add(-time.Minute), at, at}).Args},
		{"JobPrune", d.exec.q[jobPrune.name], jobPrune.bind(pp).Args},
	} {
		tx, err := d.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var raw []byte
		err = tx.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+c.sql, c.args...).Scan(&raw)
		_ = tx.Rollback(ctx)
		if err != nil {
			t.Fatal(err)
		}
		plan := firstPlan(t, raw)
		walkPlan(plan["Plan"].(map[string]any), func(n map[string]any) {
			if n["Relation Name"] != "finished_jobs" {
				return
			}
			read := num(n["Exact Heap Blocks"]) + num(n["Lossy Heap Blocks"])
			if n["Node Type"] == "Seq Scan" {
				read = pages
			}
			if read > 4*128 {
				out, _ := json.MarshalIndent(plan, "", " ")
				t.Errorf("%s reads %v of finished_jobs' %v pages by a %v, want the last minute's ranges:\n%s", c.name, read, pages, n["Node Type"], out)
			}
		})
	}
}
