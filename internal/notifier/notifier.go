// Package notifier keeps one listening connection per client and turns
// insert notifications into producer wake-ups, reconnecting with backoff
// when the connection drops.
package notifier

import (
	"context"
	"log/slog"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/outage"
)

// Notifier relays insert notifications to producers by queue.
type Notifier struct {
	Listener droverdriver.Listener
	// Wake is called with a queue name when jobs arrive in it, and reports
	// how many the queue has room to start now (droverdriver.Listener).
	Wake func(queue string) (room int)
	// WakeAll is called after every (re)connect, to cover notifications
	// missed while not listening.
	WakeAll func()
	Logger  *slog.Logger
}

// Run listens until ctx ends.
func (n *Notifier) Run(ctx context.Context) {
	backoff := 100 * time.Millisecond
	failures := &outage.Reporter{Logger: n.Logger, Level: slog.LevelWarn, What: "listening for notifications (polling covers the gap)"}
	for {
		connected := false
		err := n.Listener.Listen(ctx, func() {
			connected = true
			failures.OK()
			backoff = 100 * time.Millisecond
			n.WakeAll()
		}, n.Wake)
		if ctx.Err() != nil {
			return
		}
		failures.Failed(err, "connected", connected)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 10*time.Second)
	}
}
