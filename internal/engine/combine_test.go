package engine

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// slotExec is a store whose claims wait for the test: a claim of one
// claimer blocks until solo is closed, a claim for several until slotted
// is closed, after it has said so on claiming. It hands out one job per
// claimer, numbered from 1, and records the jobs released.
type slotExec struct {
	droverdriver.Executor
	solo, slotted chan struct{}
	claiming      chan []droverdriver.ClaimSlot
	mu            sync.Mutex
	next          int64
	released      []droverdriver.Result
	// route, when set, is the routing of the job claimed under a slot.
	route func(droverdriver.ClaimSlot) *drovertype.Routing
}

func (f *slotExec) QueueSettingsGet(context.Context, string) (*drovertype.QueueSettings, error) {
	return nil, nil
}

func (f *slotExec) job(owner string, token drovertype.LeaseToken) *drovertype.JobRow {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next++
	return &drovertype.JobRow{ID: f.next, Attempt: 1, Queue: "q", LeaseOwner: owner, LeaseToken: token}
}

func (f *slotExec) JobClaim(_ context.Context, p droverdriver.ClaimParams) ([]*drovertype.JobRow, error) {
	<-f.solo
	return []*drovertype.JobRow{f.job(p.Owner, drovertype.NewLeaseToken())}, nil
}

func (f *slotExec) JobClaimSlots(_ context.Context, p droverdriver.ClaimParams, slots []droverdriver.ClaimSlot) ([]*drovertype.JobRow, error) {
	f.claiming <- slots
	<-f.slotted
	rows := make([]*drovertype.JobRow, len(slots))
	for i, s := range slots {
		rows[i] = f.job(s.Owner, s.Token)
		if f.route != nil {
			rows[i].Routing = f.route(s)
		}
	}
	return rows, nil
}

func (f *slotExec) JobFinishMany(_ context.Context, p droverdriver.FinishParams) (droverdriver.FinishResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.released = append(f.released, p.Results...)
	return droverdriver.FinishResult{All: true}, nil
}

// counts returns the statements c has under way and the claims waiting.
func counts(c *Combiner) (inFlight, waiting int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range c.groups {
		inFlight += g.inFlight
		waiting += len(g.waiting)
	}
	return inFlight, waiting
}

// TestCombinerSharesOutOneClaim: claims that arrive while their group has
// as many statements under way as it may are claimed by one statement, each gets exactly the
// job claimed under its own slot, and the job of a claimer that stopped
// waiting while the statement ran is released, not lost or handed on.
func TestCombinerSharesOutOneClaim(t *testing.T) {
	t.Parallel()
	ex := &slotExec{solo: make(chan struct{}), slotted: make(chan struct{}), claiming: make(chan []droverdriver.ClaimSlot, 1)}
	var c Combiner
	var s Settings
	params := func(name string) droverdriver.ClaimParams {
		return droverdriver.ClaimParams{Queue: "q", Max: 1, Owner: name, Lease: 30e9, Worker: &droverdriver.Worker{Name: name, Type: "gpu"}}
	}
	type answer struct {
		rows []*drovertype.JobRow
		err  error
	}
	answers := map[string]chan answer{}
	ctxs := map[string]context.CancelFunc{}
	claim := func(name string) {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		ch := make(chan answer, 1)
		answers[name], ctxs[name] = ch, cancel
		go func() {
			rows, err := c.Claim(ctx, ex, &s, params(name))
			ch <- answer{rows, err}
		}()
	}
	// The first two run alone and hold their statements open.
	claim("first")
	claim("second")
	waitfor.Cond(t, "two claims under way", func() bool { f, _ := counts(&c); return f == maxInFlight })
	names := []string{"w1", "w2", "w3", "leaver"}
	for _, n := range names {
		claim(n)
	}
	waitfor.Cond(t, "four claims waiting for the first two", func() bool { _, n := counts(&c); return n == 4 })
	close(ex.solo)
	for _, n := range []string{"first", "second"} {
		if a := <-answers[n]; a.err != nil || len(a.rows) != 1 || a.rows[0].LeaseOwner != n {
			t.Fatalf("%s claim: %v, %v", n, a.rows, a.err)
		}
	}
	slots := <-ex.claiming
	slotOf := map[string]droverdriver.ClaimSlot{}
	var owners []string
	for _, sl := range slots {
		owners = append(owners, sl.Owner)
		slotOf[sl.Owner] = sl
		if sl.Worker.Name != sl.Owner || sl.Worker.Type != "gpu" {
			t.Errorf("slot of %s presents worker %+v", sl.Owner, sl.Worker)
		}
	}
	if slices.Sort(owners); !slices.Equal(owners, []string{"leaver", "w1", "w2", "w3"}) {
		t.Fatalf("one statement for the waiting claims: slots %v, want one for each", owners)
	}
	// The leaver goes while the statement runs: its job must come back.
	ctxs["leaver"]()
	if a := <-answers["leaver"]; !errors.Is(a.err, context.Canceled) || a.rows != nil {
		t.Fatalf("leaver: %v, %v; want no jobs and its context's error", a.rows, a.err)
	}
	close(ex.slotted)

	seen := map[int64]string{}
	for _, n := range names[:3] {
		a := <-answers[n]
		if a.err != nil || len(a.rows) != 1 {
			t.Fatalf("%s: %v, %v; want one job", n, a.rows, a.err)
		}
		r := a.rows[0]
		if r.LeaseOwner != n || r.LeaseToken != slotOf[n].Token {
			t.Errorf("%s got job %d of owner %s: not the job claimed under its slot", n, r.ID, r.LeaseOwner)
		}
		if other, dup := seen[r.ID]; dup {
			t.Errorf("job %d handed to %s and %s", r.ID, other, n)
		}
		seen[r.ID] = n
	}
	waitfor.Cond(t, "the leaver's job released", func() bool {
		ex.mu.Lock()
		defer ex.mu.Unlock()
		return len(ex.released) > 0
	})
	ex.mu.Lock()
	rel := ex.released
	ex.mu.Unlock()
	if len(rel) != 1 || rel[0].LeaseToken != slotOf["leaver"].Token || rel[0].Outcome != droverdriver.OutcomeReleased {
		t.Fatalf("released %+v; want the leaver's one job, by its slot's token", rel)
	}
	if _, handed := seen[rel[0].ID]; handed {
		t.Fatalf("job %d released and handed out", rel[0].ID)
	}
	waitfor.Cond(t, "the group idle again", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.groups) == 0
	})
}

