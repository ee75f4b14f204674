package droverpg

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/sqlfile"
)

// Routing and the worker registry (droverdriver/routing.go): the claims
// of workers that say what they are, the strict-order claim, and the
// registry they are listed in. See JobClaimRouted, JobClaimStrict and
// JobRouteAbsent in queries.sql.

// routedParams are the parameters of JobClaimRouted and JobClaimStrict for
// claim p: a worker that said nothing of itself gets no labels, which
// matches plain jobs only.
func routedParams(p droverdriver.ClaimParams, cp claimParams) claimRoutedParams {
	rp := claimRoutedParams{claimParams: cp, Kinds: p.Kinds, Except: p.ExceptKinds}
	if rp.Except == nil {
		rp.Except = []string{}
	}
	if w := p.Worker; w != nil {
		labels := w.LabelsJSON()
		rp.Labels = &labels
		if w.Type != "" {
			rp.Type = &w.Type
		}
		if w.Name != "" {
			rp.Name = &w.Name
		}
		rp.Keys = w.RouteKeys()
	}
	if a := p.After; a != nil {
		prio := int16(a.Priority)
		rp.Priority, rp.RunAt, rp.ID = &prio, &a.RunAt, &a.ID
	}
	return rp
}

func (e *executor) WorkerSeen(ctx context.Context, workers []drovertype.WorkerRecord) error {
	if len(workers) == 0 {
		return nil
	}
	p := workerSeenParams{}
	for i := range workers {
		w := &workers[i]
		labels, queues := droverdriver.WorkerColumns(w)
		p.Names = append(p.Names, w.Name)
		p.Types = append(p.Types, w.Type)
		p.Labels = append(p.Labels, labels)
		p.Queues = append(p.Queues, queues)
		p.Owners = append(p.Owners, w.Owner)
		p.Sources = append(p.Sources, w.Source)
		p.Plains = append(p.Plains, w.Plain)
		var kinds *string
		if k := droverdriver.KindsJSON(w); k != "" {
			kinds = &k
		}
		p.Kinds = append(p.Kinds, kinds)
	}
	_, err := workerSeen.exec(ctx, e.db, e.q, p)
	return e.wrap("register workers", err)
}

func (e *executor) WorkerGone(ctx context.Context, name, owner string) error {
	_, err := workerGone.exec(ctx, e.db, e.q, workerOwner{name, owner})
	return e.wrap("unregister worker", err)
}

func (e *executor) WorkerList(ctx context.Context) ([]drovertype.WorkerRecord, error) {
	rows, err := workerList.query(ctx, e.db, e.q, struct{}{})
	if err != nil {
		return nil, e.wrap("list workers", err)
	}
	defer rows.Close()
	out := []drovertype.WorkerRecord{}
	for rows.Next() {
		var w drovertype.WorkerRecord
		if err := rows.Scan(&w.Name, &w.Plain, &w.Type, &w.Labels, &w.Queues, &w.Owner, &w.Source, &w.StartedAt, &w.LastSeen, &w.Kinds); err != nil {
			return nil, e.wrap("list workers", err)
		}
		out = append(out, w)
	}
	return out, e.wrap("list workers", rows.Err())
}

func (e *executor) WorkerPrune(ctx context.Context, before time.Time) (int, error) {
	tag, err := workerPrune.exec(ctx, e.db, e.q, before)
	if err != nil {
		return 0, e.wrap("prune workers", err)
	}
	return int(tag.RowsAffected()), nil
}

// routeGroupsMax bounds RouteWaiting: jobs that each aim at other workers
// make a group each, and a report of thousands of them says no more.
const routeGroupsMax = 1000

func (e *executor) RouteWaiting(ctx context.Context) ([]droverdriver.RouteGroup, error) {
	rows, err := routeWaiting.query(ctx, e.db, e.q, routeGroupsMax)
	if err != nil {
		return nil, e.wrap("read routed jobs", err)
	}
	defer rows.Close()
	out := []droverdriver.RouteGroup{}
	for rows.Next() {
		var g droverdriver.RouteGroup
		var routing []byte
		if err := rows.Scan(&g.Queue, &routing, &g.Kind, &g.Jobs, &g.OldestRunAt, &g.Sample); err != nil {
			return nil, e.wrap("read routed jobs", err)
		}
		if g.Routing, err = droverdriver.DecodeRouting(routing); err != nil {
			return nil, e.wrap("read routed jobs", err)
		}
		out = append(out, g)
	}
	return out, e.wrap("read routed jobs", rows.Err())
}

