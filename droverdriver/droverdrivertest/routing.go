package droverdrivertest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/engine"
)

// routed is a job of queue routed by r.
func routed(queue string, r drovertype.Routing) droverdriver.InsertParams {
	return with(job(queue), func(p *droverdriver.InsertParams) { p.Routing = &r })
}

// inOrder gives jobs run_at times a second apart in the past, in their
// order, so that their claim order does not depend on the IDs a store
// hands out (plain and routed jobs take different insert statements).
func inOrder(jobs ...droverdriver.InsertParams) []droverdriver.InsertParams {
	start := time.Now().Add(-time.Hour)
	for i := range jobs {
		jobs[i].RunAt = start.Add(time.Duration(i) * time.Second)
	}
	return jobs
}

// claimW claims up to n jobs of queue as worker w (nil: a plain worker).
func claimW(t *testing.T, e droverdriver.Executor, queue string, n int, w *droverdriver.Worker) []*drovertype.JobRow {
	t.Helper()
	rows, err := e.JobClaim(context.Background(), named(droverdriver.ClaimParams{Queue: queue, Max: n, Owner: "w1", Lease: time.Minute, Worker: w}, false))
	if err != nil {
		t.Fatalf("claim as %+v: %v", w, err)
	}
	return rows
}

// slotClaimer opens a store whose executor claims for several claimers
// at once, and skips the test on a store that claims for one at a time.
func slotClaimer(t *testing.T, setup opener) (droverdriver.Driver, droverdriver.SlotClaimer) {
	t.Helper()
	d := setup(t)
	sc, ok := d.Executor().(droverdriver.SlotClaimer)
	if !ok {
		t.Skip("the driver claims for one claimer at a time")
	}
	return d, sc
}

// claimStrict claims up to n jobs of queue as the engine claims a queue
// its cached settings say is in strict order: limited and strict, under
// the settings row's lock.
func claimStrict(t *testing.T, e droverdriver.Executor, queue string, n int, w *droverdriver.Worker) []*drovertype.JobRow {
	t.Helper()
	rows, err := e.JobClaim(context.Background(), named(droverdriver.ClaimParams{Queue: queue, Max: n, Owner: "w1", Lease: time.Minute,
		Worker: w, Limited: true}, true))
	if err != nil {
		t.Fatalf("strict claim as %+v: %v", w, err)
	}
	return rows
}

func setStrict(t *testing.T, e droverdriver.Executor, queue string, n int) {
	t.Helper()
	if s, err := e.QueueSettingsSet(context.Background(), droverdriver.QueueSettingsSetParams{Queue: queue, Strict: &n}); err != nil || s.Strict != n {
		t.Fatalf("set strict order %d: %+v, %v", n, s, err)
	}
}