// TestCombinerReleasesJobsMeantForAnother: a job aimed at one claimer's
// name that the statement claimed under another's slot goes to neither:
// it is released, and the claimer whose slot it took gets nothing.
func TestCombinerReleasesJobsMeantForAnother(t *testing.T) {
	t.Parallel()
	ex := &slotExec{solo: make(chan struct{}), slotted: make(chan struct{}), claiming: make(chan []droverdriver.ClaimSlot, 1),
		route: func(s droverdriver.ClaimSlot) *drovertype.Routing {
			if s.Owner == "w1" {
				return &drovertype.Routing{Names: []string{"w2"}}
			}
			return &drovertype.Routing{Type: "gpu"}
		}}
	close(ex.slotted)
	var c Combiner
	var s Settings
	claim := func(name string) <-chan []*drovertype.JobRow {
		ch := make(chan []*drovertype.JobRow, 1)
		go func() {
			rows, err := c.Claim(context.Background(), ex, &s, droverdriver.ClaimParams{Queue: "q", Max: 1, Owner: name, Lease: 30e9,
				Worker: &droverdriver.Worker{Name: name, Type: "gpu"}})
			if err != nil {
				t.Error(err)
			}
			ch <- rows
		}()
		return ch
	}
	first, second := claim("first"), claim("second")
	waitfor.Cond(t, "two claims under way", func() bool { f, _ := counts(&c); return f == maxInFlight })
	w1, w2 := claim("w1"), claim("w2")
	waitfor.Cond(t, "two claims waiting", func() bool { _, n := counts(&c); return n == 2 })
	close(ex.solo)
	<-first
	<-second
	slots := <-ex.claiming
	if got := <-w1; len(got) != 0 {
		t.Fatalf("w1 got %d jobs; the one claimed under its slot is aimed at w2", len(got))
	}
	if got := <-w2; len(got) != 1 || got[0].LeaseOwner != "w2" {
		t.Fatalf("w2 got %+v, want the job claimed under its own slot", got)
	}
	waitfor.Cond(t, "the stray job released", func() bool {
		ex.mu.Lock()
		defer ex.mu.Unlock()
		return len(ex.released) == 1
	})
	var w1Token drovertype.LeaseToken
	for _, sl := range slots {
		if sl.Owner == "w1" {
			w1Token = sl.Token
		}
	}
	if ex.released[0].LeaseToken != w1Token {
		t.Fatalf("released %+v, want the job of w1's slot", ex.released[0])
	}
}
