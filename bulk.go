package drover

import (
	"context"
	"fmt"
	"slices"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/engine"
)

// BulkAction is what JobBulk does to each job of its filter.
type BulkAction string

// The bulk actions: retry, cancel and discard apply the single-job action
// (JobRetry, JobCancel, JobDiscard) to every job of a filter; delete
// removes jobs from the store.
const (
	BulkRetry   BulkAction = "retry"
	BulkCancel  BulkAction = "cancel"
	BulkDiscard BulkAction = "discard"
	// BulkDelete deletes the jobs of the filter that are not running:
	// finished jobs go at once, as the pruner would take them, and a
	// waiting job is cancelled first in the same transaction, so that its
	// dependants are cancelled, its batch counts it, its key lets the next
	// job start and its unique key is freed, as for any cancel. Running
	// jobs are refused: left as they are and not counted (cancel them
	// first). A deleted job is gone: JobGet no longer finds it, and its
	// result is no longer read by the jobs that depend on it.
	BulkDelete BulkAction = "delete"
)

// bulkActions maps each action to the engine's.
var bulkActions = map[BulkAction]engine.BulkAction{
	BulkRetry: engine.BulkRetry, BulkCancel: engine.BulkCancel,
	BulkDiscard: engine.BulkDiscard, BulkDelete: engine.BulkDelete,
}

// BulkChunk is how many jobs JobBulk reads, and changes in one
// transaction, per page of its filter.
const BulkChunk = 1000

// BulkProgress is how far a JobBulk has come.
type BulkProgress struct {
	// Scanned counts the jobs of the filter read so far; Changed those the
	// action changed: retried, cancelled (or asked to stop, if running),
	// discarded or deleted. A job the filter matched that the action
	// leaves as it is (retrying a running job, cancelling a finished one,
	// deleting a running one, a job that moved on meanwhile) is scanned,
	// not changed.
	Scanned, Changed int64
	// LastID is the last job ID scanned: the filter's keyset position.
	LastID int64
}

// JobBulk applies action to every job that matches filter, on every page,
// and reports how many it changed. It reads the filter by keyset pages of
// BulkChunk jobs (filter.After is where it starts; filter.Limit is
// ignored), so it holds one page at a time however many jobs match, and
// changes each page in one transaction of a few set-based statements
// (each takes the page's IDs), guarded by the state the store holds: a job
// whose state moved since the page was read is changed, or left, as the
// action's rules say, and a batch member or a job with dependants settles
// as it does when changed alone. progress, if not nil, is called after
// every page. Jobs that went away, that cannot be retried
// (ErrNotRetryable) or whose unique key another job holds now
// (ErrUniqueConflict) are left and not counted; any other error stops the
// walk and is returned with the progress so far, every page before it
// done.
func (c *Client[TTx]) JobBulk(ctx context.Context, action BulkAction, filter JobListParams, progress func(BulkProgress)) (BulkProgress, error) {
	op, ok := bulkActions[action]
	if !ok {
		return BulkProgress{}, invalidf("action %q: use retry, cancel, discard or delete", action)
	}
	var p BulkProgress
	filter.Limit = BulkChunk
	for {
		jobs, err := c.JobList(ctx, filter)
		if err != nil {
			return p, err
		}
		if err := c.bulkPage(ctx, action, op, mapAll(jobs, func(j *drovertype.JobRow) int64 { return j.ID }), &p); err != nil {
			return p, err
		}
		if progress != nil {
			progress(p)
		}
		if len(jobs) < filter.Limit {
			return p, nil
		}
		filter.After = p.LastID
	}
}

// JobBulkByID applies action to the jobs ids names, as JobBulk applies it
// to the jobs of a filter: a page of BulkChunk IDs per transaction, in the
// order given, with progress after each page. The dashboard acts on the
// rows selected on its job list this way. Scanned counts the IDs given,
// unknown ones included; Changed the jobs the action changed.
func (c *Client[TTx]) JobBulkByID(ctx context.Context, action BulkAction, ids []int64, progress func(BulkProgress)) (BulkProgress, error) {
	op, ok := bulkActions[action]
	if !ok {
		return BulkProgress{}, invalidf("action %q: use retry, cancel, discard or delete", action)
	}
	var p BulkProgress
	for page := range slices.Chunk(ids, BulkChunk) {
		if err := c.bulkPage(ctx, action, op, page, &p); err != nil {
			return p, err
		}
		if progress != nil {
			progress(p)
		}
	}
	return p, nil
}

// bulkPage applies op to one page of jobs in one transaction and adds it
// to p.
func (c *Client[TTx]) bulkPage(ctx context.Context, action BulkAction, op engine.BulkAction, ids []int64, p *BulkProgress) error {
	changed, err := engine.Bulk(ctx, c.exec, op, ids, c.now())
	if err != nil {
		return fmt.Errorf("%s %s: %w", action, droverdriver.JobsNamed(ids), err)
	}
	p.Changed += int64(changed)
	p.Scanned += int64(len(ids))
	if len(ids) > 0 {
		p.LastID = ids[len(ids)-1]
	}
	return nil
}
