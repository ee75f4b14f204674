package droverpg_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/internal/testkit/testdb"
)

// TestMigration010MarksKeyedJobs stores, under migration 009, a keyed job
// and a plain one with workflow bits, applies migration 010 and checks that
// the keyed job carries FlowKeyed on top of its bits and the plain one is
// left as it was.
func TestMigration010MarksKeyedJobs(t *testing.T) {
	ctx := context.Background()
	schema := testdb.NewSchema(t)
	d, err := droverpg.New(testdb.NewPool(t), droverpg.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	applyUpTo(t, d, 9)
	jobs := pgx.Identifier{schema, "jobs"}.Sanitize()
	for _, q := range []string{
		`INSERT INTO ` + jobs + ` (id, queue, kind, args, max_attempts, ordering_key, key_limit, flow) VALUES (1, 'q', 'k', '{}', 3, 'key', 1, 8)`,
		`INSERT INTO ` + jobs + ` (id, queue, kind, args, max_attempts, flow) VALUES (2, 'q', 'k', '{}', 3, 2)`,
	} {
		if _, err := d.Pool().Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	applyUpTo(t, d, droverdriver.LatestVersion(d))
	for id, want := range map[int64]int{1: droverdriver.FlowUnique | droverdriver.FlowKeyed, 2: droverdriver.FlowHasDependants} {
		var flow int
		if err := d.Pool().QueryRow(ctx, `SELECT flow FROM `+jobs+` WHERE id = $1`, id).Scan(&flow); err != nil || flow != want {
			t.Fatalf("job %d: flow %d, %v; want %d", id, flow, err, want)
		}
	}
}
