package completer

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
)

// fakeStore records the flushes a completer makes.
type fakeStore struct {
	droverdriver.Executor // only JobFinish is called

	mu                           sync.Mutex
	seen                         map[int64]int
	inFlight, membersInFlight    int
	maxInFlight, maxMembersFlush int
}

func (f *fakeStore) JobFinish(ctx context.Context, results []droverdriver.Result) ([]int64, error) {
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
						r := droverdriver.Result{ID: id, Attempt: 1, Outcome: droverdriver.OutcomeCompleted}
						if tt.memberEvery > 0 && id%int64(tt.memberEvery) == 0 {
							r.Flow = droverdriver.FlowBatchMember
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

// slowStore takes a fixed time per flush and records each flush's IDs in
// the order the flushes started.
type slowStore struct {
	droverdriver.Executor // only JobFinish is called
	took                  time.Duration

	mu       sync.Mutex
	batches  [][]int64
	finished int
}

func (s *slowStore) JobFinish(ctx context.Context, results []droverdriver.Result) ([]int64, error) {
	ids := make([]int64, len(results))
	for i, r := range results {
		ids[i] = r.ID
	}
	s.mu.Lock()
	s.batches = append(s.batches, ids)
	s.mu.Unlock()
	time.Sleep(s.took)
	s.mu.Lock()
	s.finished++
	s.mu.Unlock()
	return ids, nil
}

// TestCooldownFollowsFlushTime checks that the gap between flush starts
// stretches to the time the last flush took, up to maxStretch cooldowns.
// Result 1 is flushed alone and measures the store; result 2 then starts a
// flush at once, at time B. Result 3 comes 10 ms after B, result 4 later:
// with a stretched gap, result 3 waits until B + the flush time and result
// 4 joins it if it comes before then; with the plain cooldown, result 3
// would go alone 1 cooldown after B, and so would result 4.
func TestCooldownFollowsFlushTime(t *testing.T) {
	tests := []struct {
		name     string
		took     time.Duration
		cooldown time.Duration
		fourth   time.Duration // when result 4 comes, after B
		want     [][]int64
	}{
		{"stretched to the flush time", 150 * time.Millisecond, 20 * time.Millisecond, 70 * time.Millisecond,
			[][]int64{{1}, {2}, {3, 4}}},
		{"capped at maxStretch cooldowns", 500 * time.Millisecond, 10 * time.Millisecond, 300 * time.Millisecond,
			[][]int64{{1}, {2}, {3}, {4}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &slowStore{took: tt.took}
			c := New(store, Config{Cooldown: tt.cooldown})
			done := make(chan struct{})
			go func() {
				c.Run(context.Background())
				close(done)
			}()
			submit := func(id int64) {
				c.Submit(droverdriver.Result{ID: id, Attempt: 1, Outcome: droverdriver.OutcomeCompleted})
			}
			finished := func(n int) {
				t.Helper()
				deadline := time.Now().Add(5 * time.Second)
				for {
					store.mu.Lock()
					f := store.finished
					store.mu.Unlock()
					if f >= n {
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("%d flushes finished, want %d", f, n)
					}
					time.Sleep(time.Millisecond)
				}
			}
			submit(1)
			finished(1)
			submit(2)
			b := time.Now()
			time.Sleep(10 * time.Millisecond)
			submit(3)
			time.Sleep(time.Until(b.Add(tt.fourth)))
			submit(4)
			c.Close()
			<-done

			if !slices.EqualFunc(store.batches, tt.want, slices.Equal) {
				t.Errorf("flushes %v, want %v", store.batches, tt.want)
			}
		})
	}
}
