package droverpg_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverdriver/droverdrivertest"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/internal/maintenance"
	"github.com/droverhq/drover/internal/testkit/testdb"
)

// TestSuite runs the driver suite, each test in a schema of its own on
// one pool.
func TestSuite(t *testing.T) {
	pool := testdb.NewPool(t)
	droverdrivertest.Exercise(t, droverdrivertest.Factory[pgx.Tx]{
		Open: func(t *testing.T) droverdriver.TxDriver[pgx.Tx] {
			d, err := droverpg.New(pool, droverpg.WithSchema(testdb.NewSchema(t)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = d.Close() })
			return d
		},
		Begin:    func(ctx context.Context, _ droverdriver.TxDriver[pgx.Tx]) (pgx.Tx, error) { return pool.Begin(ctx) },
		Commit:   func(ctx context.Context, tx pgx.Tx) error { return tx.Commit(ctx) },
		Rollback: func(ctx context.Context, tx pgx.Tx) error { return tx.Rollback(ctx) },
	})
}

// BenchmarkRetention measures retention's removals in chunks of the
// retainer's default size (droverdrivertest.BenchmarkRetention).
func BenchmarkRetention(b *testing.B) {
	pool := testdb.NewPool(b)
	droverdrivertest.BenchmarkRetention(b, func(b *testing.B) droverdriver.Driver {
		d, err := droverpg.New(pool, droverpg.WithSchema(testdb.NewSchema(b)))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = d.Close() })
		if _, err := drover.Migrate(context.Background(), d); err != nil {
			b.Fatal(err)
		}
		return d
	}, maintenance.RemoveChunkDefault)
}
