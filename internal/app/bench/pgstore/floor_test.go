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
// would never end), calls loopStarts once and drops its scratch table.
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
			starts := 0
			rate, err := s.Floor(ctx, 5_000, 500, 4, complete, func() { starts++ })
			if err != nil {
				t.Fatal(err)
			}
			if rate <= 0 || starts != 1 {
				t.Fatalf("rate = %v, loop started %d times", rate, starts)
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
