package droverpg_test

import (
	"context"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/engine"
)

// TestNotificationsFollowCommits checks, with a real listener, that every
// statement that makes jobs available wakes their queue: an insert, the
// finish that promotes a key's next job, and the finish that releases a
// workflow step. An insert into a caller's transaction wakes nobody before
// that transaction commits.
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
	job := func(queue, key string) droverdriver.InsertParams {
		return droverdriver.InsertParams{Queue: queue, Kind: "k", Args: []byte(`{}`), MaxAttempts: 3, Key: key, KeyLimit: 1}
	}
	finish := func(t *testing.T, queue string) {
		t.Helper()
		rows, err := d.JobClaim(ctx, droverdriver.ClaimParams{Queue: queue, Max: 1, Owner: "w", Lease: time.Minute})
		if err != nil || len(rows) != 1 {
			t.Fatalf("claim: %d rows, %v", len(rows), err)
		}
		r := rows[0]
		if _, err := engine.Finish(ctx, d, []droverdriver.Result{{ID: r.ID, Attempt: r.Attempt, LeaseToken: r.LeaseToken, Outcome: droverdriver.OutcomeCompleted,
			Flow: r.Flow, Key: r.Key, Queue: r.Queue}}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("insert", func(t *testing.T) {
		if _, err := d.JobInsertMany(ctx, []droverdriver.InsertParams{job("plain", "")}); err != nil {
			t.Fatal(err)
		}
		expect(t, "plain")
	})
	t.Run("insert in a caller's transaction", func(t *testing.T) {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if _, err := d.UnwrapExecutor(tx).JobInsertMany(ctx, []droverdriver.InsertParams{job("intx", "")}); err != nil {
			t.Fatal(err)
		}
		quiet(t, "intx")
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		expect(t, "intx")
	})
	t.Run("key promoted by a finish", func(t *testing.T) {
		if _, err := d.JobInsertMany(ctx, []droverdriver.InsertParams{job("keyed", "a"), job("keyed", "a")}); err != nil {
			t.Fatal(err)
		}
		expect(t, "keyed")
		finish(t, "keyed") // promotes the second job, blocked until now
		expect(t, "keyed")
		rows, err := d.JobClaim(ctx, droverdriver.ClaimParams{Queue: "keyed", Max: 1, Owner: "w", Lease: time.Minute})
		if err != nil || len(rows) != 1 {
			t.Fatalf("claim of the promoted job: %d rows, %v", len(rows), err)
		}
	})
	t.Run("workflow step released by a finish", func(t *testing.T) {
		parent := droverdriver.FlowJob{InsertParams: job("parent", "")}
		child := droverdriver.FlowJob{InsertParams: job("child", ""), After: []int{0}}
		if _, err := d.JobInsertFlow(ctx, droverdriver.FlowInsertParams{Jobs: []droverdriver.FlowJob{parent, child}}); err != nil {
			t.Fatal(err)
		}
		expect(t, "parent")
		finish(t, "parent")
		expect(t, "child")
	})
	// Last: the driver is closed afterwards.
	t.Run("insert just before Close", func(t *testing.T) {
		if _, err := d.JobInsertMany(ctx, []droverdriver.InsertParams{job("closing", "")}); err != nil {
			t.Fatal(err)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		expect(t, "closing")
	})
}
