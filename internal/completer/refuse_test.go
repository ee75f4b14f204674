package completer

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

var (
	errRefused = errors.New(`ERROR: unsupported Unicode escape sequence (SQLSTATE 22P05)`)
	errDown    = errors.New("dial tcp: connection refused")
)

// refusingStore fails every statement that carries a poisoned result, as a
// store fails a whole statement over one value it cannot hold, and writes
// the others. While down is positive, every statement fails (an outage)
// and the count goes down by one.
type refusingStore struct {
	droverdriver.Executor // only JobFinish and JobGet are called
	// poison is the ID the store refuses; replacement too refuses the
	// failed attempt the completer writes in its place.
	poison      int64
	replacement bool
	// reports makes the store say which errors are refusals
	// (droverdriver.RefusalReporter); without it the completer probes.
	reports bool

	mu        sync.Mutex
	down      int
	written   map[int64][]droverdriver.Result
	statement int
}

func (s *refusingStore) JobFinish(ctx context.Context, results []droverdriver.Result) ([]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.statement++
	if s.down > 0 {
		s.down--
		return nil, errDown
	}
	for _, r := range results {
		if r.ID == s.poison && (r.Output != nil || s.replacement) {
			return nil, errRefused
		}
	}
	ids := make([]int64, len(results))
	for i, r := range results {
		s.written[r.ID] = append(s.written[r.ID], r)
		ids[i] = r.ID
	}
	return ids, nil
}

func (s *refusingStore) JobGet(ctx context.Context, id int64) (*drovertype.JobRow, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down > 0 {
		return nil, errDown
	}
	return nil, droverdriver.ErrNotFound
}

// reportingStore is a refusingStore that tells refusals from outages by
// their error, as droverpg does by SQLSTATE class.
type reportingStore struct{ *refusingStore }

func (reportingStore) Refused(err error) bool { return errors.Is(err, errRefused) }

// TestRefusedResultFailsOnlyItself submits a batch in which the store
// refuses one result (a completed job's output it cannot hold) and checks
// that every other result is written exactly once, and that the refused
// one is written as a discarded attempt whose error says why, or, when the
// store refuses that too, dropped and reported, never retried forever. An
// outage, by contrast, delays the batch and writes it whole.
func TestRefusedResultFailsOnlyItself(t *testing.T) {
	const total, poison = 100, 37
	tests := []struct {
		name        string
		reports     bool
		replacement bool // the store refuses the replacement too
		down        int  // statements that fail before the store is back
		wantDropped bool
	}{
		{name: "refusal the store reports", reports: true},
		{name: "refusal while the store answers"},
		{name: "replacement refused too", replacement: true, wantDropped: true},
		{name: "outage then refusal", down: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := &refusingStore{poison: poison, replacement: tt.replacement, down: tt.down, written: map[int64][]droverdriver.Result{}}
			var exec Store = store
			if tt.reports {
				exec = reportingStore{store}
			}
			var dropped []int64
			var mu sync.Mutex
			c := New(exec, Config{BatchSize: total, Logger: slog.New(slog.DiscardHandler),
				OnDropped: func(r droverdriver.Result) {
					mu.Lock()
					dropped = append(dropped, r.ID)
					mu.Unlock()
				}})
			for id := int64(1); id <= total; id++ {
				r := droverdriver.Result{ID: id, Attempt: 1, Outcome: droverdriver.OutcomeCompleted}
				if id == poison {
					r.Output = []byte(`{"s":"\u0000"}`)
				}
				c.Submit(r)
			}
			c.Close()
			c.Run(context.Background()) // returns once everything is written or given up

			for id := int64(1); id <= total; id++ {
				got := store.written[id]
				if id != poison {
					if len(got) != 1 || got[0].Outcome != droverdriver.OutcomeCompleted {
						t.Fatalf("result %d written %d times (%+v), want once, completed", id, len(got), got)
					}
					continue
				}
				if tt.wantDropped {
					if len(got) != 0 {
						t.Fatalf("refused result written as %+v, want dropped", got)
					}
					continue
				}
				if len(got) != 1 || got[0].Outcome != droverdriver.OutcomeDiscarded || got[0].Output != nil ||
					!strings.Contains(string(got[0].Error), "the store refused this attempt's result") ||
					!strings.Contains(string(got[0].Error), "22P05") {
					t.Fatalf("refused result written as %+v, want one discarded attempt naming the refusal", got)
				}
			}
			wantDropped := []int64{}
			if tt.wantDropped {
				wantDropped = []int64{poison}
			}
			if !slices.Equal(append([]int64{}, dropped...), wantDropped) {
				t.Fatalf("dropped %v, want %v", dropped, wantDropped)
			}
		})
	}
}

