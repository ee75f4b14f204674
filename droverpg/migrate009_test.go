package droverpg_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/testkit/testdb"
)

// TestMigration009CapsErrorsAndScopesUniqueKeys stores, under migration
// 008, a waiting job with 30 errors, a finished one with 3, and a unique
// job, applies migration 009 and checks that the long history is cut to
// the last drovertype.ErrorsKept with every error counted, the short one kept
// whole, and the unique key held under its job's kind.
func TestMigration009CapsErrorsAndScopesUniqueKeys(t *testing.T) {
	ctx := context.Background()
	schema := testdb.NewSchema(t)
	d, err := droverpg.New(testdb.NewPool(t), droverpg.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	applyUpTo(t, d, 8)
	errs := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`{"attempt":%d,"error":"e%d"}`, i+1, i+1)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	jobs := pgx.Identifier{schema, "jobs"}.Sanitize()
	finished := pgx.Identifier{schema, "finished_jobs"}.Sanitize()
	keys := pgx.Identifier{schema, "unique_keys"}.Sanitize()
	for _, q := range []string{
		`INSERT INTO ` + jobs + ` (id, queue, kind, args, max_attempts, attempt, errors) VALUES (1, 'q', 'k', '{}', 99, 30, '` + errs(30) + `')`,
		`INSERT INTO ` + finished + ` (id, state, queue, kind, priority, args, metadata, tags, max_attempts, attempt, errors,
			timeout_ms, created_at, run_at, finalized_at) VALUES (2, 'discarded', 'q', 'k', 1, '{}', '{}', '{}', 3, 3, '` + errs(3) + `', 0, now(), now(), now())`,
		`INSERT INTO ` + jobs + ` (id, queue, kind, args, max_attempts, flow) VALUES (3, 'q', 'u', '{}', 3, 8)`,
		`INSERT INTO ` + keys + ` (job_id, unique_key) VALUES (3, 'u` + "\x1f" + `k')`,
	} {
		if _, err := d.Pool().Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	applyUpTo(t, d, droverdriver.LatestVersion(d))

	for _, c := range []struct {
		id          int64
		count, kept int
	}{{1, 30, drovertype.ErrorsKept}, {2, 3, 3}} {
		j, err := d.Executor().JobGet(ctx, c.id)
		if err != nil {
			t.Fatal(err)
		}
		got := j.Errors
		if j.ErrorCount != c.count || len(got) != c.kept || got[len(got)-1].Attempt != c.count || got[0].Attempt != c.count-c.kept+1 {
			t.Fatalf("job %d: %d errors counted, kept attempts %v; want %d counted and the last %d kept", c.id, j.ErrorCount, got, c.count, c.kept)
		}
	}
	var kind string
	if err := d.Pool().QueryRow(ctx, `SELECT kind FROM `+keys+` WHERE job_id = 3 AND held`).Scan(&kind); err != nil || kind != "u" {
		t.Fatalf("unique key of job 3 held under kind %q, %v; want u", kind, err)
	}
	dup := droverdriver.InsertParams{Queue: "other", Kind: "u", Args: []byte(`{}`), MaxAttempts: 3, UniqueKey: "u\x1fk"}
	if ids, err := d.Executor().JobInsertMany(ctx, []droverdriver.InsertParams{dup}); err != nil || ids[0] != 0 {
		t.Fatalf("insert of a key held before the migration: %v, %v; want skipped", ids, err)
	}
}
