package droverpg_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// TestHeartbeatNeverWaitsForRowLocks holds a row lock on a running job, as a
// concurrent finish or cancel would, and checks that the heartbeat neither
// waits for it (a waiting heartbeat can deadlock with a finish) nor reports
// the job lost, and that the next heartbeat extends the lease again.
func TestHeartbeatNeverWaitsForRowLocks(t *testing.T) {
	ctx := context.Background()
	d := migrated(t)
	pool := d.Pool()
	if _, err := d.Executor().JobInsertMany(ctx, []droverdriver.InsertParams{
		{Queue: "q", Kind: "k", Args: []byte(`{}`), MaxAttempts: 3},
		{Queue: "q", Kind: "k", Args: []byte(`{}`), MaxAttempts: 3},
	}); err != nil {
		t.Fatal(err)
	}
	rows, err := d.Executor().JobClaim(ctx, droverdriver.ClaimParams{Queue: "q", Max: 2, Owner: "w", Lease: time.Minute})
	if err != nil || len(rows) != 2 {
		t.Fatalf("claim: %d rows, %v", len(rows), err)
	}
	locked, free := rows[0], rows[1]
	hb := droverdriver.HeartbeatParams{IDs: []int64{locked.ID, free.ID}, Attempts: []int{1, 1},
		Tokens: []drovertype.LeaseToken{locked.LeaseToken, free.LeaseToken}, Lease: time.Hour}

	table := pgx.Identifier{d.Schema(), "jobs"}.Sanitize()
	leaseOf := func(id int64) time.Time {
		t.Helper()
		var at time.Time
		if err := pool.QueryRow(ctx, "SELECT lease_expires_at FROM "+table+" WHERE id = $1", id).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at
	}

	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1 FROM "+table+" WHERE id = $1 FOR UPDATE", locked.ID); err != nil {
		t.Fatal(err)
	}
	hbCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	res, err := d.Executor().JobHeartbeat(hbCtx, hb)
	cancel()
	if err != nil {
		t.Fatalf("heartbeat waited for the row lock or failed: %v", err)
	}
	if len(res.Lost) != 0 {
		t.Fatalf("heartbeat reported %v lost; a locked running row is still held", res.Lost)
	}
	if got := leaseOf(free.ID); time.Until(got) < 30*time.Minute {
		t.Errorf("lease of the unlocked job not extended: expires %s", got)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got := leaseOf(locked.ID); time.Until(got) > 30*time.Minute {
		t.Errorf("lease of the locked job extended through another transaction's lock: expires %s", got)
	}

	if _, err := d.Executor().JobHeartbeat(ctx, hb); err != nil {
		t.Fatal(err)
	}
	if got := leaseOf(locked.ID); time.Until(got) < 30*time.Minute {
		t.Errorf("lease not extended once the lock was gone: expires %s", got)
	}
}
