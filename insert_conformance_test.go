package drover_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverfleet"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/drovertype"
)

// TestInsertReturnsStoredRow: Insert returns the job as the store holds
// it, not a row made up in Go: a keyed job whose key is busy comes back
// blocked, a job due later (by its RunAt, or by its key's rate)
// scheduled, and CreatedAt, RunAt and the state
// are exactly what JobGet reads. A unique job whose key is held is still
// skipped, with no ID.
func TestInsertReturnsStoredRow(t *testing.T) {
	later := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	tests := []struct {
		name string
		// before are inserted first, with the same options.
		before int
		opts   *drover.InsertOpts
		want   drovertype.JobState
		// skipped: the insert is a unique duplicate.
		skipped bool
	}{
		{name: "plain", opts: nil, want: drovertype.JobStateAvailable},
		{name: "scheduled", opts: &drover.InsertOpts{RunAt: later}, want: drovertype.JobStateScheduled},
		{name: "keyed, key free", opts: &drover.InsertOpts{Key: "k"}, want: drovertype.JobStateAvailable},
		{name: "keyed, key busy", before: 1, opts: &drover.InsertOpts{Key: "k"}, want: drovertype.JobStateBlocked},
		{name: "keyed with a rate", opts: &drover.InsertOpts{Key: "r", KeyRate: 1, KeyRatePeriod: time.Hour},
			want: drovertype.JobStateAvailable},
		// Promoted at once, but due only when the key's next token is.
		{name: "keyed with a rate, token spent", before: 1,
			opts: &drover.InsertOpts{Key: "r", KeyLimit: 2, KeyRate: 1, KeyRatePeriod: time.Hour}, want: drovertype.JobStateScheduled},
		{name: "unique", opts: &drover.InsertOpts{UniqueKey: "u"}, want: drovertype.JobStateAvailable},
		{name: "unique, key held", before: 1, opts: &drover.InsertOpts{UniqueKey: "u"}, skipped: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			forEachStore(t, func(t *testing.T, s store) {
				b := setup(t, s, 1)
				ctx := context.Background()
				for range tt.before {
					if _, err := b.client.Insert(ctx, noopArgs{}, tt.opts); err != nil {
						t.Fatal(err)
					}
				}
				row, err := b.client.Insert(ctx, noopArgs{}, tt.opts)
				if err != nil {
					t.Fatal(err)
				}
				if tt.skipped {
					if !row.UniqueSkippedAsDuplicate || row.ID != 0 {
						t.Fatalf("insert of a held unique key returned %+v, want it skipped with no ID", row)
					}
					return
				}
				if row.UniqueSkippedAsDuplicate || row.ID == 0 {
					t.Fatalf("insert returned %+v, want a stored job", row)
				}
				if row.State != tt.want {
					t.Errorf("Insert returned state %s, want %s", row.State, tt.want)
				}
				got := getJob(t, b.client, row.ID)
				if got.State != row.State || !got.CreatedAt.Equal(row.CreatedAt) || !got.RunAt.Equal(row.RunAt) ||
					got.Key != row.Key || got.Queue != row.Queue || got.MaxAttempts != row.MaxAttempts {
					t.Errorf("Insert returned state %s, created %s, run at %s, key %q, queue %q, max attempts %d;\n"+
						"JobGet reads state %s, created %s, run at %s, key %q, queue %q, max attempts %d",
						row.State, row.CreatedAt, row.RunAt, row.Key, row.Queue, row.MaxAttempts,
						got.State, got.CreatedAt, got.RunAt, got.Key, got.Queue, got.MaxAttempts)
				}
				if tt.opts != nil && !tt.opts.RunAt.IsZero() && !row.RunAt.Equal(tt.opts.RunAt) {
					t.Errorf("RunAt = %s, want %s", row.RunAt, tt.opts.RunAt)
				}
			})
		})
	}
}

// TestInsertTxReturnsStoredRow: inside the caller's transaction too, a
// keyed job whose key is busy comes back blocked, as JobGet reads it once
// the transaction commits.
func TestInsertTxReturnsStoredRow(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 1)
		ctx := context.Background()
		opts := &drover.InsertOpts{Key: "k"}
		if _, err := b.client.Insert(ctx, noopArgs{}, opts); err != nil {
			t.Fatal(err)
		}
		row := insertTxRow(t, b.d, b.client, noopArgs{}, opts)
		if row.State != drovertype.JobStateBlocked {
			t.Fatalf("InsertTx returned state %s, want blocked", row.State)
		}
		if got := getJob(t, b.client, row.ID); got.State != row.State || !got.CreatedAt.Equal(row.CreatedAt) {
			t.Fatalf("InsertTx returned state %s created %s; JobGet reads state %s created %s",
				row.State, row.CreatedAt, got.State, got.CreatedAt)
		}
	})
}

// insertTxRow inserts args with InsertTx in a transaction of the store's
// own type, commits, and returns the row InsertTx returned.
func insertTxRow(t *testing.T, d droverdriver.Driver, c client, args drover.Args, opts *drover.InsertOpts) *drovertype.JobRow {
	t.Helper()
	ctx := context.Background()
	var row *drovertype.JobRow
	var err error
	switch d := d.(type) {
	case *droverpg.Driver, *droverfleet.Driver[pgx.Tx]:
		var tx pgx.Tx
		if tx, err = pgPool(d).Begin(ctx); err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if row, err = c.(*drover.Client[pgx.Tx]).InsertTx(ctx, tx, args, opts); err == nil {
			err = tx.Commit(ctx)
		}
	case *droversqlite.Driver:
		var tx *sql.Tx
		if tx, err = d.DB().BeginTx(ctx, nil); err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if row, err = c.(*drover.Client[*sql.Tx]).InsertTx(ctx, tx, args, opts); err == nil {
			err = tx.Commit()
		}
	default:
		t.Fatalf("no transaction for driver %T", d)
	}
	if err != nil {
		t.Fatal(err)
	}
	return row
}
