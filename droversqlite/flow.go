package droversqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// Workflows and batches: the statements are the "flow" section of
// queries.sql. Plain jobs never reach any of this.

// JobFlowSettle runs the settle's statements in the transaction that ended
// p.IDs: JobFlowDoomed (only when some job failed) with
// JobFlowCancelMove and JobFlowCancelDelete for the dependants it dooms,
// JobFlowRelease, JobFlowCount, then JobFlowCallback for the batches now
// complete.
func (e *executor) JobFlowSettle(ctx context.Context, p droverdriver.SettleParams) (droverdriver.KeyParams, error) {
	var keys droverdriver.KeyParams
	var woken []string
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		woken, keys, err = e.settle(ctx, tx, p.IDs, p.Failed)
		return err
	})
	if err != nil {
		return keys, e.wrap("settle", err)
	}
	e.wake(woken)
	return keys, nil
}

// settle settles ended in tx and returns the queues to wake once tx
// commits and the keys to promote.
func (e *executor) settle(ctx context.Context, tx *sql.Tx, ended []int64, failed bool) ([]string, droverdriver.KeyParams, error) {
	var keys droverdriver.KeyParams
	now := time.Now().UTC().Truncate(time.Microsecond)
	var doomed []int64
	// Keys whose places the settle freed (cancelled keyed dependants) or
	// filled (keyed dependants released as blocked), for the caller to
	// promote.
	addKey := func(queue string, key sql.NullString) {
		if key.Valid {
			keys.Queues, keys.Keys = append(keys.Queues, queue), append(keys.Keys, key.String)
		}
	}
	msgs := []byte{'{'}
	var err error
	if failed {
		err = jobFlowDoomed.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error {
			var id, cause int64
			var state, queue string
			var key sql.NullString
			if err := rows.Scan(&id, &cause, &state, &queue, &key); err != nil {
				return err
			}
			addKey(queue, key)
			if len(doomed) > 0 {
				msgs = append(msgs, ',')
			}
			doomed = append(doomed, id)
			msgs = appendString(msgs, strconv.FormatInt(id, 10))
			msgs = append(msgs, ':')
			msgs = appendString(msgs, fmt.Sprintf("dependency %d ended as %s", cause, state))
			return nil
		}, string(appendIDs(nil, ended)))
	}
	if err != nil {
		return nil, keys, fmt.Errorf("settle: %w", err)
	}
	if len(doomed) > 0 {
		msgs = append(msgs, '}')
		if _, err := jobFlowCancelMove.exec(ctx, e, tx, flowCancelParams{string(msgs), micros(now), now.Format(time.RFC3339Nano)}); err != nil {
			return nil, keys, fmt.Errorf("settle: cancel dependants: %w", err)
		}
		if _, err := jobFlowCancelDelete.exec(ctx, e, tx, string(msgs)); err != nil {
			return nil, keys, fmt.Errorf("settle: cancel dependants: %w", err)
		}
	}
	all := string(appendIDs(nil, append(slices.Clone(ended), doomed...)))

	var woken []string
	wake := func(q string) { woken = addQueues(woken, []string{q}) }
	err = jobFlowRelease.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error {
		var queue, state string
		var key sql.NullString
		if err := rows.Scan(&queue, &state, &key); err != nil {
			return err
		}
		switch drovertype.JobState(state) {
		case drovertype.JobStateAvailable:
			wake(queue)
		case drovertype.JobStateBlocked:
			addKey(queue, key)
		}
		return nil
	}, batchAt{all, micros(now)})
	if err != nil {
		return nil, keys, fmt.Errorf("settle: release dependants: %w", err)
	}

	var callbacks []int64
	err = jobFlowCount.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error {
		var callback sql.NullInt64
		var complete bool
		if err := rows.Scan(&callback, &complete); err != nil {
			return err
		}
		if complete && callback.Valid {
			callbacks = append(callbacks, callback.Int64)
		}
		return nil
	}, batchAt{all, micros(now)})
	if err != nil {
		return nil, keys, fmt.Errorf("settle: count batches: %w", err)
	}
	if len(callbacks) > 0 {
		err = jobFlowCallback.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error {
			var queue, state string
			var key sql.NullString
			if err := rows.Scan(&queue, &state, &key); err != nil {
				return err
			}
			if drovertype.JobState(state) == drovertype.JobStateAvailable {
				wake(queue)
			} else {
				addKey(queue, key)
			}
			return nil
		}, batchAt{string(appendIDs(nil, callbacks)), micros(now)})
		if err != nil {
			return nil, keys, fmt.Errorf("settle: release callbacks: %w", err)
		}
	}
	return woken, keys, nil
}

