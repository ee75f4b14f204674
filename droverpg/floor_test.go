package droverpg_test

import (
	"context"
	"testing"

	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/internal/testdb"
)

func TestFloorMeasuresAndCleansUp(t *testing.T) {
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
	rate, err := d.Floor(ctx, 5_000, 500, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rate <= 0 {
		t.Fatalf("rate = %v", rate)
	}
	var exists bool
	if err := pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", schema+".floor_jobs").Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Fatal("scratch table left behind")
	}
}
