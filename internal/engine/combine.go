package engine

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// Combiner gathers the concurrent one-job claims of one process that ask
// the same of a queue into one statement, and shares its rows out.
//
// Typed workers that ask a replica for one job at a time (remote workers
// through Remote.Claim and the HTTP API) each ran a claim of their own: a
// statement and a commit that waits for the disk, and in a queue in
// strict order a turn on the queue's settings row, so that sixteen workers
// queued behind one another on one lock (issue 36). A claim that finds
// another of the same group under way now waits for it to end and joins
// the claims that arrived meanwhile: the next statement claims for all of
// them (droverdriver.SlotClaimer), each job under its own claimer's owner
// and lease token, as a claim of its own would have stored it. A claim
// that finds fewer than maxInFlight statements of its group under way
// runs at once, alone, as before: combining costs claimers that seldom
// meet nothing, and claimers spread over many replicas, a few to each,
// keep their claims as concurrent as they were (one that waited for the
// statement before it and then queued for the queue's lock would wait
// twice).
//
// Claims combine when they take one job and ask the same of the queue:
// the same statement (routed or strict, a worker that says what it is),
// kinds, lease and clock, and for a routed claim the same worker type and
// labels. The claimers of a strict queue combine whatever their workers:
// the statement gives each job of the head to a claimer that can run it.
// Routed claimers' names may differ: a job aimed at one name can be
// claimed under another claimer's slot, and is then released (it waits
// again, its attempt undone) rather than handed to a claimer it is not
// meant for; so is a job claimed for a claimer that stopped waiting (its
// context ended), which is never lost.
// A store without SlotClaimer, and every other claim, takes Claim's path.
type Combiner struct {
	mu     sync.Mutex
	groups map[string]*claimGroup
}

// maxSlots bounds the claimers of one combined claim; more wait for the
// next statement.
const maxSlots = 100

// maxInFlight is how many statements of one group run at once: a claim
// waits to be combined only when this many are under way. Two keep a
// group's claims flowing while one statement waits for a lock or a
// commit, and still gather everything that arrives meanwhile.
const maxInFlight = 2

// claimGroup is the claims of one group: how many of its statements are
// under way, and the claims waiting for the next.
type claimGroup struct {
	inFlight int
	waiting  []*slotWaiter
}

// slotWaiter is one claim waiting for a combined statement. The
// combiner's lock guards delivered and gone, which decide, once, whether
// the claimer takes its rows or has left them to be released.
type slotWaiter struct {
	ctx       context.Context
	p         droverdriver.ClaimParams
	done      chan struct{}
	rows      []*drovertype.JobRow
	err       error
	delivered bool
	gone      bool
}

