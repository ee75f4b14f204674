package droverpg

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestJobRouteAbsentPlan checks the leader's absent-worker pass on a hot
// table that has grown and been emptied again, the shape of a store after a
// burst (its last page still holds a job, so VACUUM cannot truncate
// it): the planner prices the table by its pages, and the pass, run every
// rescue interval whether or not any job is routed, must still read only
// the routed jobs' partial index and change them by key. Before, its
// ORDER BY id walked the whole primary key, and the estimate crossed
// jit_above_cost (the pass now runs after NoJIT), so an idle store spent
// 0.2-0.9 s of database time on every pass.
func TestJobRouteAbsentPlan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := migrated(t)
	table := pgx.Identifier{d.Schema(), "jobs"}.Sanitize()
	for _, sql := range []string{
		`INSERT INTO ` + table + ` (queue, kind, args, max_attempts)
			SELECT 'q', 'k', jsonb_build_object('pad', repeat('x', 300)), 25 FROM generate_series(1, 100000)`,
		`ANALYZE ` + table,
		`DELETE FROM ` + table + ` WHERE id < (SELECT max(id) FROM ` + table + `)`,
		`VACUUM ` + table,
	} {
		if _, err := d.Pool().Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	args := []any{time.Now(), 100}
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		plan := explain(t, d, mode, d.exec.q[jobRouteAbsent.name], args)
		walkPlan(plan["Plan"].(map[string]any), func(n map[string]any) {
			// r is the check of a named worker's running jobs, made
			// only for routed jobs that are due.
			if n["Relation Name"] != "jobs" || n["Alias"] == "r" {
				return
			}
			index, _ := n["Index Name"].(string)
			_, bounded := n["Index Cond"]
			walk := n["Node Type"] == "Seq Scan" ||
				(n["Node Type"] == "Index Scan" || n["Node Type"] == "Index Only Scan") && index != "jobs_route_idx" && !bounded
			if walk {
				out, _ := json.MarshalIndent(plan, "", " ")
				t.Errorf("%s: JobRouteAbsent walks jobs by a %v %q, want the routed jobs' index:\n%s", mode, n["Node Type"], index, out)
			}
		})
	}
}
