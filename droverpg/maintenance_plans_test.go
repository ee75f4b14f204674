package droverpg_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/stmtplan"
)

// TestExplainMaintenance checks that every maintenance statement is
// planned and run, and that running them changed nothing: a job whose
// lease expired, which the rescue finds, is still running afterwards, and
// a finished job past retention, which the pruning finds, is still there.
func TestExplainMaintenance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := migrated(t)
	jobs := pgx.Identifier{d.Schema(), "jobs"}.Sanitize()
	finished := pgx.Identifier{d.Schema(), "finished_jobs"}.Sanitize()
	for _, sql := range []string{
		`INSERT INTO ` + jobs + ` (queue, kind, args, max_attempts, state, attempt, attempted_at, lease_owner, lease_expires_at)
			VALUES ('q', 'k', '{}', 25, 'running', 1, now() - interval '2 minutes', 'gone', now() - interval '1 minute')`,
		`INSERT INTO ` + finished + ` (id, state, queue, kind, priority, args, metadata, tags, attempt, max_attempts, timeout_ms, created_at, run_at, finalized_at)
			VALUES (1000000, 'completed', 'q', 'k', 0, '{}', '{}', '{}', 1, 25, 0, now() - interval '3 days', now() - interval '3 days', now() - interval '2 days')`,
	} {
		if _, err := d.Pool().Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	plans, err := d.Executor().(stmtplan.Explainer).ExplainMaintenance(ctx, stmtplan.MaintenanceParams{
		Prune: droverdriver.PruneParams{Now: now, Limit: 10_000, CompletedRetention: drover.CompletedRetentionDefault,
			CancelledRetention: drover.CancelledRetentionDefault, DiscardedRetention: drover.DiscardedRetentionDefault},
		WorkerForgetBefore: now.Add(-time.Hour),
	})
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]float64{}
	for _, p := range plans {
		var out []struct {
			Plan struct {
				Rows float64 `json:"Actual Rows"`
			} `json:"Plan"`
			Execution *float64 `json:"Execution Time"`
		}
		if err := json.Unmarshal(p.Explain, &out); err != nil || len(out) != 1 || out[0].Execution == nil {
			t.Fatalf("%s: not one analysed plan (%v): %s", p.Statement, err, p.Explain)
		}
		if p.Pass == "" || p.Wall <= 0 {
			t.Errorf("%s: pass %q, wall %s", p.Statement, p.Pass, p.Wall)
		}
		rows[p.Statement] = out[0].Plan.Rows
	}
	for _, name := range []string{"JobRescue", "KeyBlocked", "KeyRateIdle", "JobRouteAbsent", "WorkerPrune",
		"TopicGenerations", "TopicGenerationTopics", "TopicGenerationLock", "JobPrune"} {
		if _, ok := rows[name]; !ok {
			t.Errorf("%s was not planned: %v", name, rows)
		}
	}
	if rows["JobRescue"] != 1 || rows["JobPrune"] != 1 {
		t.Errorf("the rescue returned %v rows and the pruning counted %v, want the expired job and the old one", rows["JobRescue"], rows["JobPrune"])
	}
	var state string
	var kept int
	if err := d.Pool().QueryRow(ctx, `SELECT (SELECT state FROM `+jobs+`), (SELECT count(*) FROM `+finished+`)`).Scan(&state, &kept); err != nil {
		t.Fatal(err)
	}
	if state != "running" || kept != 1 {
		t.Errorf("after the plans: job %s, %d finished jobs; want running and 1, as before", state, kept)
	}
}
