package drover_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverfleet"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// claimCounted is a store's driver whose executor counts its claims.
type claimCounted[TTx any] struct {
	droverdriver.TxDriver[TTx]
	claims *atomic.Int64
}

// Executor returns the driver's executor with its claims counted, and with
// the optional interfaces the client looks for on it: the poll's read of
// the queues with jobs due above all, which the test is about, and the
// head-only claims of a store that has them.
func (d claimCounted[TTx]) Executor() droverdriver.Executor {
	ex := d.TxDriver.Executor()
	c := countedExec{Executor: ex, QueuesDueExecutor: ex.(droverdriver.QueuesDueExecutor), TopicExecutor: ex.(droverdriver.TopicExecutor),
		PeriodicExecutor: ex.(droverdriver.PeriodicExecutor), RefusalReporter: ex.(droverdriver.RefusalReporter),
		UnavailableReporter: ex.(droverdriver.UnavailableReporter), claims: d.claims}
	if h, ok := ex.(droverdriver.HeadClaimer); ok {
		return headCountedExec{c, h}
	}
	return c
}

// countedExec is a driver's executor, with every optional interface the
// bundled drivers implement, that counts its claims.
type countedExec struct {
	droverdriver.Executor
	droverdriver.QueuesDueExecutor
	droverdriver.TopicExecutor
	droverdriver.PeriodicExecutor
	droverdriver.RefusalReporter
	droverdriver.UnavailableReporter
	claims *atomic.Int64
}

func (e countedExec) JobClaim(ctx context.Context, p droverdriver.ClaimParams) ([]*drovertype.JobRow, error) {
	e.claims.Add(1)
	return e.Executor.JobClaim(ctx, p)
}

// headCountedExec is a countedExec of a store whose claims start at the
// head of its claim index (SQLite).
type headCountedExec struct {
	countedExec
	droverdriver.HeadClaimer
}

// TestPollClaimsOnlyQueuesWithJobs checks the fallback poll of a client
// serving many queues (issue 36): the poll reads which queues have jobs
// due and only their producers claim. Before, every producer polled with
// a claim of its own, so a client of 40 idle queues made 40 claims per
// poll interval (on SQLite, whose interval is 50 ms, a client of 1,000
// queues spent most of its CPU on them). The jobs are inserted by another
// client while the worker polls alone (PollOnly), as jobs another process
// inserts reach it; each must still run, found by the poll.
func TestPollClaimsOnlyQueuesWithJobs(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		d := s.open(t)
		rec := newRecorder()
		const queues = 40
		cfg := fastConfig(rec, 1)
		cfg.PollOnly, cfg.PollInterval = true, 20*time.Millisecond
		cfg.Queues = map[string]drover.QueueConfig{}
		for i := range queues {
			cfg.Queues[fmt.Sprintf("q%d", i)] = drover.QueueConfig{MaxWorkers: 1}
		}
		var claims atomic.Int64
		var worker client
		var err error
		switch d := d.(type) {
		case *droverpg.Driver:
			worker, err = drover.NewClient[pgx.Tx](claimCounted[pgx.Tx]{d, &claims}, cfg)
		case *droversqlite.Driver:
			worker, err = drover.NewClient[*sql.Tx](claimCounted[*sql.Tx]{d, &claims}, cfg)
		case *droverfleet.Driver[pgx.Tx]:
			worker, err = drover.NewClient[pgx.Tx](claimCounted[pgx.Tx]{d, &claims}, cfg)
		default:
			t.Fatalf("no counted driver for %T", d)
		}
		if err != nil {
			t.Fatal(err)
		}
		inserter := s.newClient(t, d, &drover.Config{Workers: testWorkers(rec)})
		startClient(t, worker)
		// Each producer claims once as it starts, finds nothing and waits.
		waitfor.Cond(t, "every producer's first claim", func() bool { return claims.Load() >= queues })
		const rounds = 5
		for i := range rounds {
			queue := fmt.Sprintf("q%d", i*7)
			row, err := inserter.Insert(ctx, noopArgs{N: i}, &drover.InsertOpts{Queue: queue})
			if err != nil {
				t.Fatal(err)
			}
			waitState(t, worker, row.ID, drovertype.JobStateCompleted)
		}
		// A job's producer claims it and claims again once it ran, finding
		// the queue empty; a recheck may add one.
		if got, most := claims.Load(), int64(queues+3*rounds); got > most {
			t.Errorf("%d claims for %d queues and %d jobs found by polls, want at most %d: idle queues' producers claim at every poll", got, queues, rounds, most)
		}
	})
}
