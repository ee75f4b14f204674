package droversqlite

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// SQLite copies the write-ahead log back into the database file in
// checkpoints. Left to itself it runs one inside the commit that takes the
// log past wal_autocheckpoint pages (1,000 by default), and that commit
// does not return until the pages are copied and the file is synced: on
// this driver's one writer connection every insert, claim and completion
// queued behind it waited too, some 15 ms each time (start latency p99 at
// 1,000 jobs/s: 15 ms with those checkpoints, 2.8 ms with the goroutine
// below; docs/benchmarks.md). So a file
// opened with Open checkpoints from a goroutine of its own, on a read
// connection, in PASSIVE mode: it copies what no reader still needs
// without taking any lock a writer or reader waits for, and the writer's
// next commit restarts the log once all of it is copied. The commit-time
// checkpoint stays as a backstop at checkpointBackstop pages, for a log
// that grows faster than the goroutine copies it.

// checkpointEvery is how often the goroutine checkpoints. A checkpoint of
// a log with nothing new reads a header and returns; one with new pages
// copies and syncs only those, so a short interval keeps each one small.
const checkpointEvery = 100 * time.Millisecond

// checkpointBackstop is the log size, in pages, at which a commit
// checkpoints after all (wal_autocheckpoint): 10,000 pages of 16 KiB.
const checkpointBackstop = 10000

// checkpointer runs PASSIVE checkpoints on db until stop is called.
type checkpointer struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func startCheckpointer(db *sql.DB) *checkpointer {
	ctx, cancel := context.WithCancel(context.Background())
	c := &checkpointer{cancel: cancel}
	c.wg.Go(func() {
		t := time.NewTicker(checkpointEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			// An error (another process's checkpoint under way, a file
			// gone away) is left to the next tick and to the backstop;
			// a failing store shows in its statements, not here.
			_, _ = db.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
		}
	})
	return c
}

// stop ends the goroutine and waits for a checkpoint under way.
func (c *checkpointer) stop() {
	if c == nil {
		return
	}
	c.cancel()
	c.wg.Wait()
}
