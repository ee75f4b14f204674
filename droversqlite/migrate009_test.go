package droversqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// TestMigration009CapsErrorsAndScopesUniqueKeys: the PostgreSQL test of the
// same name, on SQLite.
func TestMigration009CapsErrorsAndScopesUniqueKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := open(t, filepath.Join(t.TempDir(), "m.db"))
	if err := applyUpTo(ctx, d, 8); err != nil {
		t.Fatal(err)
	}
	errs := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`{"attempt":%d,"error":"e%d"}`, i+1, i+1)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	now := micros(time.Now())
	for _, q := range []string{
		`INSERT INTO drover_jobs (id, queue, kind, args, max_attempts, attempt, errors, created_at, run_at)
			VALUES (1, 'q', 'k', '{}', 99, 30, '` + errs(30) + `', ?1, ?1)`,
		`INSERT INTO drover_finished_jobs (id, state, queue, kind, priority, timeout_ms, tags, metadata, args, max_attempts,
			attempt, errors, created_at, run_at, finalized_at)
			VALUES (2, 'discarded', 'q', 'k', 1, 0, '[]', '{}', '{}', 3, 3, '` + errs(3) + `', ?1, ?1, ?1)`,
		`INSERT INTO drover_jobs (id, queue, kind, args, max_attempts, flow, created_at, run_at) VALUES (3, 'q', 'u', '{}', 3, 8, ?1, ?1)`,
		`INSERT INTO drover_unique_keys (job_id, unique_key) VALUES (3, 'u` + "\x1f" + `k')`,
		`INSERT INTO sqlite_sequence (name, seq) VALUES ('drover_jobs', 3)`,
	} {
		if _, err := d.writer.ExecContext(ctx, q, now); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	migrate(t, d)

	for _, c := range []struct {
		id          int64
		count, kept int
	}{{1, 30, drovertype.ErrorsKept}, {2, 3, 3}} {
		j := get(t, d.Executor(), c.id)
		got := j.Errors
		if j.ErrorCount != c.count || len(got) != c.kept || got[len(got)-1].Attempt != c.count || got[0].Attempt != c.count-c.kept+1 {
			t.Fatalf("job %d: %d errors counted, kept attempts %v; want %d counted and the last %d kept", c.id, j.ErrorCount, got, c.count, c.kept)
		}
	}
	var kind string
	if err := d.writer.QueryRowContext(ctx, `SELECT kind FROM drover_unique_keys WHERE job_id = 3 AND held`).Scan(&kind); err != nil || kind != "u" {
		t.Fatalf("unique key of job 3 held under kind %q, %v; want u", kind, err)
	}
	dup := droverdriver.InsertParams{Queue: "other", Kind: "u", Args: []byte(`{}`), MaxAttempts: 3, UniqueKey: "u\x1fk"}
	if ids := insert(t, d.Executor(), dup); ids[0] != 0 {
		t.Fatalf("insert of a key held before the migration stored job %d", ids[0])
	}
}