// addQueues adds to woken the queues of more it does not hold yet.
func addQueues(woken, more []string) []string {
	for _, q := range more {
		if !slices.Contains(woken, q) {
			woken = append(woken, q)
		}
	}
	return woken
}

// JobFlowParents runs JobFlowMarkParents, then JobFlowEndedParents.
func (e *executor) JobFlowParents(ctx context.Context, ids []int64) (map[int64]bool, map[int64]drovertype.JobState, error) {
	live := map[int64]bool{}
	ended := map[int64]drovertype.JobState{}
	arg := string(appendIDs(nil, ids))
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		err := jobFlowMarkParents.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return err
			}
			live[id] = true
			return nil
		}, arg)
		if err != nil {
			return err
		}
		return jobFlowEndedParents.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error {
			var id int64
			var state string
			if err := rows.Scan(&id, &state); err != nil {
				return err
			}
			ended[id] = drovertype.JobState(state)
			return nil
		}, arg)
	})
	if err != nil {
		return nil, nil, e.wrap("insert jobs", err)
	}
	return live, ended, nil
}

// JobInsertFlow runs BatchCreate (for a batch), the plain insert
// (JobInsertMany) of the callback and the jobs, BatchSetCallback (for a
// batch with a callback), JobFlowMark, JobFlowBlockKeyed (when some jobs
// have a key) and JobFlowInsertDeps (when some have parents).
func (e *executor) JobInsertFlow(ctx context.Context, p droverdriver.FlowInsertParams, plan droverdriver.FlowInsertPlan) (droverdriver.FlowInsertResult, error) {
	var res droverdriver.FlowInsertResult
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		res, err = e.insertFlow(ctx, tx, p, plan)
		return err
	})
	if err != nil {
		return droverdriver.FlowInsertResult{}, e.wrap("insert jobs", err)
	}
	var wake []string
	now := time.Now()
	for i := range p.Jobs {
		j := &p.Jobs[i]
		if j.Due(now) && !slices.Contains(wake, j.Queue) {
			wake = append(wake, j.Queue)
		}
	}
	e.wake(wake)
	return res, nil
}

func (e *executor) insertFlow(ctx context.Context, tx *sql.Tx, p droverdriver.FlowInsertParams, plan droverdriver.FlowInsertPlan) (droverdriver.FlowInsertResult, error) {
	var res droverdriver.FlowInsertResult
	var batchID any // NULL unless a batch
	if p.Batch {
		r, err := batchCreate.exec(ctx, e, tx, batchCreateParams{len(p.Jobs), micros(time.Now())})
		if err != nil {
			return res, err
		}
		if res.BatchID, err = r.LastInsertId(); err != nil {
			return res, err
		}
		batchID = res.BatchID
	}

	// The rows go in through the plain insert path, in this transaction,
	// and then get their flow columns: the callback (if any) first.
	jobs := make([]droverdriver.InsertParams, 0, len(p.Jobs)+1)
	callback := p.Batch && p.Callback != nil
	if callback {
		jobs = append(jobs, *p.Callback)
	}
	for i := range p.Jobs {
		jobs = append(jobs, p.Jobs[i].InsertParams)
	}
	ids, err := (&executor{shared: e.shared, tx: tx, flowInsert: true}).JobInsertMany(ctx, jobs)
	if err != nil {
		return res, err
	}
	marks := []byte{'{'}
	mark := func(id int64, waitingOn, flow int) {
		if len(marks) > 1 {
			marks = append(marks, ',')
		}
		marks = append(marks, '"')
		marks = strconv.AppendInt(marks, id, 10)
		marks = append(marks, '"', ':', '[')
		marks = strconv.AppendInt(marks, int64(waitingOn), 10)
		marks = append(marks, ',')
		marks = strconv.AppendInt(marks, int64(flow), 10)
		marks = append(marks, ']')
	}
	if callback {
		res.CallbackID, ids = ids[0], ids[1:]
		mark(res.CallbackID, 1, 0)
		if _, err := batchSetCallback.exec(ctx, e, tx, batchCallbackParams{res.BatchID, res.CallbackID}); err != nil {
			return res, err
		}
	}
	res.IDs = ids
	for i, id := range ids {
		if plan.WaitingOn[i] > 0 || plan.Flow[i] != 0 || p.Batch {
			mark(id, plan.WaitingOn[i], plan.Flow[i])
		}
	}
	marks = append(marks, '}')
	if len(marks) > 2 {
		if _, err := jobFlowMark.exec(ctx, e, tx, flowMarkParams{string(marks), batchID}); err != nil {
			return res, err
		}
	}
	if keyed(p) {
		// order: JobInsertKeyed gated the keyed jobs before JobFlowMark
		// made some pending; they all wait as blocked, and the caller's
		// KeyPromote starts those their keys have room (and tokens) for,
		// in ID order, stopping at a pending job.
		if _, err := jobFlowBlockKeyed.exec(ctx, e, tx, string(appendIDs(nil, ids))); err != nil {
			return res, err
		}
	}

	edges := []byte{'['}
	for i := range p.Jobs {
		add := func(parent int64) {
			if len(edges) > 1 {
				edges = append(edges, ',')
			}
			edges = append(edges, '[')
			edges = strconv.AppendInt(edges, parent, 10)
			edges = append(edges, ',')
			edges = strconv.AppendInt(edges, ids[i], 10)
			edges = append(edges, ']')
		}
		for _, parent := range plan.Parents[i] {
			add(parent)
		}
		for _, k := range p.Jobs[i].After {
			add(ids[k])
		}
	}
	if len(edges) > 1 {
		edges = append(edges, ']')
		if _, err := jobFlowInsertDeps.exec(ctx, e, tx, string(edges)); err != nil {
			return res, err
		}
	}
	return res, nil
}

