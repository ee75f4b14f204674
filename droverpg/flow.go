package droverpg

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover/droverdriver"
)

// Workflows and batches: the statements are the "flow" section of
// queries.sql. Plain jobs never reach any of this.

func (e *executor) JobInsertFlow(ctx context.Context, p droverdriver.FlowInsertParams) (droverdriver.FlowInsertResult, error) {
	var res droverdriver.FlowInsertResult
	err := e.inTx(ctx, func(tx pgx.Tx, wake wakeSet) error {
		var err error
		res, err = e.insertFlow(ctx, tx, p, wake)
		return err
	})
	if err != nil {
		if errors.Is(err, droverdriver.ErrNotFound) || errors.Is(err, droverdriver.ErrDependencyFailed) {
			return res, err
		}
		return res, e.wrap("insert jobs", err)
	}
	return res, nil
}

func (e *executor) insertFlow(ctx context.Context, tx pgx.Tx, p droverdriver.FlowInsertParams, wake wakeSet) (droverdriver.FlowInsertResult, error) {
	var res droverdriver.FlowInsertResult
	live := map[int64]bool{}
	ended := map[int64]droverdriver.State{}
	if parents := droverdriver.FlowParents(p); len(parents) > 0 {
		// Lock and mark the parents still in the hot table first, so none
		// of them can end unnoticed between this and the insert.
		rows, err := jobFlowMarkParents.query(ctx, tx, e.q, parents)
		if err != nil {
			return res, err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return res, err
		}
		for _, id := range ids {
			live[id] = true
		}
		rows, err = jobFlowEndedParents.query(ctx, tx, e.q, parents)
		if err != nil {
			return res, err
		}
		var id int64
		var state string
		if _, err := pgx.ForEachRow(rows, []any{&id, &state}, func() error {
			ended[id] = droverdriver.State(state)
			return nil
		}); err != nil {
			return res, err
		}
	}
	plan, err := droverdriver.PlanFlowInsert(p, live, ended)
	if err != nil {
		return res, err
	}
	// order: keyed jobs count their keys' active jobs under the keys'
	// locks, like JobInsertKeyed, and store their keys' rates first.
	keyQueues, keys := flowKeys(p)
	if len(keys) > 0 {
		if _, err := keyLock.exec(ctx, tx, e.q, keyList{keyQueues, keys}); err != nil {
			return res, err
		}
		var rates keyRates
		for i := range p.Jobs {
			rates.add(&p.Jobs[i].InsertParams)
		}
		if p.Callback != nil {
			rates.add(p.Callback)
		}
		if len(rates.queues) > 0 {
			if _, err := keyRateSet.exec(ctx, tx, e.q, rates); err != nil {
				return res, err
			}
		}
	}
	var batchID *int64
	if p.Batch {
		if err := batchCreate.queryRow(ctx, tx, e.q, len(p.Jobs)).Scan(&res.BatchID); err != nil {
			return res, err
		}
		batchID = &res.BatchID
	}
	if p.Batch && p.Callback != nil {
		ids, err := e.insertFlowRows(ctx, tx, []droverdriver.InsertParams{*p.Callback}, []droverdriver.State{droverdriver.StatePending},
			[]int{1}, []int{0}, batchID, wake)
		if err != nil {
			return res, err
		}
		res.CallbackID = ids[0]
		if _, err := batchSetCallback.exec(ctx, tx, e.q, batchCallbackParams{res.BatchID, res.CallbackID}); err != nil {
			return res, err
		}
	}
	jobs := make([]droverdriver.InsertParams, len(p.Jobs))
	for i := range p.Jobs {
		jobs[i] = p.Jobs[i].InsertParams
	}
	if res.IDs, err = e.insertFlowRows(ctx, tx, jobs, plan.States, plan.WaitingOn, plan.Flow, batchID, wake); err != nil {
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
		if _, err := jobFlowInsertDeps.exec(ctx, tx, e.q, flowDepsParams{parents, children}); err != nil {
			return res, err
		}
	}
	if len(keys) > 0 {
		// order: jobs of keys with a rate were stored blocked; this
		// starts those their keys' tokens and room allow, under the
		// KeyLock taken above.
		t := &executor{db: tx, q: e.q, schema: e.schema, channel: e.channel, pending: wake}
		_, err := t.KeyPromote(ctx, droverdriver.KeyParams{Queues: keyQueues, Keys: keys})
		return res, err
	}
	return res, nil
}

// insertFlowRows inserts jobs with their flow columns, in chunks like
// JobInsertMany, and adds the queues of the ones available now to wake.
func (e *executor) insertFlowRows(ctx context.Context, tx pgx.Tx, jobs []droverdriver.InsertParams, states []droverdriver.State,
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
			if states[start+i] == droverdriver.StateAvailable && j.Due(now) {
				wake.count(j.Queue)
			}
		}
		rows, err := jobInsertFlow.query(ctx, tx, e.q, flowInsertParams{columnsOf(chunk), st, waits, flows, batches, keys, limits})
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

// flowKeys returns the (queue, key) pairs of p's keyed jobs, callback
// included, as two parallel slices.
func flowKeys(p droverdriver.FlowInsertParams) (queues, keys []string) {
	for i := range p.Jobs {
		if j := &p.Jobs[i]; j.Key != "" {
			queues, keys = append(queues, j.Queue), append(keys, j.Key)
		}
	}
	if c := p.Callback; c != nil && c.Key != "" {
		queues, keys = append(queues, c.Queue), append(keys, c.Key)
	}
	return queues, keys
}

func (e *executor) BatchGet(ctx context.Context, id int64) (*droverdriver.BatchRow, error) {
	b := &droverdriver.BatchRow{}
	err := batchGet.queryRow(ctx, e.db, e.q, id).Scan(&b.ID, &b.Total, &b.Completed, &b.Cancelled, &b.Discarded,
		&b.Running, &b.Retrying, &b.CallbackJobID, &b.CreatedAt, &b.FinishedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("batch %d: %w", id, droverdriver.ErrNotFound)
	}
	if err != nil {
		return nil, e.wrap("get batch", err)
	}
	return b, nil
}

func (e *executor) BatchResults(ctx context.Context, p droverdriver.BatchResultsParams) ([]droverdriver.ResultRow, error) {
	return e.results(ctx, "batch results", batchResults.bind(batchResultsParams{p.BatchID, p.AfterID, p.Limit}))
}

func (e *executor) JobResults(ctx context.Context, ids []int64) ([]droverdriver.ResultRow, error) {
	return e.results(ctx, "job results", jobResults.bind(ids))
}

func (e *executor) JobParentResults(ctx context.Context, childID int64) ([]droverdriver.ResultRow, error) {
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
		r.State = droverdriver.State(state)
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
func (e *executor) results(ctx context.Context, op string, s bound) ([]droverdriver.ResultRow, error) {
	rows, err := s.query(ctx, e.db, e.q)
	if err != nil {
		return nil, e.wrap(op, err)
	}
	var out []droverdriver.ResultRow
	var r droverdriver.ResultRow
	var state string
	_, err = pgx.ForEachRow(rows, []any{&r.ID, &state, &r.Kind, &r.Result}, func() error {
		r.State = droverdriver.State(state)
		out = append(out, r)
		r.Result = nil
		return nil
	})
	if err != nil {
		return nil, e.wrap(op, err)
	}
	return out, nil
}
