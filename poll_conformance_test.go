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
	"github.com/droverhq/drover/internal/waitfor"
)

// The drivers with their claims counted.
type (
	pgClaimCounted struct {
		*droverpg.Driver
		claims *atomic.Int64
	}
	sqliteClaimCounted struct {
		*droversqlite.Driver
		claims *atomic.Int64
	}
	fleetClaimCounted struct {
		*droverfleet.Driver[pgx.Tx]
		claims *atomic.Int64
	}
)

func (d pgClaimCounted) JobClaim(ctx context.Context, p droverdriver.ClaimParams) ([]*droverdriver.JobRow, error) {
	d.claims.Add(1)
	return d.Driver.JobClaim(ctx, p)
}

func (d sqliteClaimCounted) JobClaim(ctx context.Context, p droverdriver.ClaimParams) ([]*droverdriver.JobRow, error) {
	d.claims.Add(1)
	return d.Driver.JobClaim(ctx, p)
}

func (d fleetClaimCounted) JobClaim(ctx context.Context, p droverdriver.ClaimParams) ([]*droverdriver.JobRow, error) {
	d.claims.Add(1)
	return d.Driver.JobClaim(ctx, p)
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
			worker, err = drover.NewClient[pgx.Tx](pgClaimCounted{d, &claims}, cfg)
		case *droversqlite.Driver:
			worker, err = drover.NewClient[*sql.Tx](sqliteClaimCounted{d, &claims}, cfg)
		case *droverfleet.Driver[pgx.Tx]:
			worker, err = drover.NewClient[pgx.Tx](fleetClaimCounted{d, &claims}, cfg)
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
			waitState(t, worker, row.ID, drover.JobStateCompleted)
		}
		// A job's producer claims it and claims again once it ran, finding
		// the queue empty; a recheck may add one.
		if got, most := claims.Load(), int64(queues+3*rounds); got > most {
			t.Errorf("%d claims for %d queues and %d jobs found by polls, want at most %d: idle queues' producers claim at every poll", got, queues, rounds, most)
		}
	})
}