// keyed reports whether some of p's jobs have a key.
func keyed(p droverdriver.FlowInsertParams) bool {
	for i := range p.Jobs {
		if p.Jobs[i].Key != "" {
			return true
		}
	}
	return false
}

// scanBatch reads the columns of BatchGet and BatchList.
func scanBatch(rows *sql.Rows) (*drovertype.Batch, error) {
	b := &drovertype.Batch{}
	var created int64
	var finished sql.NullInt64
	if err := rows.Scan(&b.ID, &b.Total, &b.Completed, &b.Cancelled, &b.Discarded, &b.Running, &b.Failed,
		&b.CallbackJobID, &created, &finished); err != nil {
		return nil, err
	}
	b.CreatedAt = fromMicros(created)
	if finished.Valid {
		t := fromMicros(finished.Int64)
		b.FinishedAt = &t
	}
	return b, nil
}

func (e *executor) BatchGet(ctx context.Context, id int64) (*drovertype.Batch, error) {
	var b *drovertype.Batch
	err := batchGet.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var err error
		b, err = scanBatch(rows)
		return err
	}, id)
	if err != nil {
		return nil, e.wrap("get batch", err)
	}
	if b == nil {
		return nil, fmt.Errorf("batch %d: %w", id, droverdriver.ErrNotFound)
	}
	return b, nil
}

func (e *executor) BatchResults(ctx context.Context, p droverdriver.BatchResultsParams) ([]drovertype.JobResult, error) {
	return e.results(ctx, "batch results", batchResults.bind(batchResultsParams{p.BatchID, p.AfterID, p.Limit}))
}

func (e *executor) JobResults(ctx context.Context, ids []int64) ([]drovertype.JobResult, error) {
	return e.results(ctx, "job results", jobResults.bind(string(appendIDs(nil, ids))))
}

func (e *executor) JobParentResults(ctx context.Context, childID int64) ([]drovertype.JobResult, error) {
	return e.results(ctx, "parent results", jobParentResults.bind(childID))
}

func (e *executor) JobsParentResults(ctx context.Context, childIDs []int64) ([]droverdriver.ParentResultRow, error) {
	var out []droverdriver.ParentResultRow
	err := jobsParentResults.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var r droverdriver.ParentResultRow
		var state string
		var result any
		if err := rows.Scan(&r.ChildID, &r.ID, &state, &r.Kind, &result); err != nil {
			return err
		}
		r.State = drovertype.JobState(state)
		r.Result = asBytes(result)
		out = append(out, r)
		return nil
	}, string(appendIDs(nil, childIDs)))
	if err != nil {
		return nil, e.wrap("parent results", err)
	}
	return out, nil
}

// results runs a statement returning (id, state, kind, result) rows.
func (e *executor) results(ctx context.Context, op string, s bound) ([]drovertype.JobResult, error) {
	var out []drovertype.JobResult
	err := e.query(ctx, nil, e.reader, s.Name, func(rows *sql.Rows) error {
		var r drovertype.JobResult
		var state string
		var result any
		if err := rows.Scan(&r.ID, &state, &r.Kind, &result); err != nil {
			return err
		}
		r.State = drovertype.JobState(state)
		r.Result = asBytes(result)
		out = append(out, r)
		return nil
	}, s.Args...)
	if err != nil {
		return nil, e.wrap(op, err)
	}
	return out, nil
}
