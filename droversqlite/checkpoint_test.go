package droversqlite

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// TestCheckpointsBesideTheWriter checks that the writer's commits leave
// checkpoints to the driver's own goroutine (their threshold is the
// backstop) and that the goroutine copies the log into the database file
// while the driver is open, with no commit past the backstop.
func TestCheckpointsBesideTheWriter(t *testing.T) {
	ctx := context.Background()
	d, path := setupFile(t)
	var pages int
	if err := d.writer.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if pages != checkpointBackstop {
		t.Fatalf("the writer checkpoints past %d pages, want the backstop %d", pages, checkpointBackstop)
	}

	// About 24 MB of jobs: well past SQLite's own threshold of 1,000
	// pages, well short of the backstop.
	args := []byte(`{"pad":"` + strings.Repeat("x", 2000) + `"}`)
	for range 12 {
		batch := make([]droverdriver.InsertParams, 1000)
		for i := range batch {
			batch[i] = job("q")
			batch[i].Args = args
		}
		insert(t, d.Executor(), batch...)
	}
	const want = 20 << 20
	var size int64
	waitfor.Cond(t, "the jobs checkpointed into the database file", func() bool {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		size = fi.Size()
		return size >= want
	})
}
