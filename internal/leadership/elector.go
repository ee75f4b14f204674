// Package leadership elects one client among all processes sharing a store
// to run singleton work (rescuing expired leases, pruning). The leader holds
// a row with an expiry and renews it; when it dies, the row expires and
// another client takes over.
package leadership

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/outage"
)

// Name of the maintenance leadership row.
const Name = "maintenance"

// Elector campaigns for leadership and keeps it.
type Elector struct {
	Exec droverdriver.Executor
	ID   string
	// TTL is how long leadership lasts without renewal; it bounds how long
	// maintenance pauses when a leader dies.
	TTL    time.Duration
	Logger *slog.Logger
	// OnChange is called from Run's goroutine when leadership is gained
	// (true) or lost (false).
	OnChange func(leader bool)

	leader   atomic.Bool
	failures *outage.Reporter
}

// Run campaigns until ctx ends, then resigns so that another client can
// take over at once rather than after the TTL.
func (e *Elector) Run(ctx context.Context) {
	// A leader renews at a third of the TTL, so two failed renewals in a
	// row still leave it in office; a follower retries as often, so it
	// notices an expired leader within a third of the TTL.
	interval := e.TTL / 3
	e.failures = &outage.Reporter{Logger: e.Logger, Level: slog.LevelWarn, What: "leader election"}
	for {
		e.attempt(ctx)
		select {
		case <-ctx.Done():
			if e.leader.Load() {
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
				if err := e.Exec.LeaderResign(rctx, Name, e.ID); err != nil {
					e.Logger.Warn("resigning leadership failed; it will expire", "error", err)
				}
				cancel()
				e.set(false)
			}
			return
		case <-time.After(interval):
		}
	}
}

func (e *Elector) attempt(ctx context.Context) {
	ok, err := e.Exec.LeaderElect(ctx, droverdriver.LeaderParams{Name: Name, ID: e.ID, TTL: e.TTL})
	if err != nil {
		if ctx.Err() == nil {
			e.failures.Failed(err)
		}
		// Without a renewal a leader must assume it lost office.
		ok = false
	} else {
		e.failures.OK()
	}
	e.set(ok)
}

func (e *Elector) set(leader bool) {
	if e.leader.Swap(leader) != leader && e.OnChange != nil {
		e.OnChange(leader)
	}
}
