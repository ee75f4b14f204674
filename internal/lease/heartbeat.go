// Package lease keeps the leases of running attempts alive. A process
// holds many attempts at once, and one statement per interval extends all
// of them: the Tracker knows which attempts a Client's producers hold,
// Heartbeat extends them for the whole process, and Extend is the one
// fenced, chunked call both Heartbeat and the remote workers' leases
// (drover.Remote.ExtendLeases) go through.
package lease

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/outage"
)

// Chunk bounds the attempts of one heartbeat statement, so that a process
// holding a huge number of attempts never sends one unbounded statement.
const Chunk = 10_000

// Extend extends the leases of the attempts in p to p.Lease from now, in
// statements of at most Chunk attempts, each fenced by (ID, attempt, lease
// token), and reports the attempts the store no longer holds and those
// asked to cancel. On an error it returns what the chunks before the
// failed one reported, so that their cancels still reach their handlers.
func Extend(ctx context.Context, exec droverdriver.Executor, p droverdriver.HeartbeatParams) (droverdriver.HeartbeatResult, error) {
	var out droverdriver.HeartbeatResult
	for start := 0; start < len(p.IDs); start += Chunk {
		end := min(start+Chunk, len(p.IDs))
		res, err := exec.JobHeartbeat(ctx, droverdriver.HeartbeatParams{IDs: p.IDs[start:end], Attempts: p.Attempts[start:end],
			Tokens: p.Tokens[start:end], Lease: p.Lease})
		if err != nil {
			return out, err
		}
		out.Lost = append(out.Lost, res.Lost...)
		out.CancelRequested = append(out.CancelRequested, res.CancelRequested...)
	}
	return out, nil
}

// Heartbeat extends the leases of every attempt in the tracker with one
// statement per interval (per process, not per job), and relays what the
// store reports back: cancel requests and attempts lost to the rescuer.
type Heartbeat struct {
	Exec     droverdriver.Executor
	Tracker  *Tracker
	Lease    time.Duration
	Interval time.Duration
	Logger   *slog.Logger
	// Seen, when set, runs at every beat: the client writes its row of
	// the worker registry (drover's routing.go), so that the registry's
	// last_seen is the process's last heartbeat.
	Seen func(ctx context.Context) error
}

// Run beats until ctx ends.
func (h *Heartbeat) Run(ctx context.Context) {
	t := time.NewTicker(h.Interval)
	defer t.Stop()
	failures := &outage.Reporter{Logger: h.Logger, What: "heartbeat (leases expire if this persists)"}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		switch err := h.Beat(ctx); {
		case err == nil:
			failures.OK()
		case ctx.Err() == nil:
			failures.Failed(err)
		}
	}
}

// Beat runs one heartbeat.
func (h *Heartbeat) Beat(ctx context.Context) error {
	ids, attempts, tokens := h.Tracker.Snapshot()
	res, err := Extend(ctx, h.Exec, droverdriver.HeartbeatParams{IDs: ids, Attempts: attempts, Tokens: tokens, Lease: h.Lease})
	for _, id := range res.CancelRequested {
		h.Tracker.Cancel(id, ErrCancelRequested)
	}
	for _, id := range res.Lost {
		h.Tracker.Cancel(id, ErrLeaseLost)
	}
	if h.Seen != nil {
		err = errors.Join(err, h.Seen(ctx))
	}
	return err
}