func (e *executor) KindsWaiting(ctx context.Context, queue string, limit int) ([]droverdriver.RouteGroup, error) {
	rows, err := kindsWaiting.query(ctx, e.db, e.q, kindsWaitingParams{queue, limit})
	if err != nil {
		return nil, e.wrap("read waiting kinds", err)
	}
	defer rows.Close()
	out := []droverdriver.RouteGroup{}
	for rows.Next() {
		g := droverdriver.RouteGroup{Queue: queue}
		if err := rows.Scan(&g.Kind, &g.Jobs, &g.OldestRunAt, &g.Sample); err != nil {
			return nil, e.wrap("read waiting kinds", err)
		}
		out = append(out, g)
	}
	return out, e.wrap("read waiting kinds", rows.Err())
}

// JobRouteAbsent sends NoJIT and JobRouteAbsent in one round trip.
func (e *executor) JobRouteAbsent(ctx context.Context, p droverdriver.RouteAbsentParams) ([]droverdriver.FinishedRow, int, error) {
	b := &pgx.Batch{}
	noJIT.queue(b, e.q, struct{}{})
	jobRouteAbsent.queue(b, e.q, routeAbsentParams{Now: p.Now, Limit: p.Limit})
	br := e.db.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, 0, e.wrap("apply absent-worker policies", err)
	}
	rows, err := br.Query()
	if err != nil {
		return nil, 0, e.wrap("apply absent-worker policies", err)
	}
	res, err := readFinished(rows, 0)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, 0, e.wrap("apply absent-worker policies", err)
	}
	var failed []droverdriver.FinishedRow
	var woken []string
	for _, r := range res.Applied {
		if r.State == drovertype.JobStateAvailable {
			woken = append(woken, r.Queue)
		} else {
			failed = append(failed, r)
		}
	}
	if err := e.announce(ctx, woken); err != nil {
		return nil, 0, e.wrap("notify", err)
	}
	return failed, len(woken), nil
}

