package pgstore_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/internal/app/bench/pgstore"
	"github.com/droverhq/drover/internal/testkit/testdb"
)

// TestMain stops the shared PostgreSQL cluster after the tests and fails
// the package if a goroutine outlives them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(testdb.M(m)) }

// migrated returns a driver on a pool and schema of its own, migrated to
// the latest version, and the bench's view of its store.
func migrated(t *testing.T) (*droverpg.Driver, *pgstore.Store) {
	t.Helper()
	d, err := droverpg.New(testdb.NewPool(t), droverpg.WithSchema(testdb.NewSchema(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if _, err := drover.Migrate(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	s, ok := pgstore.Of(d)
	if !ok {
		t.Fatal("a PostgreSQL driver is not a PostgreSQL store")
	}
	return d, s
}

// TestRowsWritten: rows a connection wrote show in RowsWritten once its
// statistics are flushed, messages under topic_messages whatever
// generation's partition holds them.
func TestRowsWritten(t *testing.T) {
	ctx := context.Background()
	d, s := migrated(t)
	if _, err := d.Executor().(droverdriver.TopicExecutor).TopicCreate(ctx, droverdriver.TopicParams{Name: "t", Lanes: 1, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	before, err := s.RowsWritten(ctx)
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
	after, err := s.RowsWritten(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := after["topic_messages"] - before["topic_messages"]; got != 2 {
		t.Fatalf("topic_messages wrote %d rows (before %v, after %v), want the 2 inserted", got, before, after)
	}
}
