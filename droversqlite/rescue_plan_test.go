package droversqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// TestJobRescuePlan asks SQLite how the leader's rescue pass, run every
// rescue interval, finds expired leases with a backlog of 100,000 jobs
// waiting (issue 36): through the index of running rows, whose size is the
// workers' slots, never by a scan of the hot table. It also runs the pass
// and checks that it took back exactly the expired leases.
func TestJobRescuePlan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := open(t, filepath.Join(t.TempDir(), "rescue.db"))
	migrate(t, d)
	now := time.Now()
	for _, sql := range []string{
		`WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 100000)
			INSERT INTO drover_jobs (id, queue, kind, max_attempts, created_at, run_at, args)
			SELECT i, 'q', 'k', 25, 0, 0, '{}' FROM g`,
		// Twenty running jobs, ten of them with an expired lease.
		`UPDATE drover_jobs SET state = 'running', attempt = 1, attempted_at = ?1, lease_owner = 'w', lease_token = randomblob(16),
			lease_expires_at = CASE WHEN id % 10000 = 0 THEN ?1 - 60000000 ELSE ?1 + 3600000000 END
			WHERE id % 5000 = 0`,
	} {
		if _, err := d.writer.ExecContext(ctx, sql, micros(now)); err != nil {
			t.Fatal(err)
		}
	}
	p := rescueMarkParams{Now: micros(now), Limit: 10_000, At: micros(now), AtText: now.Format(time.RFC3339Nano)}
	plan := explain(t, d, jobRescueMark.name, jobRescueMark.args(&p)...)
	t.Logf("\n%s", plan)
	if !strings.Contains(plan, "drover_jobs USING INDEX drover_jobs_running_idx") {
		t.Errorf("JobRescueMark does not find the running jobs by drover_jobs_running_idx:\n%s", plan)
	}
	for _, line := range strings.Split(plan, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "SCAN drover_jobs") && !strings.Contains(line, "USING INDEX drover_jobs_running_idx") {
			t.Errorf("JobRescueMark scans the hot table: %s", line)
		}
	}
	got, err := d.Executor().JobRescue(ctx, droverdriver.RescueParams{Now: now, Limit: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 {
		t.Fatalf("the rescue took back %d leases, want the 10 that expired", len(got))
	}
	for _, r := range got {
		if r.ID%10_000 != 0 || r.State != drovertype.JobStateAvailable {
			t.Errorf("rescued job %d to %q, want only the expired ones (IDs of 10,000s) back to available", r.ID, r.State)
		}
	}
}
