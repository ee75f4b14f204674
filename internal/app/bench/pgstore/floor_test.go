package pgstore_test

import (
	"context"
	"testing"

	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/internal/app/bench/pgstore"
	"github.com/droverhq/drover/internal/testkit/testdb"
)

// TestFloorMeasuresAndCleansUp runs both floors, deleting and marking
// completed: each works off its rows (a loop that reclaimed completed rows
// would never end), calls loopStarts once, after a checkpoint that follows
// the scratch table's last write (as Drover's work-off starts after one:
// no side pays for whole pages the other does not), and drops its scratch
// table.
func TestFloorMeasuresAndCleansUp(t *testing.T) {
	for _, complete := range []bool{false, true} {
		t.Run(map[bool]string{false: "delete", true: "complete"}[complete], func(t *testing.T) {
			ctx := context.Background()
			pool := testdb.NewPool(t)
			schema := testdb.NewSchema(t)
			if _, err := pool.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
				t.Fatal(err)
			}
			d, err := droverpg.New(pool, droverpg.WithSchema(schema))
			if err != nil {
				t.Fatal(err)
			}
			s, ok := pgstore.Of(d)
			if !ok {
				t.Fatal("a PostgreSQL driver is not a PostgreSQL store")
			}
			if _, err := pool.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pageinspect"); err != nil {
				t.Fatal(err)
			}
			starts := 0
			var unsettled bool
			rate, err := s.Floor(ctx, 5_000, 500, 4, complete, func() {
				starts++
				// Every page of the table was last written before the
				// latest checkpoint began.
				err := pool.QueryRow(ctx, `SELECT max((page_header(get_raw_page($1::text, b::int))).lsn) >= (pg_control_checkpoint()).redo_lsn
					FROM generate_series(0, pg_relation_size($1::text::regclass) / current_setting('block_size')::int - 1) b`,
					schema+".floor_jobs").Scan(&unsettled)
				if err != nil {
					t.Error(err)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if rate <= 0 || starts != 1 {
				t.Fatalf("rate = %v, loop started %d times", rate, starts)
			}
			if unsettled {
				t.Error("the floor's loop started on pages written since the last checkpoint")
			}
			var exists bool
			if err := pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", schema+".floor_jobs").Scan(&exists); err != nil {
				t.Fatal(err)
			}
			if exists {
				t.Fatal("scratch table left behind")
			}
		})
	}
}
