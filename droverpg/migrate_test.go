package droverpg_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/internal/engine"
	"github.com/droverhq/drover/internal/testkit/testdb"
)

// applyUpTo applies d's migrations not applied yet up to version last.
func applyUpTo(t *testing.T, d *droverpg.Driver, last int) {
	t.Helper()
	if _, _, err := droverdriver.MigrateUpTo(context.Background(), d, last); err != nil {
		t.Fatal(err)
	}
}

// TestMigrationKeepsUniqueKeys stores an unfinished unique job the way
// migration 003 did (the key on the hot row), applies migration 004 and
// the ones after it, and checks that the job still holds its key, is flagged so at claim, and
// gives the key up when it completes.
func TestMigrationKeepsUniqueKeys(t *testing.T) {
	ctx := context.Background()
	schema := testdb.NewSchema(t)
	d, err := droverpg.New(testdb.NewPool(t), droverpg.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	applyUpTo(t, d, 3)
	const key = "noop\x1fk"
	jobs := pgx.Identifier{schema, "jobs"}.Sanitize()
	if _, err := d.Pool().Exec(ctx, `INSERT INTO `+jobs+` (queue, kind, args, max_attempts, unique_key)
		VALUES ('default', 'noop', '{}', 3, $1)`, key); err != nil {
		t.Fatal(err)
	}
	// Migration 004 moves the key; the later ones must keep it where it is.
	applyUpTo(t, d, droverdriver.LatestVersion(d))
	dup := droverdriver.InsertParams{Queue: "default", Kind: "noop", Args: []byte(`{}`), MaxAttempts: 3, UniqueKey: key}
	if ids, err := d.Executor().JobInsertMany(ctx, []droverdriver.InsertParams{dup}); err != nil || ids[0] != 0 {
		t.Fatalf("insert of a key held before the migration: %v, %v; want skipped", ids, err)
	}
	claimed, err := d.Executor().JobClaim(ctx, droverdriver.ClaimParams{Queue: "default", Max: 10, Owner: "w", Lease: time.Minute})
	if err != nil || len(claimed) != 1 || claimed[0].Flow&droverdriver.FlowUnique == 0 {
		t.Fatalf("claimed %+v, %v; want the old unique job flagged unique", claimed, err)
	}
	c := claimed[0]
	if _, err := engine.Finish(ctx, d.Executor(), []droverdriver.Result{{ID: c.ID, Attempt: c.Attempt, LeaseToken: c.LeaseToken, Outcome: droverdriver.OutcomeCompleted, Flow: c.Flow}}); err != nil {
		t.Fatal(err)
	}
	if ids, err := d.Executor().JobInsertMany(ctx, []droverdriver.InsertParams{dup}); err != nil || ids[0] == 0 {
		t.Fatalf("insert after the old unique job completed: %v, %v; want stored", ids, err)
	}
}
