package droverpg_test

import (
	"context"
	"testing"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/internal/testkit/testdb"
)

// migrated returns a driver on a pool and schema of its own, migrated to
// the latest version; its pool is d.Pool(). The driver is closed when the
// test ends, before its pool.
func migrated(t *testing.T) *droverpg.Driver {
	t.Helper()
	d, err := droverpg.New(testdb.NewPool(t), droverpg.WithSchema(testdb.NewSchema(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if _, err := drover.Migrate(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	return d
}
