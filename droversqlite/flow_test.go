package droversqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// TestFlowMigrationKeepsJobsAndIDs: migration 002 rebuilds the hot table
// (SQLite cannot change a CHECK constraint). Waiting jobs must survive it,
// and a new job must not get the ID of one that finished before it.
func TestFlowMigrationKeepsJobsAndIDs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := open(t, filepath.Join(t.TempDir(), "drover.db"))
	err := d.MigrateTx(ctx, func(ctx context.Context, m droverdriver.Migrator) error {
		return m.Apply(ctx, d.Migrations()[0])
	})
	if err != nil {
		t.Fatal(err)
	}
	db := d.DB()
	for _, q := range []string{
		`INSERT INTO drover_jobs (queue, kind, args, max_attempts, created_at, run_at) VALUES ('q', 'k', '{"n":1}', 3, 1, 1), ('q', 'k', '{"n":2}', 3, 1, 1), ('q', 'k', '{"n":3}', 3, 1, 1)`,
		// The newest job finished: the hot table's highest ID is now 2.
		`INSERT INTO drover_finished_jobs (id, state, queue, kind, priority, attempt, max_attempts, timeout_ms, created_at, run_at, finalized_at, tags, metadata, args)
		 SELECT id, 'completed', queue, kind, priority, 1, max_attempts, timeout_ms, created_at, run_at, 2, tags, metadata, args FROM drover_jobs WHERE id = 3`,
		`DELETE FROM drover_jobs WHERE id = 3`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	migrate(t, d)

	got := insert(t, d.Executor(), job("q"))
	if got[0] != 4 {
		t.Fatalf("new job got ID %d after the rebuild, want 4 (3 is taken by a finished job)", got[0])
	}
	for _, id := range []int64{1, 2} {
		j := get(t, d.Executor(), id)
		if j.State != drovertype.JobStateAvailable || j.Queue != "q" || string(j.EncodedArgs) != `{"n":`+string(rune('0'+id))+`}` {
			t.Fatalf("job %d after the migration = %+v", id, j)
		}
	}
	if j := get(t, d.Executor(), 3); j.State != drovertype.JobStateCompleted {
		t.Fatalf("finished job 3 = %+v", j)
	}
	claimed := claim(t, d.Executor(), "q", 10, 0)
	if len(claimed) != 3 || claimed[0].Flow != 0 || claimed[0].BatchID != 0 {
		t.Fatalf("claimed %d jobs after the migration: %+v", len(claimed), claimed)
	}
}
