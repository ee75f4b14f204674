package engine

import (
	"context"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// InsertFlow stores the jobs of a workflow and/or a batch in one
// transaction and returns their IDs in input order. It locks and marks
// the stored parents the jobs depend on first (JobFlowParents), so that
// none of them can end unnoticed before the jobs are stored, and plans
// each job's state from theirs (droverdriver.PlanFlowInsert): a job whose
// parents have not all completed waits as pending, and the call fails with
// ErrNotFound or ErrDependencyFailed when a parent does not exist or ended
// without completing. Keyed jobs count their keys' active jobs under the
// keys' lock, like any keyed insert, and are promoted as far as their keys'
// room (and rate) allows once every job of the call is in its state: a job
// stored pending holds its key's place in line.
func InsertFlow(ctx context.Context, ex droverdriver.Executor, p droverdriver.FlowInsertParams) (droverdriver.FlowInsertResult, error) {
	var res droverdriver.FlowInsertResult
	err := ex.Tx(ctx, func(ctx context.Context, tx droverdriver.Executor) error {
		var live map[int64]bool
		var ended map[int64]drovertype.JobState
		if parents := droverdriver.FlowParents(p); len(parents) > 0 {
			var err error
			if live, ended, err = tx.JobFlowParents(ctx, parents); err != nil {
				return err
			}
		}
		plan, err := droverdriver.PlanFlowInsert(p, live, ended)
		if err != nil {
			return err
		}
		keys := flowKeys(p)
		if len(keys.Keys) > 0 {
			if err := tx.KeyLock(ctx, keys); err != nil {
				return err
			}
		}
		if res, err = tx.JobInsertFlow(ctx, p, plan); err != nil {
			return err
		}
		if len(keys.Keys) > 0 {
			_, err = tx.KeyPromote(ctx, keys)
		}
		return err
	})
	if err != nil {
		return droverdriver.FlowInsertResult{}, err
	}
	return res, nil
}

// flowKeys returns the distinct (queue, key) pairs of p's keyed jobs,
// callback included.
func flowKeys(p droverdriver.FlowInsertParams) droverdriver.KeyParams {
	var keys droverdriver.KeyParams
	seen := map[[2]string]bool{}
	add := func(j *droverdriver.InsertParams) {
		if qk := [2]string{j.Queue, j.Key}; j.Key != "" && !seen[qk] {
			seen[qk] = true
			keys.Queues, keys.Keys = append(keys.Queues, j.Queue), append(keys.Keys, j.Key)
		}
	}
	for i := range p.Jobs {
		add(&p.Jobs[i].InsertParams)
	}
	if p.Batch && p.Callback != nil {
		add(p.Callback)
	}
	return keys
}