func testRouting(t *testing.T, setup opener) {
	t.Run("JobClaimRouted/matching", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		gpu := &droverdriver.Worker{Name: "g1", Type: "gpu", Labels: map[string]string{"region": "eu", "arch": "amd64"}}
		cpu := &droverdriver.Worker{Name: "c1", Type: "cpu"}
		labelled := &droverdriver.Worker{Name: "l1", Labels: map[string]string{"region": "eu"}}
		// One set of jobs per worker, in a queue of its own, so that each
		// worker's claim shows exactly what it matches.
		jobs := []struct {
			name string
			r    *drovertype.Routing // nil: plain
		}{
			{"plain", nil},
			{"type gpu", &drovertype.Routing{Type: "gpu"}},
			{"type cpu", &drovertype.Routing{Type: "cpu"}},
			{"name g1", &drovertype.Routing{Names: []string{"g1"}}},
			{"name c1", &drovertype.Routing{Names: []string{"c1"}}},
			{"names g1 c1", &drovertype.Routing{Names: []string{"c1", "g1"}}},
			{"names x y", &drovertype.Routing{Names: []string{"x", "y"}}},
			{"label region=eu", &drovertype.Routing{Labels: map[string]string{"region": "eu"}}},
			{"label region=us", &drovertype.Routing{Labels: map[string]string{"region": "us"}}},
			{"gpu in eu", &drovertype.Routing{Type: "gpu", Labels: map[string]string{"region": "eu"}}},
			{"gpu on arm", &drovertype.Routing{Type: "gpu", Labels: map[string]string{"arch": "arm64"}}},
			{"name g1 as cpu", &drovertype.Routing{Type: "cpu", Names: []string{"g1"}}},
			{"names g1 c1 as gpu", &drovertype.Routing{Type: "gpu", Names: []string{"g1", "c1"}}},
		}
		for _, tc := range []struct {
			worker *droverdriver.Worker
			want   []string
		}{
			{nil, []string{"plain"}},
			{gpu, []string{"plain", "type gpu", "name g1", "names g1 c1", "label region=eu", "gpu in eu", "names g1 c1 as gpu"}},
			{cpu, []string{"plain", "type cpu", "name c1", "names g1 c1"}},
			{labelled, []string{"plain", "label region=eu"}},
		} {
			queue := "q-plain"
			if tc.worker != nil {
				queue = "q-" + tc.worker.Name
			}
			byID := map[int64]string{}
			for _, j := range jobs {
				p := job(queue)
				p.Routing = j.r
				byID[insert(t, d.Executor(), p)[0]] = j.name
			}
			var got []string
			for _, r := range claimW(t, d.Executor(), queue, 100, tc.worker) {
				got = append(got, byID[r.ID])
				// The stored job is the same matching Go makes.
				if !tc.worker.Matches(get(t, d.Executor(), r.ID).Routing) {
					t.Errorf("%s claimed %q, which Worker.Matches refuses", queue, byID[r.ID])
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("worker %+v claimed %q, want %q", tc.worker, got, tc.want)
			}
			// What it left, no claim of its takes.
			if more := claimW(t, d.Executor(), queue, 100, tc.worker); len(more) != 0 {
				t.Errorf("worker %+v claimed %v on a second claim", tc.worker, ids(more))
			}
		}
	})

	t.Run("JobClaimRouted/order", func(t *testing.T) {
		t.Parallel()
		// Within what a worker matches, priority, then run_at, then ID,
		// across plain and routed jobs; other workers' jobs are no part of
		// its order.
		d := setup(t)
		gpu := drovertype.Routing{Type: "gpu"}
		prio := func(p droverdriver.InsertParams, n int) droverdriver.InsertParams {
			return with(p, func(p *droverdriver.InsertParams) { p.Priority = n })
		}
		jobs := inOrder(
			prio(routed("q", gpu), 2),
			prio(job("q"), 1),
			prio(routed("q", drovertype.Routing{Type: "cpu"}), 0),
			prio(routed("q", gpu), 1),
			prio(routed("q", drovertype.Routing{Names: []string{"g"}}), 1),
			prio(job("q"), 0),
			prio(routed("q", gpu), 0),
		)
		jobs[3].RunAt = jobs[0].RunAt.Add(-time.Hour) // earliest of its priority
		jobs[6].RunAt = time.Now().Add(time.Hour)     // scheduled: not claimable
		got := insert(t, d.Executor(), jobs...)
		w := &droverdriver.Worker{Name: "g", Type: "gpu"}
		var order []int64
		for {
			rows := claimW(t, d.Executor(), "q", 2, w)
			if len(rows) == 0 {
				break
			}
			order = append(order, ids(rows)...)
		}
		if want := []int64{got[5], got[3], got[1], got[4], got[0]}; !slices.Equal(order, want) {
			t.Fatalf("claimed %v, want %v", order, want)
		}
	})

	t.Run("JobClaimRouted/never a job it does not match", func(t *testing.T) {
		t.Parallel()
		// Random jobs, random workers claiming at once: every job claimed
		// matches its claimer, and what is left matches none of them.
		d := setup(t)
		rng := rand.New(rand.NewPCG(1, 2))
		types, names := []string{"a", "b", "c"}, []string{"w0", "w1", "w2", "w3"}
		labelOf := func() map[string]string {
			switch rng.IntN(3) {
			case 0:
				return nil
			case 1:
				return map[string]string{"zone": []string{"x", "y"}[rng.IntN(2)]}
			}
			return map[string]string{"zone": "x", "disk": "ssd"}
		}
		var workers []*droverdriver.Worker
		for i, n := range names {
			workers = append(workers, &droverdriver.Worker{Name: n, Type: types[i%len(types)], Labels: labelOf()})
		}
		var batch []droverdriver.InsertParams
		for range 400 {
			r := &drovertype.Routing{Labels: labelOf()}
			if rng.IntN(2) == 0 {
				r.Type = types[rng.IntN(len(types))]
			}
			switch rng.IntN(4) {
			case 0:
				r.Names = []string{names[rng.IntN(len(names))]}
			case 1:
				r.Names = []string{names[rng.IntN(len(names))], "elsewhere"}
			}
			p := job("q")
			if droverdriver.RouteKey(r) != "" {
				p.Routing = r
			}
			p.Priority = rng.IntN(3)
			batch = append(batch, p)
		}
		jobIDs := insert(t, d.Executor(), batch...)
		routingOf := map[int64]*drovertype.Routing{}
		for i, id := range jobIDs {
			routingOf[id] = batch[i].Routing
		}
		var mu sync.Mutex
		claimedBy := map[int64]int{}
		var wg sync.WaitGroup
		for wi, w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					rows, err := d.Executor().JobClaim(context.Background(), named(droverdriver.ClaimParams{Queue: "q", Max: 1 + wi, Owner: w.Name,
						Lease: time.Minute, Worker: w}, false))
					if err != nil {
						t.Errorf("claim: %v", err)
						return
					}
					if len(rows) == 0 {
						return
					}
					mu.Lock()
					for _, r := range rows {
						if prev, ok := claimedBy[r.ID]; ok {
							t.Errorf("job %d claimed by %s and %s", r.ID, workers[prev].Name, w.Name)
						}
						claimedBy[r.ID] = wi
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		for _, id := range jobIDs {
			wi, ok := claimedBy[id]
			if ok && !workers[wi].Matches(routingOf[id]) {
				t.Errorf("worker %+v claimed job %d routed %+v", workers[wi], id, routingOf[id])
			}
			if ok {
				continue
			}
			for _, w := range workers {
				if w.Matches(routingOf[id]) {
					t.Errorf("job %d routed %+v was left, though %s matches it", id, routingOf[id], w.Name)
				}
			}
		}
		if len(claimedBy) == 0 {
			t.Fatal("no job was claimed")
		}
	})

	t.Run("JobClaimRouted/kinds and position", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		w := &droverdriver.Worker{Type: "gpu"}
		other := with(routed("q", drovertype.Routing{Type: "gpu"}), func(p *droverdriver.InsertParams) { p.Kind = "other" })
		got := insert(t, d.Executor(), inOrder(routed("q", drovertype.Routing{Type: "gpu"}), other, job("q"), routed("q", drovertype.Routing{Type: "gpu"}))...)
		rows, err := d.Executor().JobClaim(context.Background(), named(droverdriver.ClaimParams{Queue: "q", Max: 10, Owner: "w", Lease: time.Minute,
			Worker: w, Kinds: []string{"noop"}, After: &droverdriver.ClaimPosition{RunAt: get(t, d.Executor(), got[0]).RunAt, ID: got[0]}}, false))
		if err != nil {
			t.Fatal(err)
		}
		if want := []int64{got[2], got[3]}; !slices.Equal(ids(rows), want) {
			t.Fatalf("claimed %v, want %v: its kinds, past the position", ids(rows), want)
		}
	})

	t.Run("JobClaimRouted/paused kinds", func(t *testing.T) {
		t.Parallel()
		// Kinds paused in the queue (ExceptKinds) stay waiting for routed
		// and strict claims as for plain ones; in strict order a paused
		// kind at the head stops the claim, as any head it cannot run.
		d := setup(t)
		paused := func(p droverdriver.InsertParams) droverdriver.InsertParams {
			return with(p, func(p *droverdriver.InsertParams) { p.Kind = "paused" })
		}
		w := &droverdriver.Worker{Type: "gpu"}
		got := insert(t, d.Executor(), inOrder(paused(routed("q", drovertype.Routing{Type: "gpu"})), routed("q", drovertype.Routing{Type: "gpu"}),
			paused(job("q")), job("q"))...)
		rows, err := d.Executor().JobClaim(context.Background(), named(droverdriver.ClaimParams{Queue: "q", Max: 10, Owner: "w", Lease: time.Minute,
			Worker: w, ExceptKinds: []string{"paused"}}, false))
		if err != nil {
			t.Fatal(err)
		}
		if want := []int64{got[1], got[3]}; !slices.Equal(ids(rows), want) {
			t.Fatalf("routed claim took %v, want %v: the kinds not paused", ids(rows), want)
		}

		s := setup(t)
		setStrict(t, s.Executor(), "s", 2)
		head := insert(t, s.Executor(), inOrder(paused(job("s")), job("s"))...)
		rows, err = s.Executor().JobClaim(context.Background(), named(droverdriver.ClaimParams{Queue: "s", Max: 5, Owner: "w", Lease: time.Minute,
			Limited: true, ExceptKinds: []string{"paused"}}, true))
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 0 {
			t.Fatalf("strict claim took %v past the paused head %d", ids(rows), head[0])
		}
		rows = claimStrict(t, s.Executor(), "s", 5, nil)
		if !slices.Equal(ids(rows), head) {
			t.Fatalf("strict claim after the resume took %v, want %v", ids(rows), head)
		}
	})

	t.Run("JobGet/routing", func(t *testing.T) {
		t.Parallel()
		// Routing is stored, returned, kept by finished jobs, and a
		// retried job returns to the workers it was meant for.
		ctx := context.Background()
		d := setup(t)
		r := drovertype.Routing{Type: "gpu", Names: []string{"b", "a"}, Labels: map[string]string{"k": "v"},
			OnAbsent: drovertype.AbsentFail, AbsentAfter: 60_000}
		id := insert(t, d.Executor(), routed("q", r))[0]
		j := get(t, d.Executor(), id)
		if j.Routing == nil || j.Routing.Type != "gpu" || !slices.Equal(j.Routing.Names, []string{"a", "b"}) ||
			j.Routing.Labels["k"] != "v" || j.Routing.OnAbsent != drovertype.AbsentFail || j.Routing.AbsentAfter != 60_000 {
			t.Fatalf("stored routing %+v", j.Routing)
		}
		if plain := get(t, d.Executor(), insert(t, d.Executor(), job("q"))[0]); plain.Routing != nil {
			t.Fatalf("a plain job reads routing %+v", plain.Routing)
		}
		w := &droverdriver.Worker{Name: "a", Type: "gpu", Labels: map[string]string{"k": "v"}}
		done := claimW(t, d.Executor(), "q", 1, w)
		if len(done) != 1 || done[0].ID != id {
			t.Fatalf("claimed %v, want %d", ids(done), id)
		}
		finish(t, d.Executor(), result(done[0], droverdriver.OutcomeCompleted))
		if f := get(t, d.Executor(), id); f.State != drovertype.JobStateCompleted || f.Routing == nil || f.Routing.Type != "gpu" {
			t.Fatalf("finished job %s with routing %+v", f.State, f.Routing)
		}
		if _, err := retry(ctx, d.Executor(), id, time.Now()); err != nil {
			t.Fatal(err)
		}
		if rows := claimW(t, d.Executor(), "q", 10, &droverdriver.Worker{Name: "c", Type: "gpu", Labels: map[string]string{"k": "v"}}); slices.Contains(ids(rows), id) {
			t.Fatalf("the retried job went to a worker it does not name")
		}
		if rows := claimW(t, d.Executor(), "q", 10, w); !slices.Equal(ids(rows), []int64{id}) {
			t.Fatalf("the retried job's worker claimed %v, want [%d]", ids(rows), id)
		}
	})

	t.Run("JobClaimStrict/order", func(t *testing.T) {
		t.Parallel()
		for _, n := range []int{1, 3} {
			t.Run(fmt.Sprint("max running ", n), func(t *testing.T) {
				t.Parallel()
				testStrictOrder(t, setup(t), n)
			})
		}
	})

	t.Run("JobClaimStrict/a failed job keeps its place", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		setStrict(t, d.Executor(), "q", 1)
		got := insert(t, d.Executor(), job("q"), job("q"), job("q"))
		a := claimStrict(t, d.Executor(), "q", 5, nil)
		if len(a) != 1 || a[0].ID != got[0] {
			t.Fatalf("claimed %v, want [%d]", ids(a), got[0])
		}
		if more := claimStrict(t, d.Executor(), "q", 5, nil); len(more) != 0 {
			t.Fatalf("claimed %v while the head runs, with room for one", ids(more))
		}
		finish(t, d.Executor(), failed(a[0], droverdriver.OutcomeRetry, "boom", time.Now().Add(time.Hour)))
		// The failed job waits for its retry at the head: nothing behind
		// it starts meanwhile.
		if more := claimStrict(t, d.Executor(), "q", 5, nil); len(more) != 0 {
			t.Fatalf("claimed %v while the failed head waits for its retry", ids(more))
		}
		if _, err := retry(ctx, d.Executor(), got[0], time.Now()); err != nil {
			t.Fatal(err)
		}
		var order []int64
		for range 3 {
			rows := claimStrict(t, d.Executor(), "q", 5, nil)
			if len(rows) != 1 {
				t.Fatalf("claimed %v, want one job", ids(rows))
			}
			order = append(order, rows[0].ID)
			finish(t, d.Executor(), result(rows[0], droverdriver.OutcomeCompleted))
		}
		if !slices.Equal(order, got) {
			t.Fatalf("started %v, want %v", order, got)
		}
	})

	t.Run("QueueHead", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		head := func() drovertype.QueueHead {
			t.Helper()
			h, err := d.Executor().QueueHead(ctx, "q")
			if err != nil {
				t.Fatal(err)
			}
			return h
		}
		if h := head(); h != (drovertype.QueueHead{}) {
			t.Fatalf("empty queue: %+v", h)
		}
		setStrict(t, d.Executor(), "q", 1)
		got := insert(t, d.Executor(), inOrder(job("q"), routed("q", drovertype.Routing{Type: "x"}), job("q"))...)
		if h := head(); h != (drovertype.QueueHead{ID: got[0]}) {
			t.Fatalf("before any claim: %+v, want job %d first in claim order", h, got[0])
		}
		a := claimStrict(t, d.Executor(), "q", 5, nil)
		if h := head(); h != (drovertype.QueueHead{ID: got[1], Running: 1}) {
			t.Fatalf("the first job running: %+v, want the routed job %d next and one running", h, got[1])
		}
		finish(t, d.Executor(), failed(a[0], droverdriver.OutcomeRetry, "boom", time.Now().Add(time.Hour)))
		if h := head(); h != (drovertype.QueueHead{ID: got[0], Returned: true}) {
			t.Fatalf("the first job waiting for its retry: %+v, want it at the head, returned", h)
		}
	})

	t.Run("JobClaimStrict/routing", func(t *testing.T) {
		t.Parallel()
		// The head goes to a worker that matches it; a worker that does not
		// gets nothing, even with its own jobs behind the head.
		d := setup(t)
		setStrict(t, d.Executor(), "q", 2)
		got := insert(t, d.Executor(), inOrder(routed("q", drovertype.Routing{Type: "x"}), routed("q", drovertype.Routing{Type: "y"}), job("q"),
			routed("q", drovertype.Routing{Type: "x"}))...)
		x, y := &droverdriver.Worker{Type: "x"}, &droverdriver.Worker{Type: "y"}
		if rows := claimStrict(t, d.Executor(), "q", 5, y); len(rows) != 0 {
			t.Fatalf("y claimed %v behind x's head", ids(rows))
		}
		if rows := claimStrict(t, d.Executor(), "q", 5, nil); len(rows) != 0 {
			t.Fatalf("a plain worker claimed %v behind x's head", ids(rows))
		}
		rows := claimStrict(t, d.Executor(), "q", 5, x)
		if !slices.Equal(ids(rows), got[:1]) {
			t.Fatalf("x claimed %v, want %v: the head, and not y's job behind it", ids(rows), got[:1])
		}
		if rows = claimStrict(t, d.Executor(), "q", 5, y); !slices.Equal(ids(rows), got[1:2]) {
			t.Fatalf("y claimed %v, want %v", ids(rows), got[1:2])
		}
		// Two run, the most strict order allows.
		if rows = claimStrict(t, d.Executor(), "q", 5, nil); len(rows) != 0 {
			t.Fatalf("claimed %v with two running", ids(rows))
		}
	})

	t.Run("JobClaimSlots/strict", func(t *testing.T) {
		t.Parallel()
		// Each head job goes to the first slot left that can run it, under
		// that slot's owner and token; the first job no slot left can run
		// stops the claim.
		d, sc := slotClaimer(t, setup)
		setStrict(t, d.Executor(), "q", 10)
		got := insert(t, d.Executor(), inOrder(routed("q", drovertype.Routing{Type: "x"}), routed("q", drovertype.Routing{Type: "y"}), job("q"),
			routed("q", drovertype.Routing{Type: "x"}), job("q"))...)
		slots := []droverdriver.ClaimSlot{
			{Owner: "a", Token: drovertype.NewLeaseToken(), Worker: &droverdriver.Worker{Name: "a", Type: "x"}},
			{Owner: "b", Token: drovertype.NewLeaseToken(), Worker: &droverdriver.Worker{Name: "b", Type: "y"}},
			{Owner: "c", Token: drovertype.NewLeaseToken(), Worker: &droverdriver.Worker{Name: "c", Type: "x"}},
			{Owner: "d", Token: drovertype.NewLeaseToken(), Worker: &droverdriver.Worker{Name: "d", Type: "y"}},
		}
		p := named(droverdriver.ClaimParams{Queue: "q", Lease: time.Minute, Limited: true, Worker: slots[0].Worker}, true)
		rows, err := sc.JobClaimSlots(context.Background(), p, slots)
		if err != nil {
			t.Fatal(err)
		}
		// x to a, y to b, the plain job to c, the second x to no one: d
		// runs y only, and nothing behind that x starts first.
		want := map[int64]droverdriver.ClaimSlot{got[0]: slots[0], got[1]: slots[1], got[2]: slots[2]}
		if len(rows) != len(want) {
			t.Fatalf("claimed %v, want %v", ids(rows), got[:3])
		}
		for _, r := range rows {
			s, ok := want[r.ID]
			if !ok || r.LeaseOwner != s.Owner || r.LeaseToken != s.Token {
				t.Fatalf("job %d claimed under %s, want the slot of %s", r.ID, r.LeaseOwner, s.Owner)
			}
			// The store fences by the slot's token: the job is its
			// claimer's alone.
			if done, err := engine.Finish(context.Background(), d.Executor(), []droverdriver.Result{{ID: r.ID, Attempt: r.Attempt,
				LeaseToken: s.Token, Outcome: droverdriver.OutcomeCompleted}}); err != nil || len(done) != 1 {
				t.Fatalf("finish job %d with its slot's token: %v, %v", r.ID, done, err)
			}
		}
	})

	t.Run("JobClaimSlots/routed", func(t *testing.T) {
		t.Parallel()
		// The jobs the slots' type matches, and those aimed at any slot's
		// name, in claim order, the first under the first slot and so on;
		// each row says whose it is and how it is routed.
		d, sc := slotClaimer(t, setup)
		got := insert(t, d.Executor(), inOrder(routed("q", drovertype.Routing{Names: []string{"b"}}), routed("q", drovertype.Routing{Type: "y"}),
			routed("q", drovertype.Routing{Names: []string{"zz"}}), job("q"), routed("q", drovertype.Routing{Type: "x"}))...)
		slots := []droverdriver.ClaimSlot{
			{Owner: "a", Token: drovertype.NewLeaseToken(), Worker: &droverdriver.Worker{Name: "a", Type: "x"}},
			{Owner: "b", Token: drovertype.NewLeaseToken(), Worker: &droverdriver.Worker{Name: "b", Type: "x"}},
			{Owner: "c", Token: drovertype.NewLeaseToken(), Worker: &droverdriver.Worker{Name: "c", Type: "x"}},
			{Owner: "e", Token: drovertype.NewLeaseToken(), Worker: &droverdriver.Worker{Name: "e", Type: "x"}},
		}
		p := named(droverdriver.ClaimParams{Queue: "q", Lease: time.Minute, Worker: slots[0].Worker}, false)
		rows, err := sc.JobClaimSlots(context.Background(), p, slots)
		if err != nil {
			t.Fatal(err)
		}
		// b's job lands in a's slot (the caller releases it), then the
		// plain job and x's; neither y's nor zz's.
		want := []int64{got[0], got[3], got[4]}
		if !slices.Equal(ids(rows), want) {
			t.Fatalf("claimed %v, want %v", ids(rows), want)
		}
		for i, r := range rows {
			if r.LeaseOwner != slots[i].Owner || r.LeaseToken != slots[i].Token {
				t.Fatalf("job %d claimed under %s, want slot %d's %s", r.ID, r.LeaseOwner, i, slots[i].Owner)
			}
		}
		if rt := rows[0].Routing; rt == nil || !slices.Equal(rt.Names, []string{"b"}) || rows[1].Routing != nil {
			t.Fatalf("routing returned %+v and %+v, want b's names and none", rows[0].Routing, rows[1].Routing)
		}
		if stored, err := d.Executor().JobGet(context.Background(), got[3]); err != nil || stored.LeaseOwner != "b" {
			t.Fatalf("the second job is stored under %q (%v), want b's slot", stored.LeaseOwner, err)
		}
	})

	t.Run("WorkerSeen", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		seen := func(ws ...drovertype.WorkerRecord) {
			t.Helper()
			if err := d.Executor().WorkerSeen(ctx, ws); err != nil {
				t.Fatal(err)
			}
		}
		list := func() map[string]drovertype.WorkerRecord {
			t.Helper()
			ws, err := d.Executor().WorkerList(ctx)
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]drovertype.WorkerRecord{}
			for _, w := range ws {
				out[w.Name] = w
			}
			return out
		}
		before := time.Now().Add(-time.Second)
		seen(drovertype.WorkerRecord{Name: "a", Type: "gpu", Labels: map[string]string{"k": "v"}, Queues: []string{"q1"}, Owner: "p1", Source: "http"},
			drovertype.WorkerRecord{Name: "b", Plain: true, Queues: []string{"q1", "q2"}, Owner: "p2", Source: "go"})
		seen(drovertype.WorkerRecord{Name: "a", Type: "gpu", Labels: map[string]string{"k": "w"}, Queues: []string{"q2"}, Owner: "p1", Source: "http"})
		ws := list()
		a, b := ws["a"], ws["b"]
		if a.Type != "gpu" || a.Labels["k"] != "w" || !slices.Equal(a.Queues, []string{"q1", "q2"}) || a.Owner != "p1" || a.Plain ||
			a.LastSeen.Before(before) || a.StartedAt.After(a.LastSeen) {
			t.Errorf("a: %+v; want its labels replaced and its queues merged", a)
		}
		if !b.Plain || b.Source != "go" || !slices.Equal(b.Queues, []string{"q1", "q2"}) {
			t.Errorf("b: %+v", b)
		}
		// Another process takes the name: its queues replace the old ones.
		seen(drovertype.WorkerRecord{Name: "a", Queues: []string{"q3"}, Owner: "p9", Source: "go", Plain: true})
		if a = list()["a"]; a.Owner != "p9" || !slices.Equal(a.Queues, []string{"q3"}) || !a.Plain {
			t.Errorf("a taken over: %+v", a)
		}
		// Kinds are replaced as a worker describes itself again; a
		// worker that names none (nil) runs every kind, one that names an
		// empty list runs none.
		seen(drovertype.WorkerRecord{Name: "k", Queues: []string{"q"}, Owner: "p3", Source: "http", Kinds: []string{"email", "sms"}},
			drovertype.WorkerRecord{Name: "e", Queues: []string{"q"}, Owner: "p4", Source: "go", Kinds: []string{}})
		if ws := list(); !slices.Equal(ws["k"].Kinds, []string{"email", "sms"}) || ws["e"].Kinds == nil || len(ws["e"].Kinds) != 0 ||
			ws["b"].Kinds != nil {
			t.Errorf("kinds: k %v, e %#v, b %#v; want [email sms], [] and nil", ws["k"].Kinds, ws["e"].Kinds, ws["b"].Kinds)
		}
		seen(drovertype.WorkerRecord{Name: "k", Queues: []string{"q"}, Owner: "p3", Source: "http"})
		if k := list()["k"]; k.Kinds != nil || !k.Runs("anything") {
			t.Errorf("k after naming no kinds: %#v, want nil (every kind)", k.Kinds)
		}
		if err := d.Executor().WorkerGone(ctx, "k", "p3"); err != nil {
			t.Fatal(err)
		}
		if err := d.Executor().WorkerGone(ctx, "e", "p4"); err != nil {
			t.Fatal(err)
		}
		// Gone only for the owner that holds the name.
		if err := d.Executor().WorkerGone(ctx, "a", "p1"); err != nil {
			t.Fatal(err)
		}
		if _, ok := list()["a"]; !ok {
			t.Error("a deleted by an owner that no longer holds it")
		}
		if err := d.Executor().WorkerGone(ctx, "a", "p9"); err != nil {
			t.Fatal(err)
		}
		if _, ok := list()["a"]; ok {
			t.Error("a not deleted by its owner")
		}
		if n, err := d.Executor().WorkerPrune(ctx, time.Now().Add(time.Minute)); err != nil || n != 1 || len(list()) != 0 {
			t.Errorf("prune: %d, %v; left %v", n, err, list())
		}
	})

	t.Run("RouteWaiting", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		gpu := drovertype.Routing{Type: "gpu"}
		later := time.Now().Add(time.Hour)
		got := insert(t, d.Executor(), routed("q", gpu), job("q"), routed("q", gpu), routed("r", gpu),
			with(routed("q", drovertype.Routing{Names: []string{"n"}}), func(p *droverdriver.InsertParams) { p.RunAt = later }),
			with(routed("q", gpu), func(p *droverdriver.InsertParams) { p.Kind = "render" }))
		claimOne(t, d.Executor(), "q", got[1]) // plain: not reported
		if rows := claimW(t, d.Executor(), "q", 1, &droverdriver.Worker{Type: "gpu"}); len(rows) != 1 || rows[0].ID != got[0] {
			t.Fatalf("claimed %v", ids(rows))
		}
		groups, err := d.Executor().RouteWaiting(ctx)
		if err != nil {
			t.Fatal(err)
		}
		type line struct {
			queue, key string
			jobs       int64
			sample     int64
		}
		var lines []line
		for _, g := range groups {
			lines = append(lines, line{g.Queue, droverdriver.RouteKey(g.Routing) + " " + g.Kind, g.Jobs, g.Sample})
		}
		slices.SortFunc(lines, func(a, b line) int { return strings.Compare(a.queue+a.key, b.queue+b.key) })
		want := []line{{"q", "n:n noop", 1, got[4]}, {"q", "t:gpu noop", 1, got[2]}, {"q", "t:gpu render", 1, got[5]},
			{"r", "t:gpu noop", 1, got[3]}}
		if !slices.Equal(lines, want) {
			t.Fatalf("groups %+v, want %+v", lines, want)
		}
	})

	t.Run("KindsWaiting", func(t *testing.T) {
		// The first jobs of a queue in claim order, grouped by kind: a
		// job of priority 0 before those of 1; routed and running jobs
		// and other queues' are not read, and the limit cuts the head.
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		kind := func(k string, priority int) droverdriver.InsertParams {
			return with(job("q"), func(p *droverdriver.InsertParams) { p.Kind, p.Priority = k, priority })
		}
		got := insert(t, d.Executor(), inOrder(kind("a", 1), kind("b", 1), kind("a", 1), kind("c", 0), kind("d", 2), kind("a", 1),
			routed("q", drovertype.Routing{Type: "gpu"}), job("other"))...)
		claimOne(t, d.Executor(), "q", got[3]) // c, the highest priority, runs
		type line struct {
			kind         string
			jobs, sample int64
		}
		for _, tc := range []struct {
			limit int
			want  []line
		}{
			{100, []line{{"a", 3, got[0]}, {"b", 1, got[1]}, {"d", 1, got[4]}}},
			{3, []line{{"a", 2, got[0]}, {"b", 1, got[1]}}},
		} {
			groups, err := d.Executor().KindsWaiting(ctx, "q", tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			var lines []line
			for _, g := range groups {
				if g.Queue != "q" || g.Routing != nil || g.OldestRunAt.IsZero() {
					t.Errorf("group %+v", g)
				}
				lines = append(lines, line{g.Kind, g.Jobs, g.Sample})
			}
			if !slices.Equal(lines, tc.want) {
				t.Errorf("limit %d: groups %+v, want %+v", tc.limit, lines, tc.want)
			}
		}
	})

	t.Run("JobRouteAbsent", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		long := time.Now().Add(-2 * time.Hour)
		named := func(name string, policy drovertype.AbsentPolicy, after drovertype.Millis, runAt time.Time) droverdriver.InsertParams {
			return with(routed("q", drovertype.Routing{Type: "gpu", Names: []string{name}, OnAbsent: policy, AbsentAfter: after}),
				func(p *droverdriver.InsertParams) { p.RunAt = runAt })
		}
		got := insert(t, d.Executor(),
			named("away", drovertype.AbsentFallback, 60_000, long),
			named("away", drovertype.AbsentFail, 60_000, long),
			named("away", drovertype.AbsentWait, 60_000, long),
			named("here", drovertype.AbsentFallback, 3_600_000, long),
			named("busy", drovertype.AbsentFail, 1, long),
			named("away", drovertype.AbsentFail, 60_000, time.Now()),
		)
		// "away" never registered; "here" was seen just now; "busy" was
		// seen too long ago for its job's 1 ms, but holds a running job
		// under a lease that has not expired, which shows it is there.
		if err := d.Executor().WorkerSeen(ctx, []drovertype.WorkerRecord{
			{Name: "here", Type: "gpu", Queues: []string{"q"}, Owner: "here", Source: "http"},
			{Name: "busy", Type: "gpu", Queues: []string{"q"}, Owner: "busy", Source: "http"},
		}); err != nil {
			t.Fatal(err)
		}
		busy := insert(t, d.Executor(), job("other"))[0]
		if rows := claimAs(t, d.Executor(), "busy", "other", 1, 3*time.Hour); len(rows) != 1 || rows[0].ID != busy {
			t.Fatalf("claimed %v", ids(rows))
		}
		failedN, fell, err := engine.RouteAbsent(ctx, d.Executor(), droverdriver.RouteAbsentParams{Now: time.Now().Add(time.Second), Limit: 100})
		if err != nil || failedN != 1 || fell != 1 {
			t.Fatalf("pass: %d failed, %d fell back, %v; want 1 and 1", failedN, fell, err)
		}
		fb := get(t, d.Executor(), got[0])
		if fb.State != drovertype.JobStateAvailable || droverdriver.RouteKey(fb.Routing) != "t:gpu" || len(fb.Routing.Names) != 0 ||
			!slices.Equal(fb.Routing.FellBackFrom, []string{"away"}) {
			t.Fatalf("fallback job: %s %+v; want available for any gpu worker", fb.State, fb.Routing)
		}
		fl := get(t, d.Executor(), got[1])
		if errs := attemptErrors(t, fl); fl.State != drovertype.JobStateDiscarded || len(errs) != 1 || !strings.Contains(errs[0].Error, "away") {
			t.Fatalf("failed job: %s %+v", fl.State, errs)
		}
		for _, id := range got[2:] {
			if j := get(t, d.Executor(), id); j.State != drovertype.JobStateAvailable || len(j.Routing.Names) != 1 {
				t.Errorf("job %d: %s %+v; want it left waiting for its worker", id, j.State, j.Routing)
			}
		}
		// Any gpu worker now takes the fallen-back job, and no other
		// routed one of these.
		rows := claimW(t, d.Executor(), "q", 10, &droverdriver.Worker{Name: "g2", Type: "gpu"})
		if !slices.Equal(ids(rows), got[:1]) {
			t.Fatalf("another gpu worker claimed %v, want %v", ids(rows), got[:1])
		}
	})
}