// claimStrict claims for a queue the claimer's settings say is in strict
// order, in one round trip: StrictClaimSettings (planned afresh, committed
// without waiting for the disk: see queries.sql), QueueLimitTake, which
// locks the queue's settings row, and JobClaimStrict, which reads the room
// under that lock and takes the head, as one batch in one implicit
// transaction (or in the caller's). The lock is held while the claim is
// planned, runs and commits, and no longer: every claim of the queue waits
// for it, so that time is the queue's throughput.
func (e *executor) claimStrict(ctx context.Context, p droverdriver.ClaimParams, token drovertype.LeaseToken, cp claimParams) ([]*drovertype.JobRow, error) {
	b := &pgx.Batch{}
	strictClaimSettings.queue(b, e.q, struct{}{})
	queueLimitTake.queue(b, e.q, p.Queue)
	if cp.slots != nil {
		jobClaimStrictSlots.bind(strictSlotsParams(p, cp)).queue(b, e.q)
	} else {
		jobClaimStrict.bind(routedParams(p, cp)).queue(b, e.q)
	}
	br := e.db.SendBatch(ctx, b)
	defer br.Close()
	for range 2 { // StrictClaimSettings, QueueLimitTake
		if _, err := br.Exec(); err != nil {
			return nil, err
		}
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	jobs, err := scanClaimed(rows, p, token, cp.slots != nil)
	if err != nil {
		return nil, err
	}
	return jobs, br.Close()
}

func (e *executor) QueueHead(ctx context.Context, queue string) (drovertype.QueueHead, error) {
	var h drovertype.QueueHead
	err := queueHead.queryRow(ctx, e.db, e.q, queue).Scan(&h.ID, &h.Returned, &h.Running)
	return h, e.wrap("read the head of queue "+queue, err)
}

var _ droverdriver.SlotClaimer = (*executor)(nil)

// withClaimSlots adds to q the routed claim for several claimers at once
// (droverdriver.SlotClaimer), made from JobClaimRouted by edits: the
// worker's name ($11) becomes the slots' names, a job aimed at any of
// them matching; each row is numbered in claim order and takes the owner
// and token of the slot of that number ($17 and $18), the claim's own
// owner and token only where a row had no slot, which its LIMIT rules
// out; and the rows return their owner, token and routing, so that the
// caller can hand each to its claimer, or release it when it is aimed at
// another slot's name. The strict claim for several claimers, which
// assigns the jobs to the slots itself, is a statement of its own
// (JobClaimStrictSlots).
func withClaimSlots(q map[string]string) error {
	const slot = "(SELECT slot FROM picked p WHERE p.ctid = j.ctid)"
	return sqlfile.WithClaimSlots(q, "JobClaimRouted",
		[2]string{"SELECT ctid FROM candidates ORDER BY priority, run_at, id LIMIT $2",
			"SELECT ctid, row_number() OVER (ORDER BY priority, run_at, id) AS slot FROM candidates ORDER BY priority, run_at, id LIMIT $2"},
		[2]string{"j.routing -> 'names' @> jsonb_build_array($11::text)", "j.routing -> 'names' ?| $11::text[]"},
		[2]string{"j.flow, j.ordering_key", "j.flow, j.ordering_key, j.lease_owner, j.lease_token, j.routing"},
		[2]string{"lease_owner = $3,", "lease_owner = coalesce(($17::text[])[" + slot + "], $3),"},
		[2]string{"lease_token = $6::uuid", "lease_token = coalesce(($18::uuid[])[" + slot + "], $6::uuid)"})
}

// JobClaimSlots implements droverdriver.SlotClaimer: the claim of p, by
// the paths JobClaim takes (a limited queue's transaction, a strict
// queue's batch), with the statements for several claimers.
func (e *executor) JobClaimSlots(ctx context.Context, p droverdriver.ClaimParams, slots []droverdriver.ClaimSlot) ([]*drovertype.JobRow, error) {
	if p.Variant != droverdriver.ClaimRouted && p.Variant != droverdriver.ClaimStrict || len(slots) == 0 {
		return nil, fmt.Errorf("droverpg: a claim for several claimers is routed or strict, for one slot or more; not variant %d for %d", p.Variant, len(slots))
	}
	p.Max, p.Owner, p.Token, p.Worker = len(slots), "", drovertype.LeaseToken{}, nil
	return e.claim(ctx, p, slots)
}

// slotsParams are the parameters of JobClaimRoutedSlots: the slots'
// workers share their type and labels (droverdriver.SlotClaimer).
func slotsParams(p droverdriver.ClaimParams, cp claimParams) claimSlotsParams {
	p.Worker = &droverdriver.Worker{Type: cp.slots[0].Worker.Type, Labels: cp.slots[0].Worker.Labels}
	sp := claimSlotsParams{claimRoutedParams: routedParams(p, cp), Names: []string{}}
	sp.Keys = droverdriver.SlotRouteKeys(cp.slots)
	for _, s := range cp.slots {
		if s.Worker.Name != "" {
			sp.Names = append(sp.Names, s.Worker.Name)
		}
		sp.Owners = append(sp.Owners, s.Owner)
		sp.Tokens = append(sp.Tokens, s.Token)
	}
	return sp
}

// strictSlotsParams are the parameters of JobClaimStrictSlots.
func strictSlotsParams(p droverdriver.ClaimParams, cp claimParams) claimStrictSlotsParams {
	sp := claimStrictSlotsParams{Queue: cp.Queue, Max: cp.Max, LeaseMS: cp.LeaseMS, Limited: cp.Limited, Now: cp.Now,
		Kinds: p.Kinds, Except: p.ExceptKinds, Labels: "["}
	if sp.Except == nil {
		sp.Except = []string{}
	}
	for i, s := range cp.slots {
		sp.Owners = append(sp.Owners, s.Owner)
		sp.Tokens = append(sp.Tokens, s.Token)
		sp.Types = append(sp.Types, optional(s.Worker.Type))
		sp.Names = append(sp.Names, optional(s.Worker.Name))
		if i > 0 {
			sp.Labels += ","
		}
		sp.Labels += s.Worker.LabelsJSON()
	}
	sp.Labels += "]"
	return sp
}

// optional is s, nil when it is empty (SQL NULL).
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
