package droverpg_test

import (
	"context"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
)

// TestRowsWritten: rows a connection wrote show in RowsWritten once its
// statistics are flushed, messages under topic_messages whatever
// generation's partition holds them.
func TestRowsWritten(t *testing.T) {
	ctx := context.Background()
	d := migrated(t)
	if _, err := d.TopicCreate(ctx, droverdriver.TopicParams{Name: "t", Lanes: 1, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	before, err := d.RowsWritten(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// One connection writes and flushes its statistics at once, instead
	// of within the second (or, idle, ten) PostgreSQL otherwise waits.
	conn, err := d.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `INSERT INTO `+d.Schema()+`.topic_messages (topic, lane, payload) VALUES ('t', 0, '\x00'), ('t', 0, '\x01')`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_stat_force_next_flush()"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "SELECT 1"); err != nil { // the flush comes at this transaction's end
		t.Fatal(err)
	}
	after, err := d.RowsWritten(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := after["topic_messages"] - before["topic_messages"]; got != 2 {
		t.Fatalf("topic_messages wrote %d rows (before %v, after %v), want the 2 inserted", got, before, after)
	}
}
