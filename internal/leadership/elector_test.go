package leadership

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
// elector runs on a goroutine its client owns, and Run must return once
// that goroutine's context ends.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// leaderStore grants leadership to whoever asks and records resignations.
// Only the leadership calls are implemented; any other call panics.
type leaderStore struct {
	droverdriver.Executor
	resigned chan string
}

func (s *leaderStore) LeaderElect(context.Context, droverdriver.LeaderParams) (bool, error) {
	return true, nil
}

func (s *leaderStore) LeaderResign(_ context.Context, name, id string) error {
	s.resigned <- name + "/" + id
	return nil
}

// TestRunResignsOnStop checks that a leader whose context ends resigns,
// so that another client takes over at once, reports the loss, and
// returns.
func TestRunResignsOnStop(t *testing.T) {
	store := &leaderStore{resigned: make(chan string, 1)}
	changes := make(chan bool, 2)
	e := &Elector{Exec: store, ID: "a", TTL: time.Minute, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnChange: func(leader bool) { changes <- leader }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.Run(ctx)
	}()
	if !<-changes {
		t.Fatal("first change reported a loss of leadership")
	}
	cancel()
	<-done
	if got := <-store.resigned; got != Name+"/a" {
		t.Fatalf("resigned %q, want %q", got, Name+"/a")
	}
	if <-changes {
		t.Fatal("stopping reported leadership gained, not lost")
	}
}
