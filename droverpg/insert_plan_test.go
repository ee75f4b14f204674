package droverpg

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestJobInsertedPlan checks that reading back a job just inserted finds
// it by its primary key on a hot table of many jobs, in the plans
// PostgreSQL may choose for the prepared statement. The ID comes from
// currval, a volatile function: compared with the column directly it is
// evaluated per row and the table is scanned whole, so every single-job
// insert would cost in proportion to the queue's depth.
func TestJobInsertedPlan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := migrated(t)
	table := pgx.Identifier{d.Schema(), "jobs"}.Sanitize()
	if _, err := d.Pool().Exec(ctx, `INSERT INTO `+table+` (queue, kind, args, max_attempts)
		SELECT 'q', 'k', '{}', 25 FROM generate_series(1, 20000)`); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Pool().Exec(ctx, `ANALYZE `+table); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		plan := explain(t, d, mode, d.exec.q[jobInserted.name], []any{table})
		walkPlan(plan, func(n map[string]any) {
			if n["Relation Name"] == "jobs" && n["Node Type"] != "Index Scan" && n["Node Type"] != "Index Only Scan" {
				t.Errorf("%s: JobInserted reads jobs by %v, want an index scan of the primary key", mode, n["Node Type"])
			}
		})
	}
}
