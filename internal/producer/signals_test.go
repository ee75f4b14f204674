package producer

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/lease"
)

// TestClaimedSignal checks the producer's test signal: each claim sends
// how many jobs it took, once they are handed to the workers, and a claim
// that finds nothing sends 0.
func TestClaimedSignal(t *testing.T) {
	t.Parallel()
	store := newClaimStore(3)
	run := func(_ context.Context, row *drovertype.JobRow) droverdriver.Result {
		return droverdriver.Result{ID: row.ID, Attempt: row.Attempt, Outcome: droverdriver.OutcomeCompleted}
	}
	p := New(store, lease.NewTracker(), func(droverdriver.Result) {}, run, Config{Queue: "q", MaxWorkers: 10,
		Owner: "o", Lease: time.Minute, PollInterval: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	p.TestSignals.Init()
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { defer close(stopped); p.Run(ctx) }()
	defer func() { cancel(); <-stopped }()
	if got := p.TestSignals.Claimed.Wait(t); got != 3 {
		t.Fatalf("the first claim signalled %d jobs, want the 3 available", got)
	}
	if s := p.Stats(); s.ClaimedJobs != 3 {
		t.Fatalf("stats after the signal: %+v, want 3 jobs claimed", s)
	}
	p.Wake()
	if got := p.TestSignals.Claimed.Wait(t); got != 0 {
		t.Fatalf("a claim of an empty queue signalled %d jobs, want 0", got)
	}
}
