package drover

import (
	"context"
	"errors"
	"fmt"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/engine"
)

// BatchOpts are the options of InsertBatch.
type BatchOpts struct {
	// Callback, when set, is a job inserted with the batch as pending and
	// made available, exactly once, by the transaction that ends the
	// batch's last member (completed, cancelled or discarded). Its
	// Job.BatchID names the batch, so it can read the progress and results.
	Callback     Args
	CallbackOpts *InsertOpts
}

// InsertedBatch is what InsertBatch stored.
type InsertedBatch struct {
	ID int64
	// JobIDs are the members' IDs in input order.
	JobIDs []int64
	// CallbackID is the callback job's ID, 0 without one.
	CallbackID int64
}

// InsertBatch stores jobs as one batch, in one transaction, through the
// bulk insert path: a batch of any size is a few statements. Members may
// also depend on stored jobs (InsertOpts.DependsOn). Either everything is
// stored or, on any error, nothing.
func (c *Client[TTx]) InsertBatch(ctx context.Context, jobs []InsertManyParams, opts *BatchOpts) (*InsertedBatch, error) {
	return c.insertBatch(ctx, c.exec, jobs, opts)
}

// InsertBatchTx is InsertBatch inside the caller's transaction.
func (c *Client[TTx]) InsertBatchTx(ctx context.Context, tx TTx, jobs []InsertManyParams, opts *BatchOpts) (*InsertedBatch, error) {
	return c.insertBatch(ctx, c.driver.UnwrapExecutor(tx), jobs, opts)
}

func (c *Client[TTx]) insertBatch(ctx context.Context, exec droverdriver.Executor, jobs []InsertManyParams, opts *BatchOpts) (*InsertedBatch, error) {
	if len(jobs) == 0 {
		return nil, invalidf("batch: no jobs")
	}
	p := droverdriver.FlowInsertParams{Batch: true, Jobs: make([]droverdriver.FlowJob, len(jobs))}
	for i, j := range jobs {
		fj, err := c.buildFlowJob(j)
		if err != nil {
			return nil, fmt.Errorf("job %d of %d: %w", i+1, len(jobs), err)
		}
		p.Jobs[i] = fj
	}
	if opts != nil && opts.Callback != nil {
		if opts.CallbackOpts != nil && len(opts.CallbackOpts.DependsOn) > 0 {
			return nil, invalidf("batch callback: cannot depend on other jobs; it waits for the batch")
		}
		cb, err := c.buildInsert(opts.Callback, opts.CallbackOpts)
		if err != nil {
			return nil, fmt.Errorf("batch callback: %w", err)
		}
		if cb.UniqueKey != "" {
			return nil, invalidf("batch callback: unique key %q: a batch's callback cannot be a unique job", cb.UniqueKey)
		}
		p.Callback = &cb
	}
	res, err := engine.InsertFlow(ctx, exec, p)
	if err != nil {
		return nil, flowInsertError(err)
	}
	return &InsertedBatch{ID: res.BatchID, JobIDs: res.IDs, CallbackID: res.CallbackID}, nil
}

// ErrBatchNotFound is returned by BatchGet when no batch has the requested
// ID. The error BatchGet returns also matches ErrNotFound, so a caller that
// only asks "was it there?" need not tell batches from jobs.
var ErrBatchNotFound = errors.New("batch not found")

// batchNotFoundError names the missing batch: the stores report a missing
// row as ErrNotFound, whose text speaks of a job.
type batchNotFoundError struct{ id int64 }

func (e *batchNotFoundError) Error() string { return fmt.Sprintf("batch %d not found", e.id) }

func (e *batchNotFoundError) Is(target error) bool {
	return target == ErrBatchNotFound || target == ErrNotFound
}

// BatchGet returns a batch's progress. It reads one row plus the batch's
// running and retrying members from an index that holds only those, so
// it costs the same for a batch of ten jobs and of a million.
func (c *Client[TTx]) BatchGet(ctx context.Context, id int64) (*drovertype.Batch, error) {
	r, err := c.exec.BatchGet(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil, &batchNotFoundError{id: id}
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// BatchList returns up to limit batches (1 to 1,000; 0 means 50), newest
// first, from the one before before (0: the newest), with their progress
// as BatchGet reads it: a keyset page, as cheap deep into a million
// batches as at the start. The next page starts before the last ID
// returned.
func (c *Client[TTx]) BatchList(ctx context.Context, before int64, limit int) ([]*drovertype.Batch, error) {
	if limit == 0 {
		limit = 50
	}
	if limit < 1 || limit > 1000 {
		return nil, invalidf("limit %d: must be between 1 and 1000", limit)
	}
	if before < 0 {
		return nil, invalidf("before %d: must be a batch id, not negative", before)
	}
	return c.exec.BatchList(ctx, droverdriver.BatchListParams{BeforeID: before, Limit: limit})
}

// batchResultsPage is how many results BatchResults reads per statement.
const batchResultsPage = 1000

// BatchResults calls fn with every member of a batch that has ended, in ID
// order, reading them a page at a time so that a batch of any size streams
// in bounded memory. It stops at fn's first error and returns it.
func (c *Client[TTx]) BatchResults(ctx context.Context, batchID int64, fn func(drovertype.JobResult) error) error {
	var after int64
	for {
		page, err := c.BatchResultsAfter(ctx, batchID, after, batchResultsPage)
		if err != nil {
			return err
		}
		for _, r := range page {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(page) < batchResultsPage {
			return nil
		}
		after = page[len(page)-1].ID
	}
}

// BatchResultsAfter returns up to limit members of a batch that have
// ended, with IDs above after, in ID order: one page of what BatchResults
// streams, for callers that page themselves (drover serve's batch
// results, whose pages end at a byte budget too).
func (c *Client[TTx]) BatchResultsAfter(ctx context.Context, batchID, after int64, limit int) ([]drovertype.JobResult, error) {
	return c.exec.BatchResults(ctx, droverdriver.BatchResultsParams{BatchID: batchID, AfterID: after, Limit: limit})
}

// JobResult returns a job's state and result.
func (c *Client[TTx]) JobResult(ctx context.Context, id int64) (*drovertype.JobResult, error) {
	rows, err := c.exec.JobResults(ctx, []int64{id})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("job %d: %w", id, ErrNotFound)
	}
	return &rows[0], nil
}

// JobParentResults returns the state and result of every job that job id
// depends on, in ID order.
func (c *Client[TTx]) JobParentResults(ctx context.Context, id int64) ([]drovertype.JobResult, error) {
	return parentResults(ctx, c.exec, id)
}

func parentResults(ctx context.Context, exec droverdriver.Executor, id int64) ([]drovertype.JobResult, error) {
	return exec.JobParentResults(ctx, id)
}

// JobDependants returns the state and result of every job that depends on
// job id (its children in a workflow), in ID order.
func (c *Client[TTx]) JobDependants(ctx context.Context, id int64) ([]drovertype.JobResult, error) {
	deps, err := c.exec.JobDeps(ctx, []int64{id})
	if err != nil {
		return nil, err
	}
	var children []int64
	for _, d := range deps {
		if d.Parent == id {
			children = append(children, d.Child)
		}
	}
	if len(children) == 0 {
		return nil, nil
	}
	return c.exec.JobResults(ctx, children)
}
