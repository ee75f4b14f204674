package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// ErrDependencyFailed is returned when a job is inserted to depend on a job
// that already ended without completing, unless it asks to be released in
// that case.
var ErrDependencyFailed = errors.New("dependency did not complete")

// InsertFlow stores the jobs of a workflow and/or a batch in one
// transaction and returns their IDs in input order. It locks and marks
// the stored parents the jobs depend on first (JobFlowParents), so that
// none of them can end unnoticed before the jobs are stored, and plans
// each job's state from theirs (planFlowInsert): a job whose
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
		if parents := FlowParents(p); len(parents) > 0 {
			var err error
			if live, ended, err = tx.JobFlowParents(ctx, parents); err != nil {
				return err
			}
		}
		plan, err := planFlowInsert(p, live, ended)
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

// planFlowInsert computes the plan of p given ended, the stored parents
// that have ended, by ID, with their final state (parents not in ended are
// still waiting or running). It fails when a job depends on a job that
// does not exist or, without ReleaseOnParentFailure, on one that ended
// without completing.
func planFlowInsert(p droverdriver.FlowInsertParams, live map[int64]bool, ended map[int64]drovertype.JobState) (droverdriver.FlowInsertPlan, error) {
	n := len(p.Jobs)
	plan := droverdriver.FlowInsertPlan{States: make([]drovertype.JobState, n), Flow: make([]int, n), WaitingOn: make([]int, n), Parents: make([][]int64, n)}
	for i := range p.Jobs {
		j := &p.Jobs[i]
		if p.Batch {
			plan.Flow[i] |= droverdriver.FlowBatchMember
		}
		if j.ReleaseOnParentFailure {
			plan.Flow[i] |= droverdriver.FlowReleaseOnParentFailure
		}
		seen := make(map[int64]bool, len(j.DependsOn))
		for _, id := range j.DependsOn {
			if seen[id] {
				continue
			}
			seen[id] = true
			switch st, ok := ended[id]; {
			case ok && st == drovertype.JobStateCompleted:
				// Met already; the edge is still stored so the child
				// can read the parent's result.
			case ok && !j.ReleaseOnParentFailure:
				return plan, fmt.Errorf("job %d of %d depends on job %d, which ended as %s: %w", i+1, n, id, st, ErrDependencyFailed)
			case ok:
			case live[id]:
				plan.WaitingOn[i]++
			default:
				return plan, fmt.Errorf("job %d of %d depends on job %d: %w", i+1, n, id, droverdriver.ErrNotFound)
			}
			plan.Parents[i] = append(plan.Parents[i], id)
		}
		after := make(map[int]bool, len(j.After))
		for _, k := range j.After {
			if k < 0 || k >= i {
				return plan, fmt.Errorf("job %d of %d: can only depend on an earlier job of the same call, not position %d", i+1, n, k+1)
			}
			if !after[k] {
				after[k] = true
				plan.WaitingOn[i]++
				plan.Flow[k] |= droverdriver.FlowHasDependants
			}
		}
		if len(plan.Parents[i]) > 0 || len(after) > 0 {
			plan.Flow[i] |= droverdriver.FlowHasParents
		}
		plan.States[i] = drovertype.JobStateAvailable
		if plan.WaitingOn[i] > 0 {
			plan.States[i] = drovertype.JobStatePending
		}
	}
	return plan, nil
}

// FlowParents returns the distinct stored parents of p's jobs: those
// InsertFlow locks, and those a fleet places the jobs beside.
func FlowParents(p droverdriver.FlowInsertParams) []int64 {
	seen := map[int64]bool{}
	var ids []int64
	for i := range p.Jobs {
		for _, id := range p.Jobs[i].DependsOn {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	return ids
}
