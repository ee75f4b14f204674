package notifier

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: the
// notifier runs on a goroutine its client owns, and Run must return once
// that goroutine's context ends, between connections as well as during
// one.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// flakyListener connects, and drops its first connection at once; later
// ones last until their context ends.
type flakyListener struct {
	listens int
}

func (l *flakyListener) Listen(ctx context.Context, onConnect func(), _ func(string) int) error {
	l.listens++
	onConnect()
	if l.listens == 1 {
		return errors.New("connection reset")
	}
	<-ctx.Done()
	return ctx.Err()
}

// TestRunReconnectsAndStops checks that a dropped connection is opened
// again, with a wake-up of every queue after each connect to cover the
// gap, and that Run returns once its context ends.
func TestRunReconnectsAndStops(t *testing.T) {
	connects := make(chan struct{}, 2)
	n := &Notifier{Listener: &flakyListener{}, Wake: func(string) int { return 0 },
		WakeAll: func() { connects <- struct{}{} }, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.Run(ctx)
	}()
	<-connects
	<-connects // after the reconnect
	cancel()
	<-done
}
