package engine

import (
	"context"
	"slices"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// Routing (droverdriver/routing.go): which workers are live, which waiting
// jobs none of them can take, and the leader's absent-worker policy.

// WorkerLiveFor is how recently a worker must have been seen (its
// registry row's last_seen) to count as live: a Go client registers at
// every heartbeat, at least every WorkerSeenEvery, and the HTTP server on
// a remote worker's claims and lease extensions, at most once per
// WorkerSeenEvery per worker and server.
const WorkerLiveFor = time.Minute

// WorkerSeenEvery is how often a live worker's registry row is written.
const WorkerSeenEvery = 15 * time.Second

// WorkerForgetAfter is how long a worker's row outlives its last sighting
// before the leader deletes it: long enough for a list to show a worker
// that died, and for a job aimed at it to say who it waits for.
const WorkerForgetAfter = time.Hour

// Workers reads the registry and the owners of running jobs, and says
// which workers are live at now.
func Workers(ctx context.Context, ex droverdriver.Executor, now time.Time) ([]drovertype.WorkerInfo, error) {
	recs, err := ex.WorkerList(ctx)
	if err != nil {
		return nil, err
	}
	owners, err := ex.LeaseOwners(ctx)
	if err != nil {
		return nil, err
	}
	byOwner := make(map[string]drovertype.LeaseOwner, len(owners))
	for _, o := range owners {
		byOwner[o.Owner] = o
	}
	out := make([]drovertype.WorkerInfo, len(recs))
	for i, r := range recs {
		w := drovertype.WorkerInfo{WorkerRecord: r}
		if o, ok := byOwner[r.Owner]; ok {
			w.JobsHeld, w.LeaseExpiresAt = o.Running, o.LeaseExpiresAt
		}
		w.Live = now.Sub(r.LastSeen) < WorkerLiveFor || w.LeaseExpiresAt.After(now)
		out[i] = w
	}
	return out, nil
}

// Unroutable returns the groups of waiting jobs that no live worker can
// take: none works their queue, matches their routing and runs their kind.
func Unroutable(groups []droverdriver.RouteGroup, workers []drovertype.WorkerInfo) []droverdriver.RouteGroup {
	out := []droverdriver.RouteGroup{}
	for _, g := range groups {
		if !Routable(g.Queue, g.Kind, g.Routing, workers) {
			out = append(out, g)
		}
	}
	return out
}

// Routable reports whether a live worker of workers works queue (its
// registry row lists it), matches routing and runs kind.
func Routable(queue, kind string, routing *drovertype.Routing, workers []drovertype.WorkerInfo) bool {
	for i := range workers {
		w := &workers[i]
		if w.Live && slices.Contains(w.Queues, queue) && droverdriver.WorkerOf(&w.WorkerRecord).Matches(routing) && w.Runs(kind) {
			return true
		}
	}
	return false
}

// KindsHead is how many of a queue's waiting plain jobs, in claim order,
// the report of unroutable jobs reads for kinds no live worker runs
// (KindsWaiting): a job no worker claims rises to the head of its queue
// as the others are claimed past it, so the head is where it shows,
// however long the backlog behind.
const KindsHead = 1000

// KindQueues returns the queues whose plain jobs may be of a kind no live
// worker runs: those that live workers work, every one of which named the
// kinds it runs. A queue with a live worker that named none (a remote
// worker claiming every kind) has none, and neither has a queue no live
// worker works (nothing there runs, whatever its kind).
func KindQueues(workers []drovertype.WorkerInfo) []string {
	all := map[string]bool{}
	for i := range workers {
		w := &workers[i]
		if !w.Live {
			continue
		}
		for _, q := range w.Queues {
			all[q] = all[q] || w.Kinds == nil
		}
	}
	var out []string
	for q, anyKind := range all {
		if !anyKind {
			out = append(out, q)
		}
	}
	slices.Sort(out)
	return out
}

// RouteAbsent applies the absent-worker policy (droverdriver.AbsentPolicy)
// to at most p.Limit jobs: jobs falling back become claimable by their
// type, failing ones end as discarded, settled in the same transaction
// (their workflow, batch, key and unique key) like any other end. It
// reports how many jobs it failed and how many fell back.
func RouteAbsent(ctx context.Context, ex droverdriver.Executor, p droverdriver.RouteAbsentParams) (failed, fellBack int, err error) {
	err = ex.Tx(ctx, func(ctx context.Context, tx droverdriver.Executor) error {
		rows, n, err := tx.JobRouteAbsent(ctx, p)
		if err != nil {
			return err
		}
		failed, fellBack = len(rows), n
		return Ended(ctx, tx, rows, nil)
	})
	if err != nil {
		return 0, 0, err
	}
	return failed, fellBack, nil
}
