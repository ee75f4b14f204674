package completer

import (
	"context"
	"testing"

	"github.com/droverhq/drover/droverdriver"
)

// TestFlushedSignal checks the completer's test signal: each flush sends
// the number of results it carried once they are written, so that a test
// waiting on it finds them in the store.
func TestFlushedSignal(t *testing.T) {
	t.Parallel()
	store := &fakeStore{seen: map[int64]int{}}
	c := New(store, Config{})
	c.TestSignals.Init()
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); <-c.Done() }()
	go c.Run(ctx)
	const n = 5
	for id := range int64(n) {
		c.Submit(droverdriver.Result{ID: id + 1, Attempt: 1, Outcome: droverdriver.OutcomeCompleted})
	}
	for flushed := 0; flushed < n; {
		got := c.TestSignals.Flushed.Wait(t)
		if got < 1 || got > n {
			t.Fatalf("a flush signalled %d results, want 1 to %d", got, n)
		}
		flushed += got
		store.mu.Lock()
		written := len(store.seen)
		store.mu.Unlock()
		if written < flushed {
			t.Fatalf("%d results signalled flushed, %d written: the signal came before the write", flushed, written)
		}
	}
}
