package droverpg

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// TestFinishPlansKeepOffRunningIndex checks that the statements that end or
// extend attempts by ID (JobComplete, JobFinish, JobHeartbeat) find their
// rows through the primary key alone, never through jobs_running_idx, the
// index of running rows the rescue pass reads. Planned on a backlog
// analysed while few jobs ran (the statistics a burn-down starts from),
// JobComplete took the running rows' index for a bitmap to AND with the
// primary key's: every flush read every running job's entry, and the dead
// entries of every job finished since the last vacuum, which bitmap scans
// never mark dead (issue 36: 14% of the store's CPU in a burn-down).
func TestFinishPlansKeepOffRunningIndex(t *testing.T) {
	d := migrated(t)
	ctx := t.Context()
	table := pgx.Identifier{d.Schema(), "jobs"}.Sanitize()
	token := pgtype.UUID{Bytes: [16]byte{1, 2, 3}, Valid: true}
	running := 1000
	setup := []string{
		`INSERT INTO ` + table + ` (queue, kind, args, max_attempts)
			SELECT 'q', 'k', jsonb_build_object('n', g), 25 FROM generate_series(1, 200000) g`,
		`ANALYZE ` + table,
		// A claim's worth of running jobs, and as many finished since the
		// last vacuum, whose entries are dead.
		fmt.Sprintf(`UPDATE %s SET state = 'running', attempt = 1, attempted_at = now(), lease_owner = 'w',
			lease_token = '%s', lease_expires_at = now() + interval '1 hour' WHERE id <= %d`, table, uuidText(token), 2*running),
		fmt.Sprintf(`DELETE FROM %s WHERE id <= %d`, table, running),
	}
	for _, sql := range setup {
		if _, err := d.Pool().Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	var ids []int64
	var keys []string
	results := map[string][]any{}
	for id := int64(running + 1); id <= int64(running+500); id++ {
		ids = append(ids, id)
		keys = append(keys, fmt.Sprintf("%d:1", id))
		results[fmt.Sprint(id)] = []any{1, 1, nil, nil, nil, false, uuidText(token)}
	}
	resultsJSON, err := json.Marshal(results)
	if err != nil {
		t.Fatal(err)
	}
	tokens := []pgtype.UUID{token}
	// The statistics of the backlog alone, then of the backlog with the
	// jobs running (the next autovacuum's).
	for _, analyzed := range []bool{false, true} {
		if analyzed {
			if _, err := d.Pool().Exec(ctx, `ANALYZE `+table); err != nil {
				t.Fatal(err)
			}
		}
		checkFinishPlans(t, d, []finishPlanCase{
			{"JobComplete", d.exec.q[jobComplete.name], []any{ids, keys, nil, int32(0), false, tokens}},
			{"JobFinish", d.exec.q[jobFinish.name], []any{ids, string(resultsJSON), int32(0)}},
			{"JobHeartbeat", d.exec.q[jobHeartbeat.name], []any{ids, keys, 30000.0, tokens}},
		}, analyzed)
	}
}

type finishPlanCase struct {
	name  string
	query string
	args  []any
}

// checkFinishPlans fails for each statement whose plan reads
// jobs_running_idx.
func checkFinishPlans(t *testing.T, d *Driver, cases []finishPlanCase, analyzed bool) {
	t.Helper()
	for _, c := range cases {
		var raw []byte
		// EXPLAIN with the values bound plans as the driver's executions
		// do (replan: a custom plan each time).
		if err := d.Pool().QueryRow(t.Context(), "EXPLAIN (FORMAT JSON) "+c.query, c.args...).Scan(&raw); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		plan := firstPlan(t, raw)
		walkPlan(plan["Plan"].(map[string]any), func(n map[string]any) {
			if n["Index Name"] == "jobs_running_idx" {
				out, _ := json.MarshalIndent(plan, "", " ")
				t.Errorf("%s (analysed with the jobs running: %v) reads jobs_running_idx (%v), want its rows by the primary key alone:\n%s",
					c.name, analyzed, n["Node Type"], out)
			}
		})
	}
}

func uuidText(u pgtype.UUID) string {
	b := u.Bytes
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
