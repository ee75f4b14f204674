package droverpg_test

import (
	"context"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
)

// TestNotificationsFollowCommits checks, with a real listener, that an
// insert into a caller's transaction wakes nobody before that transaction
// commits, and that an insert just before Close still wakes its queue.
// The driver suite checks which statements wake (insert, the finish that
// promotes a key or releases a workflow step); SQLite wakes before the
// commit, so this stricter order is PostgreSQL's own.
func TestNotificationsFollowCommits(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := migrated(t)
	pool := d.Pool()
	heard := make(chan string, 100)
	connected := make(chan struct{})
	go func() {
		_ = d.NewListener().Listen(ctx, func() { close(connected) }, func(q string) int { heard <- q; return 1 })
	}()
	<-connected
	expect := func(t *testing.T, queue string) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case q := <-heard:
				if q == queue {
					return
				}
			case <-deadline:
				t.Fatalf("no notification for queue %q", queue)
			}
		}
	}
	quiet := func(t *testing.T, queue string) {
		t.Helper()
		deadline := time.After(200 * time.Millisecond)
		for {
			select {
			case q := <-heard:
				if q == queue {
					t.Fatalf("notification for queue %q before its jobs were visible", queue)
				}
			case <-deadline:
				return
			}
		}
	}
	job := func(queue string) droverdriver.InsertParams {
		return droverdriver.InsertParams{Queue: queue, Kind: "k", Args: []byte(`{}`), MaxAttempts: 3}
	}

	t.Run("insert in a caller's transaction", func(t *testing.T) {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if _, err := d.UnwrapExecutor(tx).JobInsertMany(ctx, []droverdriver.InsertParams{job("intx")}); err != nil {
			t.Fatal(err)
		}
		quiet(t, "intx")
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		expect(t, "intx")
	})
	// Last: the driver is closed afterwards.
	t.Run("insert just before Close", func(t *testing.T) {
		if _, err := d.Executor().JobInsertMany(ctx, []droverdriver.InsertParams{job("closing")}); err != nil {
			t.Fatal(err)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		expect(t, "closing")
	})
}
