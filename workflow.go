package drover

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/engine"
)

// ErrDependencyFailed is returned when a job is inserted to depend on a job
// that already ended cancelled or discarded (unless it sets
// InsertOpts.ReleaseOnParentFailure). Nothing is stored.
var ErrDependencyFailed = engine.ErrDependencyFailed

// Workflow is a set of jobs with dependencies between them (a DAG), stored
// in one call by Client.InsertWorkflow. A step waits, as pending, until
// every step it comes after has completed; the statement that completes
// the last of them makes it available. If one of them is cancelled or
// discarded, the step is cancelled too (and so on down the graph), unless
// its InsertOpts.ReleaseOnParentFailure is set.
//
// Steps can only come after steps added before them, so a workflow can
// never hold a cycle.
type Workflow struct {
	steps []workflowStep
}

type workflowStep struct {
	job   InsertManyParams
	after []int
}

// Step names a step of a Workflow, for the steps that come after it.
type Step struct {
	w     *Workflow
	index int
}

// Index is the step's position in its workflow, which is also the
// position of its ID in what InsertWorkflow returns.
func (s Step) Index() int { return s.index }

// NewWorkflow returns an empty workflow.
func NewWorkflow() *Workflow { return &Workflow{} }

// Add adds a job that runs once every step in after completed, and returns
// its step. opts may also name stored jobs to wait for (DependsOn).
func (w *Workflow) Add(args Args, opts *InsertOpts, after ...Step) Step {
	idx := make([]int, len(after))
	for i, s := range after {
		idx[i] = s.index
		if s.w != w {
			idx[i] = -1 // reported by InsertWorkflow
		}
	}
	w.steps = append(w.steps, workflowStep{job: InsertManyParams{Args: args, Opts: opts}, after: idx})
	return Step{w: w, index: len(w.steps) - 1}
}

// Len is the number of steps.
func (w *Workflow) Len() int { return len(w.steps) }

// InsertWorkflow stores every step of w in one transaction and returns
// their IDs in the order they were added. Either all are stored or, on any
// error, none.
func (c *Client[TTx]) InsertWorkflow(ctx context.Context, w *Workflow) ([]int64, error) {
	return c.insertWorkflow(ctx, c.exec, w)
}

// InsertWorkflowTx is InsertWorkflow inside the caller's transaction.
func (c *Client[TTx]) InsertWorkflowTx(ctx context.Context, tx TTx, w *Workflow) ([]int64, error) {
	return c.insertWorkflow(ctx, c.driver.UnwrapExecutor(tx), w)
}

// InsertChain stores jobs as a sequence, each waiting for the one before
// it, in one call: the common workflow. It returns their IDs in order.
func (c *Client[TTx]) InsertChain(ctx context.Context, jobs []InsertManyParams) ([]int64, error) {
	w := NewWorkflow()
	var prev []Step
	for _, j := range jobs {
		prev = []Step{w.Add(j.Args, j.Opts, prev...)}
	}
	return c.InsertWorkflow(ctx, w)
}

func (c *Client[TTx]) insertWorkflow(ctx context.Context, exec droverdriver.Executor, w *Workflow) ([]int64, error) {
	if w == nil || len(w.steps) == 0 {
		return nil, invalidf("workflow: no steps")
	}
	jobs := make([]InsertManyParams, len(w.steps))
	after := make([][]int, len(w.steps))
	for i, s := range w.steps {
		jobs[i], after[i] = s.job, s.after
		for _, k := range s.after {
			if k < 0 {
				return nil, invalidf("workflow: step %d comes after a step of another workflow", i+1)
			}
		}
	}
	return c.insertDependants(ctx, exec, jobs, after)
}

