package maintenance

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/droverhq/drover/droverdriver"
)

// TestMain fails the package if any test leaves a goroutine behind: the
// maintenance loops run on goroutines the leader owns, and each Run must
// return once that goroutine's context ends.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// passStore signals maintenance passes on passed. Only the maintenance
// calls are implemented; any other call panics.
type passStore struct {
	droverdriver.Executor
	passed chan string
}

// pass signals a pass of kind, dropping it when nobody has read the ones
// before, so that a loop never blocks on a test that stopped listening.
func (s *passStore) pass(kind string) {
	select {
	case s.passed <- kind:
	default:
	}
}

func (s *passStore) JobRescue(context.Context, droverdriver.RescueParams) ([]droverdriver.FinishedRow, error) {
	s.pass("rescue")
	return nil, nil
}

// Tx runs fn on the store itself: the rescue runs in one.
func (s *passStore) Tx(ctx context.Context, fn func(context.Context, droverdriver.Executor) error) error {
	return fn(ctx, s)
}

func (s *passStore) JobPrune(context.Context, droverdriver.PruneParams) (int, error) {
	s.pass("prune")
	return 0, nil
}

func (s *passStore) KeyBlocked(context.Context, int) (droverdriver.KeyParams, error) {
	s.pass("promote")
	return droverdriver.KeyParams{}, nil
}

func (s *passStore) KeyRatePrune(context.Context, int) error { return nil }

// TestLoopsStopWithTheirContext runs each loop until it has made two
// passes (the one at start and one after an interval) and checks that it
// returns once its context ends.
func TestLoopsStopWithTheirContext(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	const interval = time.Millisecond
	tests := []struct {
		name string
		run  func(ctx context.Context, s *passStore)
	}{
		{"rescue", func(ctx context.Context, s *passStore) {
			(&Rescuer{Exec: s, Interval: interval, Logger: logger}).Run(ctx)
		}},
		{"prune", func(ctx context.Context, s *passStore) {
			(&Pruner{Exec: s, Interval: interval, Logger: logger}).Run(ctx)
		}},
		{"promote", func(ctx context.Context, s *passStore) {
			(&Promoter{Exec: s, Interval: interval, Logger: logger}).Run(ctx)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := &passStore{passed: make(chan string, 1)}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				tc.run(ctx, s)
			}()
			for range 2 {
				if got := <-s.passed; got != tc.name {
					t.Fatalf("ran a %s pass, want %s", got, tc.name)
				}
			}
			cancel()
			<-done
		})
	}
}

func (s *passStore) StatsRecord(context.Context, droverdriver.StatsRecordParams) (int, error) {
	return 1, nil
}

func (s *passStore) StatsRollup(context.Context, droverdriver.StatsRollupParams) (int, error) {
	s.pass("history")
	return 0, nil
}

// TestHistoryRecorderStops checks that the history recorder records a
// minute at once, then waits for the next minute's end, and returns once
// its context ends.
func TestHistoryRecorderStops(t *testing.T) {
	s := &passStore{passed: make(chan string, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		(&HistoryRecorder{Exec: s, Retention: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}).Run(ctx)
	}()
	if got := <-s.passed; got != "history" {
		t.Fatalf("ran a %s pass, want history", got)
	}
	cancel()
	<-done
}

// TestLoopsSignalEachPass checks the loops' test signal: every pass sends
// how many rows it changed, once its statements ran.
func TestLoopsSignalEachPass(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	s := &passStore{passed: make(chan string, 10)}
	r := &Rescuer{Exec: s, Interval: time.Millisecond, Logger: logger}
	r.TestSignals.Init()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	defer func() { cancel(); <-done }()
	for range 2 {
		if n := r.TestSignals.Passed.Wait(t); n != 0 {
			t.Fatalf("a pass over no expired lease signalled %d jobs", n)
		}
		select {
		case got := <-s.passed:
			if got != "rescue" {
				t.Fatalf("ran a %s pass, want rescue", got)
			}
		default:
			t.Fatal("a pass was signalled before its statement ran")
		}
	}
}
