package droverpg

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/jackc/pgx/v5"
)

// TestJobRescuePlan checks the leader's rescue pass on a hot table with a
// backlog waiting, the shape the backlog sweep found it slow on (issue 36:
// about half a second a pass with a million jobs waiting): the pass, run
// every rescue interval, must find the running jobs through the index of
// running rows, whose size is the workers' slots, and reach the rows it
// changes by key, never read the waiting jobs. It also runs the pass and
// checks that it took back exactly the expired leases.
func TestJobRescuePlan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := migrated(t)
	table := pgx.Identifier{d.Schema(), "jobs"}.Sanitize()
	now := time.Now()
	for _, sql := range []string{
		`INSERT INTO ` + table + ` (queue, kind, args, max_attempts)
			SELECT 'q', 'k', jsonb_build_object('pad', repeat('x', 300)), 25 FROM generate_series(1, 100000)`,
		// Twenty running jobs, ten of them with an expired lease.
		`UPDATE ` + table + ` SET state = 'running', attempt = 1, attempted_at = now(), lease_owner = 'w',
			lease_token = gen_random_uuid(),
			lease_expires_at = CASE WHEN id % 10000 = 0 THEN now() - interval '1 minute' ELSE now() + interval '1 hour' END
			WHERE id % 5000 = 0`,
		`ANALYZE ` + table,
	} {
		if _, err := d.Pool().Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	args := []any{now, 10_000}
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		plan := explain(t, d, mode, d.exec.q[jobRescue.name], args)
		var running bool
		walkPlan(plan["Plan"].(map[string]any), func(n map[string]any) {
			// ModifyTable nodes write the rows their children read.
			if n["Relation Name"] != "jobs" || n["Node Type"] == "ModifyTable" {
				return
			}
			index, _ := n["Index Name"].(string)
			_, bounded := n["Index Cond"]
			running = running || index == "jobs_running_idx"
			if index != "jobs_running_idx" && !bounded {
				out, _ := json.MarshalIndent(plan, "", " ")
				t.Errorf("%s: JobRescue reads jobs by a %v %q, want the running jobs' index and lookups by key:\n%s", mode, n["Node Type"], index, out)
			}
		})
		if !running {
			t.Errorf("%s: JobRescue does not read jobs_running_idx", mode)
		}
		if _, jit := plan["JIT"]; jit {
			t.Errorf("%s: JobRescue is compiled by JIT on every pass", mode)
		}
	}
	rows, err := d.Executor().JobRescue(ctx, droverdriver.RescueParams{Now: now, Limit: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 10 {
		t.Fatalf("the rescue took back %d leases, want the 10 that expired", len(rows))
	}
	for _, r := range rows {
		if r.ID%10_000 != 0 || r.State != drovertype.JobStateAvailable {
			t.Errorf("rescued job %d to %q, want only the expired ones (IDs of 10,000s) back to available", r.ID, r.State)
		}
	}
}
