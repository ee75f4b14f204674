package completer

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/driver"
)

// fakeStore records the flushes a completer makes.
type fakeStore struct {
	driver.Executor // only JobFinish is called

	mu                           sync.Mutex
	seen                         map[int64]int
	inFlight, membersInFlight    int
	maxInFlight, maxMembersFlush int
}

func (f *fakeStore) JobFinish(ctx context.Context, results []driver.Result) ([]int64, error) {
	members := false
	for _, r := range results {
		members = members || isMember(r)
	}
	f.mu.Lock()
	f.inFlight++
	f.maxInFlight = max(f.maxInFlight, f.inFlight)
	if members {
		f.membersInFlight++
		f.maxMembersFlush = max(f.maxMembersFlush, f.membersInFlight)
	}
	f.mu.Unlock()

	time.Sleep(2 * time.Millisecond) // a statement's round trip

	f.mu.Lock()
	defer f.mu.Unlock()
	f.inFlight--
	if members {
		f.membersInFlight--
	}
	ids := make([]int64, len(results))
	for i, r := range results {
		f.seen[r.ID]++
		ids[i] = r.ID
	}
	return ids, nil
}

// TestCompleterFlushesBatchMembersOneAtATime submits plain results and
// batch members from many goroutines and checks that every result is
// written exactly once, that flushes carrying batch members never overlap
// (their batch counter rows would make them queue in the store), and that
// no more flushes than MaxInFlight ever run at once.
func TestCompleterFlushesBatchMembersOneAtATime(t *testing.T) {
	tests := []struct {
		name        string
		memberEvery int // every n-th result is a batch member; 0: none
	}{
		{name: "plain only"},
		{name: "members only", memberEvery: 1},
		{name: "mixed", memberEvery: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &fakeStore{seen: map[int64]int{}}
			c := New(store, Config{BatchSize: 50, MaxInFlight: 4, Cooldown: time.Microsecond})
			done := make(chan struct{})
			go func() {
				c.Run(context.Background())
				close(done)
			}()
			const producers, each = 8, 500
			var wg sync.WaitGroup
			for p := range producers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						id := int64(p*each + i + 1)
						r := driver.Result{ID: id, Attempt: 1, Outcome: driver.OutcomeCompleted}
						if tt.memberEvery > 0 && id%int64(tt.memberEvery) == 0 {
							r.Flow = driver.FlowBatchMember
						}
						c.Submit(r)
					}
				}()
			}
			wg.Wait()
			c.Close()
			<-done

			if len(store.seen) != producers*each {
				t.Fatalf("%d results written, want %d", len(store.seen), producers*each)
			}
			for id, n := range store.seen {
				if n != 1 {
					t.Fatalf("result %d written %d times", id, n)
				}
			}
			if store.maxMembersFlush > 1 {
				t.Errorf("%d flushes with batch members ran at once, want at most 1", store.maxMembersFlush)
			}
			if store.maxInFlight > 4 {
				t.Errorf("%d flushes ran at once, over MaxInFlight 4", store.maxInFlight)
			}
		})
	}
}
