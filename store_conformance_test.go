package drover_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
)

// TestClientStore checks the store as drover serve reads it through its
// client, never through the driver beside it: the schema is current and
// takes writes, the poll interval is the client's, an insert's
// notification reaches a listener, bulk task records are stored and read
// back (and are all the records reach), and a statement's failure is not
// an outage.
func TestClientStore(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 1)
		ctx := context.Background()
		st := b.client.Store()

		check, err := st.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if check.Version < 1 || check.Version != check.Latest || check.WriteErr != nil {
			t.Fatalf("Check = %+v, want a current schema that takes writes", check)
		}
		if got := st.PollInterval(); got != 50*time.Millisecond {
			t.Errorf("PollInterval = %v, want the client's 50ms", got)
		}
		if st.Unavailable(errors.New("some statement failed")) {
			t.Error("a plain error reported as the store being unavailable")
		}

		listenCtx, stop := context.WithCancel(ctx)
		connected, woken, done := make(chan struct{}, 1), make(chan string, 16), make(chan struct{})
		go func() {
			defer close(done)
			st.Listen(listenCtx, func(channel string) int {
				select {
				case woken <- channel:
				default:
				}
				return 1
			}, func() {
				select {
				case connected <- struct{}{}:
				default:
				}
			})
		}()
		t.Cleanup(func() { stop(); <-done })
		select {
		case <-connected:
		case <-time.After(10 * time.Second):
			t.Fatal("Listen never connected")
		}
		if _, err := b.client.Insert(ctx, noopArgs{}, &drover.InsertOpts{Queue: "listened"}); err != nil {
			t.Fatal(err)
		}
		for got := ""; got != "listened"; {
			select {
			case got = <-woken:
			case <-time.After(10 * time.Second):
				t.Fatal("no notification of the insert into queue listened")
			}
		}

		tasks := st.BulkTasks()
		if _, ok := tasks.(droverdriver.Executor); ok {
			t.Error("BulkTasks reaches the whole executor")
		}
		now := time.Now().UTC().Truncate(time.Millisecond)
		id, err := tasks.BulkTaskInsert(ctx, &droverdriver.BulkTaskRow{Action: "cancel", Queue: "q", Status: "running", StartedAt: now}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if err := tasks.BulkTaskUpdate(ctx, droverdriver.BulkTaskUpdateParams{ID: id, Status: "done", Matched: 3, Changed: 2, Now: now}); err != nil {
			t.Fatal(err)
		}
		row, err := tasks.BulkTaskGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if row == nil || row.Action != "cancel" || row.Queue != "q" || row.Status != "done" || row.Matched != 3 || row.Changed != 2 {
			t.Fatalf("bulk task %d read back as %+v, want a done cancel of queue q that matched 3 and changed 2", id, row)
		}
	})
}