// Claim claims as the package's Claim does, combining p with concurrent
// claims of its group when p takes one job as a worker that says what it
// is and ex can claim for several claimers.
func (c *Combiner) Claim(ctx context.Context, ex droverdriver.Executor, settings *Settings, p droverdriver.ClaimParams) ([]*drovertype.JobRow, error) {
	sc, ok := ex.(droverdriver.SlotClaimer)
	if !ok || p.Max != 1 || p.Worker == nil || p.After != nil || !p.Token.IsZero() {
		return Claim(ctx, ex, settings, p)
	}
	p, none, err := planClaim(ctx, ex, settings, p)
	if err != nil {
		return nil, err
	}
	if none {
		return []*drovertype.JobRow{}, nil
	}
	if p.Variant != droverdriver.ClaimRouted && p.Variant != droverdriver.ClaimStrict {
		return ex.JobClaim(ctx, p)
	}
	key := groupKey(p)
	c.mu.Lock()
	if c.groups == nil {
		c.groups = map[string]*claimGroup{}
	}
	g := c.groups[key]
	if g == nil {
		g = &claimGroup{}
		c.groups[key] = g
	}
	if g.inFlight < maxInFlight {
		g.inFlight++
		c.mu.Unlock()
		rows, err := ex.JobClaim(ctx, p)
		c.next(key, g, ex, sc)
		return rows, err
	}
	w := &slotWaiter{ctx: ctx, p: p, done: make(chan struct{})}
	g.waiting = append(g.waiting, w)
	c.mu.Unlock()
	select {
	case <-w.done:
		return w.rows, w.err
	case <-ctx.Done():
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if w.delivered {
		// The rows were handed over as the context ended: they are the
		// caller's now, as a claim's rows are once its statement returns.
		return w.rows, w.err
	}
	w.gone = true
	return nil, ctx.Err()
}

// next starts the group's next statement, for the claims that waited
// while one ended, in its place, or counts one statement fewer under way
// when none waited.
func (c *Combiner) next(key string, g *claimGroup, ex droverdriver.Executor, sc droverdriver.SlotClaimer) {
	c.mu.Lock()
	var batch []*slotWaiter
	for len(g.waiting) > 0 && len(batch) < maxSlots {
		w := g.waiting[0]
		g.waiting = g.waiting[1:]
		if !w.gone {
			batch = append(batch, w)
		}
	}
	if len(batch) == 0 {
		if g.inFlight--; g.inFlight == 0 {
			delete(c.groups, key)
		}
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	// The statement runs for every claimer of the batch, so no one
	// claimer's context may end it; a claimer that leaves stops waiting
	// for it instead, and its job is released.
	go func() {
		c.run(context.WithoutCancel(batch[0].ctx), ex, sc, batch)
		c.next(key, g, ex, sc)
	}()
}

// run claims for batch in one statement and shares the rows out: each
// row to the claimer of its slot, if it still waits and the row is meant
// for it; every other row is released.
func (c *Combiner) run(ctx context.Context, ex droverdriver.Executor, sc droverdriver.SlotClaimer, batch []*slotWaiter) {
	if len(batch) == 1 {
		rows, err := ex.JobClaim(ctx, batch[0].p)
		c.release(ctx, ex, c.deliver(batch, func(int) ([]*drovertype.JobRow, error) { return rows, err }))
		return
	}
	slots := make([]droverdriver.ClaimSlot, len(batch))
	bySlot := make(map[drovertype.LeaseToken]int, len(batch))
	for i, w := range batch {
		slots[i] = droverdriver.ClaimSlot{Owner: w.p.Owner, Token: drovertype.NewLeaseToken(), Worker: w.p.Worker}
		bySlot[slots[i].Token] = i
	}
	rows, err := sc.JobClaimSlots(ctx, batch[0].p, slots)
	shares := make([][]*drovertype.JobRow, len(batch))
	var stray []*drovertype.JobRow
	for _, r := range rows {
		i, ok := bySlot[r.LeaseToken]
		if !ok || !batch[i].p.Worker.Matches(r.Routing) {
			stray = append(stray, r)
			continue
		}
		r.Routing = nil // a claim of one claimer does not return it either
		shares[i] = append(shares[i], r)
	}
	left := c.deliver(batch, func(i int) ([]*drovertype.JobRow, error) {
		if err != nil {
			return nil, err
		}
		if shares[i] == nil {
			return []*drovertype.JobRow{}, nil
		}
		return shares[i], nil
	})
	c.release(ctx, ex, append(stray, left...))
}

// deliver hands each claimer of batch that still waits its share and
// returns the rows of those that left.
func (c *Combiner) deliver(batch []*slotWaiter, share func(i int) ([]*drovertype.JobRow, error)) (left []*drovertype.JobRow) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, w := range batch {
		rows, err := share(i)
		if w.gone {
			left = append(left, rows...)
			continue
		}
		w.rows, w.err, w.delivered = rows, err, true
		close(w.done)
	}
	return left
}

// release returns rows no claimer took to the queue, their attempts
// undone, as a Go client's release of the jobs it holds when it stops. A release that fails leaves them to
// the rescuer, as a crashed worker's jobs are.
func (c *Combiner) release(ctx context.Context, ex droverdriver.Executor, rows []*drovertype.JobRow) {
	if len(rows) == 0 {
		return
	}
	results := make([]droverdriver.Result, len(rows))
	for i, r := range rows {
		results[i] = droverdriver.Result{ID: r.ID, Attempt: r.Attempt, LeaseToken: r.LeaseToken, Outcome: droverdriver.OutcomeReleased,
			Flow: r.Flow, Key: r.Key, Queue: r.Queue}
	}
	_, _ = Finish(ctx, ex, results)
}

// groupKey names what claims must share to combine: everything p asks of
// the queue but its owner and worker, of which a routed claim's must
// share their type and labels too (droverdriver.SlotClaimer).
func groupKey(p droverdriver.ClaimParams) string {
	var b strings.Builder
	for _, s := range []string{p.Queue, strconv.Itoa(int(p.Variant)), strconv.FormatBool(p.Limited), p.Lease.String(),
		strconv.FormatInt(p.Now.UnixNano(), 10), strconv.FormatBool(p.Now.IsZero()),
		strconv.FormatBool(p.Kinds == nil), strings.Join(p.Kinds, "\x01"), strings.Join(p.ExceptKinds, "\x01")} {
		b.WriteString(s)
		b.WriteByte(0)
	}
	if p.Variant != droverdriver.ClaimStrict {
		b.WriteString(p.Worker.Type)
		b.WriteByte(0)
		b.WriteString(p.Worker.LabelsJSON())
	}
	return b.String()
}
