package producer

import (
	"context"
	"log/slog"
	"time"

	"github.com/droverhq/drover/droverdriver"
)

// heartbeatChunk bounds the attempts of one heartbeat statement.
const heartbeatChunk = 10_000

// Heartbeat extends the leases of every attempt in the tracker with one
// statement per interval (per process, not per job), and relays what the
// store reports back: cancel requests and attempts lost to the rescuer.
type Heartbeat struct {
	Exec     droverdriver.Executor
	Tracker  *Tracker
	Lease    time.Duration
	Interval time.Duration
	Logger   *slog.Logger
}

// Run beats until ctx ends.
func (h *Heartbeat) Run(ctx context.Context) {
	t := time.NewTicker(h.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := h.Beat(ctx); err != nil && ctx.Err() == nil {
			h.Logger.Error("heartbeat failed; leases will expire if this persists", "error", err)
		}
	}
}

// Beat runs one heartbeat.
func (h *Heartbeat) Beat(ctx context.Context) error {
	ids, attempts, tokens := h.Tracker.Snapshot()
	for start := 0; start < len(ids); start += heartbeatChunk {
		end := min(start+heartbeatChunk, len(ids))
		res, err := h.Exec.JobHeartbeat(ctx, droverdriver.HeartbeatParams{IDs: ids[start:end], Attempts: attempts[start:end],
			Tokens: tokens[start:end], Lease: h.Lease})
		if err != nil {
			return err
		}
		for _, id := range res.CancelRequested {
			h.Tracker.Cancel(id, ErrCancelRequested)
		}
		for _, id := range res.Lost {
			h.Tracker.Cancel(id, ErrLeaseLost)
		}
	}
	return nil
}
