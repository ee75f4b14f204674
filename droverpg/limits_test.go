package droverpg

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// TestRateBucketClock checks the clock a rated queue's bucket keeps: each
// claim spends its tokens at the start it gives its jobs (attempted_at),
// plain or strict, and a claim that waited for the queue's lock behind
// another refills from the clock it read under the lock, never moving the
// bucket's time back. A bucket that ran behind the starts it paid for, or
// went back in time, let more jobs start in a period than a full bucket
// and one period's refill (TestQueueRateLimit, once 43 of 42).
func TestRateBucketClock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := migrated(t)
	e := d.exec
	// A bucket of 1,000 an hour: the claims below never run it dry, so
	// each reads only the clock.
	limit := &drovertype.QueueLimit{Rate: 1000, Period: time.Hour}
	strict := 10
	for _, s := range []droverdriver.QueueSettingsSetParams{{Queue: "q", Limit: limit}, {Queue: "s", Limit: limit, Strict: &strict}} {
		if _, err := e.QueueSettingsSet(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{"q", "q", "s", "s"} {
		if _, err := e.JobInsert(ctx, droverdriver.InsertParams{Queue: q, Kind: "k", Args: []byte(`{}`), MaxAttempts: 1}); err != nil {
			t.Fatal(err)
		}
	}
	refilledAt := func(t *testing.T, db interface {
		QueryRow(context.Context, string, ...any) pgx.Row
	}, queue string) time.Time {
		t.Helper()
		var at time.Time
		if err := db.QueryRow(ctx, `SELECT refilled_at FROM "`+d.Schema()+`".queue_limits WHERE queue = $1`, queue).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at
	}

	for _, tc := range []struct {
		name, queue string
		variant     droverdriver.ClaimVariant
	}{
		{"plain claim", "q", droverdriver.ClaimPlain},
		{"strict claim", "s", droverdriver.ClaimStrict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jobs, err := e.JobClaim(ctx, droverdriver.ClaimParams{Queue: tc.queue, Max: 1, Owner: "w", Lease: time.Minute,
				Limited: true, Variant: tc.variant})
			if err != nil {
				t.Fatal(err)
			}
			if len(jobs) != 1 {
				t.Fatalf("claimed %d jobs, want 1", len(jobs))
			}
			if at := refilledAt(t, d.Pool(), tc.queue); !at.Equal(*jobs[0].AttemptedAt) {
				t.Fatalf("the bucket was spent at %s, the job started at %s", at.Format(time.RFC3339Nano), jobs[0].AttemptedAt.Format(time.RFC3339Nano))
			}
		})
	}

	t.Run("a take that waited for the lock", func(t *testing.T) {
		take := e.q[queueLimitTake.name]
		conn, err := d.Pool().Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Release()
		// The waiting claim's transaction starts first: its now() is
		// before everything the other does.
		late, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer late.Rollback(ctx)
		var pid int
		if err := late.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatal(err)
		}
		first, err := d.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer first.Rollback(ctx)
		if _, err := first.Exec(ctx, take, "q"); err != nil {
			t.Fatal(err)
		}
		firstAt := refilledAt(t, first, "q")
		done := make(chan error, 1)
		go func() {
			_, err := late.Exec(ctx, take, "q")
			done <- err
		}()
		waitfor.Cond(t, "the second take to wait for the queue's lock", func() bool {
			var waiting bool
			if err := d.Pool().QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock')",
				pid).Scan(&waiting); err != nil {
				t.Fatal(err)
			}
			return waiting
		})
		if err := first.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if at := refilledAt(t, late, "q"); !at.After(firstAt) {
			t.Fatalf("the take that waited refilled the bucket to %s, before the one it waited for (%s)",
				at.Format(time.RFC3339Nano), firstAt.Format(time.RFC3339Nano))
		}
	})
}