// insertDependants stores jobs of which some wait for others: stored jobs
// (InsertOpts.DependsOn) or earlier jobs of the same call (after[i]).
func (c *Client[TTx]) insertDependants(ctx context.Context, exec droverdriver.Executor, jobs []InsertManyParams, after [][]int) ([]int64, error) {
	p := droverdriver.FlowInsertParams{Jobs: make([]droverdriver.FlowJob, len(jobs))}
	for i, j := range jobs {
		fj, err := c.buildFlowJob(j)
		if err != nil {
			return nil, fmt.Errorf("job %d of %d: %w", i+1, len(jobs), err)
		}
		if after != nil {
			fj.After = after[i]
		}
		p.Jobs[i] = fj
	}
	params := make([]droverdriver.InsertParams, len(p.Jobs))
	for i := range p.Jobs {
		params[i] = p.Jobs[i].InsertParams
	}
	c.injectTrace(ctx, params)
	for i := range p.Jobs {
		p.Jobs[i].InsertParams = params[i]
	}
	res, err := engine.InsertFlow(ctx, exec, p)
	if err != nil {
		return nil, flowInsertError(err)
	}
	return res.IDs, nil
}

// buildFlowJob validates one job like any insert, plus its dependencies.
func (c *Client[TTx]) buildFlowJob(j InsertManyParams) (droverdriver.FlowJob, error) {
	var fj droverdriver.FlowJob
	p, err := c.buildInsert(j.Args, j.Opts)
	if err != nil {
		return fj, err
	}
	if p.UniqueKey != "" {
		// A skipped duplicate would leave its dependants waiting on a job
		// that was never stored, and its batch one member short.
		return fj, invalidf("unique key %q: a unique job cannot be part of a workflow or batch", p.UniqueKey)
	}
	fj.InsertParams = p
	if j.Opts != nil {
		for _, id := range j.Opts.DependsOn {
			if id <= 0 {
				return fj, invalidf("depends on %d: not a job ID", id)
			}
		}
		fj.DependsOn = j.Opts.DependsOn
		fj.ReleaseOnParentFailure = j.Opts.ReleaseOnParentFailure
	}
	return fj, nil
}

// flowInsertError marks errors about dependencies as input errors: they
// name a job that does not exist or cannot be waited for.
func flowInsertError(err error) error {
	if errors.Is(err, droverdriver.ErrNotFound) || errors.Is(err, engine.ErrDependencyFailed) {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return err
}

// MaxWorkflowGraph is how many jobs WorkflowGraph returns at most.
const MaxWorkflowGraph = 500

// WorkflowGraph is the workflow a job belongs to: its jobs with their
// states, and the edges between them.
type WorkflowGraph struct {
	// Jobs are the workflow's jobs, the one asked about first.
	Jobs []drovertype.JobResult
	// Edges say which job waits for which, by parent and child.
	Edges []WorkflowEdge
	// Truncated is true when the workflow holds more than
	// MaxWorkflowGraph jobs: Jobs are then those nearest the job asked
	// about, and Edges those between them.
	Truncated bool
}

// WorkflowEdge is one dependency: Child waits for Parent.
type WorkflowEdge struct {
	Parent, Child int64
}

// WorkflowGraph returns the workflow job id belongs to, following its
// dependencies both ways (parents, dependants, theirs) as long as the jobs
// are kept: a job with no dependencies is a workflow of one. It reads one
// statement per step away from id, by the edges' indexes, and at most
// MaxWorkflowGraph jobs.
func (c *Client[TTx]) WorkflowGraph(ctx context.Context, id int64) (*WorkflowGraph, error) {
	ids, edges, truncated, err := engine.Graph(ctx, c.exec, id, MaxWorkflowGraph)
	if err != nil {
		return nil, err
	}
	rows, err := c.exec.JobResults(ctx, ids)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(rows, func(r drovertype.JobResult) bool { return r.ID == id }) {
		return nil, fmt.Errorf("job %d: %w", id, ErrNotFound)
	}
	g := &WorkflowGraph{Truncated: truncated}
	// Jobs in the order the walk reached them; a pruned job (an edge to a
	// job no longer kept) is left out with its edges.
	byID := make(map[int64]drovertype.JobResult, len(rows))
	for _, r := range rows {
		byID[r.ID] = r
	}
	for _, j := range ids {
		if r, ok := byID[j]; ok {
			g.Jobs = append(g.Jobs, r)
		}
	}
	for _, e := range edges {
		_, p := byID[e.Parent]
		_, ch := byID[e.Child]
		if p && ch {
			g.Edges = append(g.Edges, WorkflowEdge{Parent: e.Parent, Child: e.Child})
		}
	}
	return g, nil
}
