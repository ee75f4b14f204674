package droverdriver

import (
	"context"

	"github.com/droverhq/drover/drovertype"
)

// FlowExecutor holds the statements of workflows (jobs that wait for other
// jobs) and batches (jobs counted together, with results and a callback).
type FlowExecutor interface {
	// JobFlowParents locks and marks as having dependants the stored jobs
	// of ids still waiting or running (JobFlowMarkParents), so that none
	// of them can end unnoticed before the transaction commits, then reads
	// those of ids that ended, with their final states
	// (JobFlowEndedParents): what the engine plans the insert from (engine.InsertFlow). IDs in neither map
	// do not exist. It runs in the caller's transaction (Tx).
	JobFlowParents(ctx context.Context, ids []int64) (live map[int64]bool, ended map[int64]drovertype.JobState, err error)

	// JobInsertFlow stores jobs with dependencies and/or as one batch as
	// the engine's plan says, in one transaction, and returns their IDs
	// in input order: the batch and its callback (stored pending), the
	// jobs with their states and flow bits, their edges. Keyed jobs (and
	// the callback, when keyed) store their keys' rates and are stored
	// behind their keys: the caller takes the keys' lock before (KeyLock)
	// and promotes them after (KeyPromote), in the same transaction. A
	// pending job becomes available in the transaction that ends its last
	// parent. internal/engine's InsertFlow composes the whole insert.
	JobInsertFlow(ctx context.Context, p FlowInsertParams, plan FlowInsertPlan) (FlowInsertResult, error)

	// BatchGet returns a batch's progress: its counters are one row, and its
	// running and retrying members are read from an index that holds only
	// those, never scanning the batch.
	BatchGet(ctx context.Context, id int64) (*drovertype.Batch, error)

	// BatchResults returns a page of a batch's finished members in ID
	// order, with their results, after AfterID.
	BatchResults(ctx context.Context, p BatchResultsParams) ([]drovertype.JobResult, error)

	// BatchList returns up to p.Limit batches, newest first, from the one
	// before p.BeforeID (0: the newest), with their progress as BatchGet
	// reads it: a keyset page of the batches table, and each batch's
	// running and retrying members from the index that holds only those.
	BatchList(ctx context.Context, p BatchListParams) ([]*drovertype.Batch, error)

	// JobResults returns the state and result of each of ids that exists
	// (jobs not yet finished have no result), in ID order.
	JobResults(ctx context.Context, ids []int64) ([]drovertype.JobResult, error)

	// JobParentResults returns JobResults for the parents of a job.
	JobParentResults(ctx context.Context, childID int64) ([]drovertype.JobResult, error)

	// JobDeps returns the workflow edges that touch any of ids, as parent
	// or as child, ordered by parent and child: one step of a walk over a
	// workflow's graph. Edges stay stored after both jobs end, as long as
	// the jobs are kept.
	JobDeps(ctx context.Context, ids []int64) ([]Dep, error)

	// JobsParentResults returns the parents of each of childIDs with their
	// results, ordered by child and parent ID, in one statement: what the
	// HTTP claim hands a remote worker with the jobs that depend on others
	// (those with FlowHasParents).
	JobsParentResults(ctx context.Context, childIDs []int64) ([]ParentResultRow, error)
}

// ParentResultRow is one parent of ChildID with its state and result.
type ParentResultRow struct {
	ChildID int64
	drovertype.JobResult
}

// FlowJob is one job of JobInsertFlow with its dependencies.
type FlowJob struct {
	InsertParams
	// After lists the positions, in the same call, of earlier jobs this one
	// depends on. Only earlier positions: a call can never form a cycle.
	After []int
	// DependsOn lists IDs of stored jobs this one depends on.
	DependsOn []int64
	// ReleaseOnParentFailure runs the job when a parent is cancelled or
	// discarded, instead of cancelling it too.
	ReleaseOnParentFailure bool
}

// FlowInsertParams is one JobInsertFlow call.
type FlowInsertParams struct {
	Jobs []FlowJob
	// Batch makes the jobs one new batch.
	Batch bool
	// Callback, with Batch, is a job made available in the transaction
	// that ends the batch's last member.
	Callback *InsertParams
}

// FlowInsertResult reports what JobInsertFlow stored.
type FlowInsertResult struct {
	IDs        []int64
	BatchID    int64
	CallbackID int64
}

// BatchListParams pages BatchList.
type BatchListParams struct {
	BeforeID int64
	Limit    int
}

// Dep is one workflow edge: Child waits for Parent.
type Dep struct {
	Parent, Child int64
}

// BatchResultsParams pages BatchResults.
type BatchResultsParams struct {
	BatchID int64
	AfterID int64
	Limit   int
}

// FlowInsertPlan is what JobInsertFlow stores besides the jobs themselves:
// each job's stored state, flow bits and waiting count, and the edges to
// stored parents. The engine computes it (engine.InsertFlow) once
// JobFlowParents told it which stored parents have ended, so that both
// stores apply the same rules.
type FlowInsertPlan struct {
	States    []drovertype.JobState // StatePending or StateAvailable
	Flow      []int
	WaitingOn []int
	// Parents[i] lists the stored parents of job i; children within the
	// call are in Jobs[i].After.
	Parents [][]int64
}
