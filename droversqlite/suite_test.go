package droversqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverdriver/droverdrivertest"
	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/internal/maintenance"
)

// TestSuite runs the driver suite, each test on a file of its own.
func TestSuite(t *testing.T) {
	t.Parallel()
	droverdrivertest.Exercise(t, droverdrivertest.Factory[*sql.Tx]{
		Open: func(t *testing.T) droverdriver.TxDriver[*sql.Tx] {
			d, err := droversqlite.Open(context.Background(), filepath.Join(t.TempDir(), "drover.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = d.Close() })
			return d
		},
		Begin: func(ctx context.Context, d droverdriver.TxDriver[*sql.Tx]) (*sql.Tx, error) {
			return d.(*droversqlite.Driver).DB().BeginTx(ctx, nil)
		},
		Commit:   func(_ context.Context, tx *sql.Tx) error { return tx.Commit() },
		Rollback: func(_ context.Context, tx *sql.Tx) error { return tx.Rollback() },
	})
}

// BenchmarkRetention measures retention's removals in chunks of the
// retainer's default size (droverdrivertest.BenchmarkRetention).
func BenchmarkRetention(b *testing.B) {
	droverdrivertest.BenchmarkRetention(b, func(b *testing.B) droverdriver.Driver {
		d, err := droversqlite.Open(context.Background(), filepath.Join(b.TempDir(), "drover.db"))
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
