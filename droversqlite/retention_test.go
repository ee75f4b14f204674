package droversqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/maintenance"
)

// TestTopicDropLetsWritersIn drops a generation of 20,000 messages while
// another writer of the same process writes over and over: the writer's
// transactions run between the drop's, finding the generation partly
// deleted, and the drop completes. Before, a generation left in one
// DELETE, holding SQLite's only writer for as long as that took (seconds
// for a full generation of 2^20 messages), with every publish, lease and
// ack of every process waiting behind it.
func TestTopicDropLetsWritersIn(t *testing.T) {
	ctx := context.Background()
	d := open(t, filepath.Join(t.TempDir(), "drop.db"))
	migrate(t, d)
	if _, err := d.exec.TopicCreate(ctx, droverdriver.TopicParams{Name: "t", Lanes: 4, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	const total = 20000
	batch := make([]droverdriver.PublishParams, 500)
	for i := range batch {
		batch[i] = droverdriver.PublishParams{Topic: "t", Lane: i % 4, Payload: []byte("m")}
	}
	for range total / len(batch) {
		if _, err := d.exec.TopicPublish(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	// A topic without subscriptions owes its messages to nobody: its
	// sealed generation may go at once.
	r := &maintenance.TopicRetainer{Exec: &d.exec, MaxMessages: 1}
	if _, _, err := r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	left := func() int {
		var n int
		err := d.exec.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			return tx.QueryRowContext(ctx, "SELECT count(*) FROM "+d.schema+"_topic_messages WHERE id < ?", droverdriver.GenerationWidth).Scan(&n)
		})
		if err != nil {
			t.Error(err)
		}
		return n
	}
	if n := left(); n != total {
		t.Fatalf("%d messages in the sealed generation, want %d", n, total)
	}
	var stop, between atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			if n := left(); n > 0 && n < total {
				between.Store(true)
			}
		}
	}()
	dropped, _, err := r.RunOnce(ctx)
	stop.Store(true)
	<-done
	if err != nil || dropped != 1 {
		t.Fatalf("retention pass: %d generations dropped, %v; want the sealed one", dropped, err)
	}
	if !between.Load() {
		t.Fatal("no write transaction ran while the generation was being dropped: the drop held the writer throughout")
	}
	if n := left(); n != 0 {
		t.Fatalf("%d messages left in the dropped generation", n)
	}
}