// TestOutageIsRetriedWhole: while the store does not answer, a failed
// flush is retried as it is, neither split nor replaced, and lands once
// the store is back.
func TestOutageIsRetriedWhole(t *testing.T) {
	store := &refusingStore{down: 3, written: map[int64][]droverdriver.Result{}}
	c := New(store, Config{BatchSize: 10, Logger: slog.New(slog.DiscardHandler)})
	batch := make([]droverdriver.Result, 10)
	for i := range batch {
		batch[i] = droverdriver.Result{ID: int64(i + 1), Attempt: 1, Outcome: droverdriver.OutcomeCompleted}
	}
	if _, ok := c.flush(context.Background(), batch); !ok {
		t.Fatal("flush gave up")
	}
	if store.statement != 4 {
		t.Fatalf("%d statements, want 3 failed and 1 that wrote the whole batch", store.statement)
	}
	for _, r := range batch {
		if got := store.written[r.ID]; len(got) != 1 || got[0].Outcome != droverdriver.OutcomeCompleted {
			t.Fatalf("result %d written as %+v, want once, completed", r.ID, got)
		}
	}
}

// TestWriteReportsEachResult: the synchronous write of remote workers'
// results isolates a refused result as a completer's flush does, and
// reports it apart from the accepted ones; when the store refuses the
// replacement too, the refusal says nothing was recorded. An outage is
// returned at once rather than waited out: the caller holds the results.
func TestWriteReportsEachResult(t *testing.T) {
	const total, poison = 40, 13
	results := func() []droverdriver.Result {
		out := make([]droverdriver.Result, total)
		for i := range out {
			out[i] = droverdriver.Result{ID: int64(i + 1), Attempt: 1, Outcome: droverdriver.OutcomeCompleted}
		}
		out[poison-1].Output = []byte(`{"s":"\u0000"}`)
		return out
	}
	for _, tt := range []struct {
		name        string
		replacement bool
	}{{"refused result recorded as failed", false}, {"replacement refused too", true}} {
		t.Run(tt.name, func(t *testing.T) {
			store := &refusingStore{poison: poison, replacement: tt.replacement, written: map[int64][]droverdriver.Result{}}
			rep, err := Write(context.Background(), reportingStore{store}, results(), slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Accepted) != total-1 || slices.Contains(rep.Accepted, poison) {
				t.Fatalf("accepted %v, want every result but %d", rep.Accepted, poison)
			}
			if len(rep.Refused) != 1 || rep.Refused[0].ID != poison || rep.Refused[0].Recorded == tt.replacement ||
				!strings.Contains(rep.Refused[0].Message, "22P05") {
				t.Fatalf("refused %+v, want job %d naming the store's error, recorded %v", rep.Refused, poison, !tt.replacement)
			}
			got := store.written[poison]
			if tt.replacement && len(got) != 0 || !tt.replacement && (len(got) != 1 || got[0].Outcome != droverdriver.OutcomeDiscarded) {
				t.Fatalf("refused result written as %+v", got)
			}
		})
	}
	t.Run("outage", func(t *testing.T) {
		store := &refusingStore{down: 5, written: map[int64][]droverdriver.Result{}}
		if _, err := Write(context.Background(), store, results()[:1], slog.New(slog.DiscardHandler)); !errors.Is(err, errDown) {
			t.Fatalf("Write during an outage = %v, want the outage's error", err)
		}
		if store.statement != 1 || len(store.written) != 0 {
			t.Fatalf("%d statements, %d written; want one failed statement, nothing retried", store.statement, len(store.written))
		}
	})
}
