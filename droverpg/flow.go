package droverpg

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// Workflows and batches: the statements are the "flow" section of
// queries.sql. Plain jobs never reach any of this.

// JobFlowParents runs JobFlowMarkParents and JobFlowEndedParents in one
// round trip.
func (e *executor) JobFlowParents(ctx context.Context, ids []int64) (map[int64]bool, map[int64]drovertype.JobState, error) {
	live := map[int64]bool{}
	ended := map[int64]drovertype.JobState{}
	b := &pgx.Batch{}
	jobFlowMarkParents.queue(b, e.q, ids)
	jobFlowEndedParents.queue(b, e.q, ids)
	br := e.db.SendBatch(ctx, b)
	defer br.Close()
	var id int64
	var state string
	rows, err := br.Query()
	if err == nil {
		_, err = pgx.ForEachRow(rows, []any{&id}, func() error {
			live[id] = true
			return nil
		})
	}
	if err == nil {
		rows, err = br.Query()
	}
	if err == nil {
		_, err = pgx.ForEachRow(rows, []any{&id, &state}, func() error {
			ended[id] = drovertype.JobState(state)
			return nil
		})
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, nil, e.wrap("insert jobs", err)
	}
	return live, ended, nil
}

// JobInsertFlow runs, in the caller's transaction, KeyRateSet (when some
// jobs have a rate), BatchCreate, JobInsertFlow for the callback and
// BatchSetCallback (for a batch with one), JobInsertFlow for the jobs, then
// JobFlowInsertDeps (when some have parents).
func (e *executor) JobInsertFlow(ctx context.Context, p droverdriver.FlowInsertParams, plan droverdriver.FlowInsertPlan) (droverdriver.FlowInsertResult, error) {
	wake := wakeSet{}
	res, err := e.insertFlow(ctx, p, plan, wake)
	if err != nil {
		return droverdriver.FlowInsertResult{}, e.wrap("insert jobs", err)
	}
	if e.waker != nil || e.pending != nil {
		e.wakeAfter(wake)
		return res, nil
	}
	return res, e.wrap("notify", e.notifyIn(ctx, e.db, wake))
}

func (e *executor) insertFlow(ctx context.Context, p droverdriver.FlowInsertParams, plan droverdriver.FlowInsertPlan, wake wakeSet) (droverdriver.FlowInsertResult, error) {
	var res droverdriver.FlowInsertResult
	// order: keyed jobs store their keys' rates before the insert counts
	// their keys' tokens, under the lock the caller took.
	var rates keyRates
	for i := range p.Jobs {
		rates.add(&p.Jobs[i].InsertParams)
	}
	if p.Callback != nil {
		rates.add(p.Callback)
	}
	if len(rates.queues) > 0 {
		if _, err := keyRateSet.exec(ctx, e.db, e.q, rates); err != nil {
			return res, err
		}
	}
	var batchID *int64
	if p.Batch {
		if err := batchCreate.queryRow(ctx, e.db, e.q, len(p.Jobs)).Scan(&res.BatchID); err != nil {
			return res, err
		}
		batchID = &res.BatchID
	}
	if p.Batch && p.Callback != nil {
		ids, err := e.insertFlowRows(ctx, []droverdriver.InsertParams{*p.Callback}, []drovertype.JobState{drovertype.JobStatePending},
			[]int{1}, []int{0}, batchID, wake)
		if err != nil {
			return res, err
		}
		res.CallbackID = ids[0]
		if _, err := batchSetCallback.exec(ctx, e.db, e.q, batchCallbackParams{res.BatchID, res.CallbackID}); err != nil {
			return res, err
		}
	}
	jobs := make([]droverdriver.InsertParams, len(p.Jobs))
	for i := range p.Jobs {
		jobs[i] = p.Jobs[i].InsertParams
	}
	var err error
	if res.IDs, err = e.insertFlowRows(ctx, jobs, plan.States, plan.WaitingOn, plan.Flow, batchID, wake); err != nil {
		return res, err
	}
	var parents, children []int64
	for i := range p.Jobs {
		for _, id := range plan.Parents[i] {
			parents, children = append(parents, id), append(children, res.IDs[i])
		}
		for _, k := range p.Jobs[i].After {
			parents, children = append(parents, res.IDs[k]), append(children, res.IDs[i])
		}
	}
	if len(parents) > 0 {
		if _, err := jobFlowInsertDeps.exec(ctx, e.db, e.q, flowDepsParams{parents, children}); err != nil {
			return res, err
		}
	}
	return res, nil
}