// testStrictOrder runs 8 claimers at once on a queue in strict order with
// room for n, each finishing what it claims at once, and checks from the
// stored jobs that they started in claim order (priority, run_at, ID)
// with no inversion, and never more than n at once.
func testStrictOrder(t *testing.T, d droverdriver.Driver, n int) {
	ctx := context.Background()
	setStrict(t, d.Executor(), "q", n)
	rng := rand.New(rand.NewPCG(3, 4))
	batch := make([]droverdriver.InsertParams, 200)
	for i := range batch {
		batch[i] = with(job("q"), func(p *droverdriver.InsertParams) { p.Priority = rng.IntN(3) })
	}
	got := insert(t, d.Executor(), batch...)
	insert(t, d.Executor(), job("other")) // another queue is no part of the order
	var wg sync.WaitGroup
	for c := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for idle := 0; idle < 50; {
				// Half the claimers know the queue is strict (one round
				// trip), half only that it has settings: the row decides.
				rows, err := d.Executor().JobClaim(ctx, named(droverdriver.ClaimParams{Queue: "q", Max: 1 + c%3, Owner: fmt.Sprint("c", c),
					Lease: time.Minute, Limited: true}, c%2 == 0))
				if err != nil {
					t.Errorf("claim: %v", err)
					return
				}
				if len(rows) == 0 {
					idle++
					if left, err := d.Executor().JobCountByState(ctx, "q"); err == nil && left[drovertype.JobStateAvailable] == 0 {
						return
					}
					continue
				}
				idle = 0
				res := make([]droverdriver.Result, len(rows))
				for i, r := range rows {
					res[i] = result(r, droverdriver.OutcomeCompleted)
				}
				if _, err := engine.Finish(ctx, d.Executor(), res); err != nil {
					t.Errorf("finish: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	jobs := make([]*drovertype.JobRow, len(got))
	for i, id := range got {
		jobs[i] = get(t, d.Executor(), id)
		if jobs[i].State != drovertype.JobStateCompleted || jobs[i].AttemptedAt == nil {
			t.Fatalf("job %d is %s", id, jobs[i].State)
		}
	}
	slices.SortFunc(jobs, func(a, b *drovertype.JobRow) int {
		return droverdriver.PositionOf(a).Compare(droverdriver.PositionOf(b))
	})
	inversions := 0
	for i := 1; i < len(jobs); i++ {
		if jobs[i].AttemptedAt.Before(*jobs[i-1].AttemptedAt) {
			inversions++
		}
	}
	if inversions > 0 {
		t.Errorf("%d jobs started before a job ahead of them in claim order", inversions)
	}
	// At each start, fewer than n others had started and not finished.
	for _, j := range jobs {
		running := 0
		for _, o := range jobs {
			if o != j && o.AttemptedAt.Before(*j.AttemptedAt) && o.FinalizedAt.After(*j.AttemptedAt) {
				running++
			}
		}
		if running >= n {
			t.Fatalf("job %d started with %d others running, strict order allows %d at once", j.ID, running, n)
		}
	}
}
