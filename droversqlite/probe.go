package droversqlite

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/droverhq/drover/droverdriver"
)

// MinFreeBytesDefault is the free disk space under which ProbeWrite
// reports the store unable to write: a few of the largest requests (8 MiB
// each) and the WAL's growth until the next checkpoint.
const MinFreeBytesDefault = 32 << 20

// WithMinFreeBytes sets the free space on the database file's disk under
// which ProbeWrite fails (MinFreeBytesDefault unless set).
func WithMinFreeBytes(n int64) Option {
	return func(d *Driver) { d.minFree = n }
}

var _ droverdriver.WriteProber = (*Driver)(nil)

// ProbeWrite checks that the store can take writes, for readiness checks.
// It takes the write lock and changes the schema in a transaction that is
// rolled back, which fails on a read-only file or a lock held too long;
// and it reads the free space of the file's disk, since a transaction
// that is rolled back never reaches the disk, and SQLite only finds the
// disk full when a commit appends to the WAL.
func (d *Driver) ProbeWrite(ctx context.Context) error {
	if err := d.ready(ctx); err != nil {
		return err
	}
	tx, err := d.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin a write: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // the probe is never meant to commit
	if _, err := tx.ExecContext(ctx, "CREATE TABLE "+d.schema+"_write_probe (x)"); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	var file string
	if err := tx.QueryRowContext(ctx, "SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&file); err != nil {
		return fmt.Errorf("find the database file: %w", err)
	}
	if file == "" { // in memory: no disk to fill
		return nil
	}
	free, ok, err := freeBytes(filepath.Dir(file))
	if err != nil {
		return fmt.Errorf("read the disk's free space: %w", err)
	}
	if min := d.minFreeBytes(); ok && free < uint64(min) {
		return fmt.Errorf("the database's disk has %d bytes free, under the minimum of %d", free, min)
	}
	return nil
}

func (d *Driver) minFreeBytes() int64 {
	if d.minFree > 0 {
		return d.minFree
	}
	return MinFreeBytesDefault
}