// insertFlowRows inserts jobs with their flow columns, in chunks like
// JobInsertMany, and adds the queues of the ones available now to wake.
func (e *executor) insertFlowRows(ctx context.Context, jobs []droverdriver.InsertParams, states []drovertype.JobState,
	waitingOn, flow []int, batchID *int64, wake wakeSet) ([]int64, error) {
	now := time.Now()
	ids := make([]int64, 0, len(jobs))
	for start := 0; start < len(jobs); start += insertChunk {
		end := min(start+insertChunk, len(jobs))
		n := end - start
		chunk := jobs[start:end]
		var (
			st      = make([]string, n)
			waits   = make([]int32, n)
			flows   = make([]int16, n)
			batches = make([]*int64, n)
			keys    = make([]*string, n)
			limits  = make([]int32, n)
		)
		for i := range chunk {
			j := &chunk[i]
			st[i], waits[i], flows[i], batches[i] = string(states[start+i]), int32(waitingOn[start+i]), int16(flow[start+i]), batchID
			if j.Key != "" {
				keys[i], limits[i] = &j.Key, int32(j.KeyLimit)
			}
			// A keyed job may be stored blocked instead; waking its queue
			// for nothing costs one empty claim.
			if states[start+i] == drovertype.JobStateAvailable && j.Due(now) {
				wakeFor(wake, j)
			}
		}
		rows, err := jobInsertFlow.query(ctx, e.db, e.q, flowInsertParams{columnsOf(chunk), st, waits, flows, batches, keys, limits, routesOf(chunk)})
		if err != nil {
			return nil, err
		}
		got, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return nil, err
		}
		ids = append(ids, got...)
	}
	return ids, nil
}

// scanBatch reads the columns of BatchGet and BatchList.
func scanBatch(row pgx.Row) (*drovertype.Batch, error) {
	b := &drovertype.Batch{}
	err := row.Scan(&b.ID, &b.Total, &b.Completed, &b.Cancelled, &b.Discarded,
		&b.Running, &b.Failed, &b.CallbackJobID, &b.CreatedAt, &b.FinishedAt)
	return b, err
}

func (e *executor) BatchGet(ctx context.Context, id int64) (*drovertype.Batch, error) {
	b, err := scanBatch(batchGet.queryRow(ctx, e.db, e.q, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("batch %d: %w", id, droverdriver.ErrNotFound)
	}
	if err != nil {
		return nil, e.wrap("get batch", err)
	}
	return b, nil
}

func (e *executor) BatchList(ctx context.Context, p droverdriver.BatchListParams) ([]*drovertype.Batch, error) {
	before := p.BeforeID
	if before <= 0 {
		before = math.MaxInt64
	}
	rows, err := batchList.query(ctx, e.db, e.q, batchListParams{before, p.Limit})
	if err != nil {
		return nil, e.wrap("list batches", err)
	}
	defer rows.Close()
	var out []*drovertype.Batch
	for rows.Next() {
		b, err := scanBatch(rows)
		if err != nil {
			return nil, e.wrap("list batches", err)
		}
		out = append(out, b)
	}
	return out, e.wrap("list batches", rows.Err())
}

func (e *executor) JobDeps(ctx context.Context, ids []int64) ([]droverdriver.Dep, error) {
	rows, err := jobDeps.query(ctx, e.db, e.q, ids)
	if err != nil {
		return nil, e.wrap("read workflow edges", err)
	}
	defer rows.Close()
	var out []droverdriver.Dep
	for rows.Next() {
		var d droverdriver.Dep
		if err := rows.Scan(&d.Parent, &d.Child); err != nil {
			return nil, e.wrap("read workflow edges", err)
		}
		out = append(out, d)
	}
	return out, e.wrap("read workflow edges", rows.Err())
}

func (e *executor) BatchResults(ctx context.Context, p droverdriver.BatchResultsParams) ([]drovertype.JobResult, error) {
	return e.results(ctx, "batch results", batchResults.bind(batchResultsParams{p.BatchID, p.AfterID, p.Limit}))
}

func (e *executor) JobResults(ctx context.Context, ids []int64) ([]drovertype.JobResult, error) {
	return e.results(ctx, "job results", jobResults.bind(ids))
}

func (e *executor) JobParentResults(ctx context.Context, childID int64) ([]drovertype.JobResult, error) {
	return e.results(ctx, "parent results", jobParentResults.bind(childID))
}

func (e *executor) JobsParentResults(ctx context.Context, childIDs []int64) ([]droverdriver.ParentResultRow, error) {
	rows, err := jobsParentResults.query(ctx, e.db, e.q, childIDs)
	if err != nil {
		return nil, e.wrap("parent results", err)
	}
	var out []droverdriver.ParentResultRow
	var r droverdriver.ParentResultRow
	var state string
	_, err = pgx.ForEachRow(rows, []any{&r.ChildID, &r.ID, &state, &r.Kind, &r.Result}, func() error {
		r.State = drovertype.JobState(state)
		out = append(out, r)
		r.Result = nil
		return nil
	})
	if err != nil {
		return nil, e.wrap("parent results", err)
	}
	return out, nil
}

// results runs a statement returning (id, state, kind, result) rows.
func (e *executor) results(ctx context.Context, op string, s bound) ([]drovertype.JobResult, error) {
	rows, err := s.query(ctx, e.db, e.q)
	if err != nil {
		return nil, e.wrap(op, err)
	}
	var out []drovertype.JobResult
	var r drovertype.JobResult
	var state string
	_, err = pgx.ForEachRow(rows, []any{&r.ID, &state, &r.Kind, &r.Result}, func() error {
		r.State = drovertype.JobState(state)
		out = append(out, r)
		r.Result = nil
		return nil
	})
	if err != nil {
		return nil, e.wrap(op, err)
	}
	return out, nil
}
