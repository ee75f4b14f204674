package drover

import (
	"context"
	"errors"
	"fmt"
)

// BulkAction is what JobBulk does to each job of its filter.
type BulkAction string

// The bulk actions: each is the single-job action (JobRetry, JobCancel,
// JobDiscard) applied to every job of a filter.
const (
	BulkRetry   BulkAction = "retry"
	BulkCancel  BulkAction = "cancel"
	BulkDiscard BulkAction = "discard"
)

// BulkChunk is how many jobs JobBulk reads per page of its filter.
const BulkChunk = 1000

// BulkProgress is how far a JobBulk has come.
type BulkProgress struct {
	// Scanned counts the jobs of the filter read so far; Changed those the
	// action changed: retried, cancelled (or asked to stop, if running)
	// or discarded. A job the filter matched that the action leaves as it
	// is (retrying a running job, cancelling a finished one, a job that
	// moved on meanwhile) is scanned, not changed.
	Scanned, Changed int64
	// LastID is the last job ID scanned: the filter's keyset position.
	LastID int64
}

// JobBulk applies action to every job that matches filter, on every page,
// and reports how many it changed. It reads the filter by keyset pages of
// BulkChunk jobs (filter.After is where it starts; filter.Limit is
// ignored), so it holds one page at a time however many jobs match, and
// changes each job with the single-job action's own guarded statement, in
// a transaction of its own: a job whose state moved since the page was read
// is changed, or left, as that action's rules say, and a batch member or a
// job with dependants settles as it does when changed alone. progress, if
// not nil, is called after every page. A job that went away, or that
// cannot be retried (ErrNotRetryable), is skipped; any other error stops
// the walk and is returned with the progress so far.
func (c *Client[TTx]) JobBulk(ctx context.Context, action BulkAction, filter JobListParams, progress func(BulkProgress)) (BulkProgress, error) {
	var call func(context.Context, int64) (*JobRow, error)
	switch action {
	case BulkRetry:
		call = c.JobRetry
	case BulkCancel:
		call = c.JobCancel
	case BulkDiscard:
		call = c.JobDiscard
	default:
		return BulkProgress{}, invalidf("action %q: use retry, cancel or discard", action)
	}
	var p BulkProgress
	filter.Limit = BulkChunk
	for {
		jobs, err := c.JobList(ctx, filter)
		if err != nil {
			return p, err
		}
		for _, before := range jobs {
			after, err := call(ctx, before.ID)
			switch {
			case errors.Is(err, ErrNotFound), errors.Is(err, ErrNotRetryable):
			case err != nil:
				return p, fmt.Errorf("%s job %d: %w", action, before.ID, err)
			case changedBy(action, before, after):
				p.Changed++
			}
			p.Scanned++
			p.LastID = before.ID
		}
		if progress != nil {
			progress(p)
		}
		if len(jobs) < filter.Limit {
			return p, nil
		}
		filter.After = jobs[len(jobs)-1].ID
	}
}

// changedBy reports whether action changed a job from before to after:
// its state differs (as JobList tells them: a scheduled or retryable job
// made available now changed, an available one whose run time moved to now
// did not), a retried job got an attempt more, or a running job's cancel
// was requested.
func changedBy(action BulkAction, before, after *JobRow) bool {
	if after == nil {
		return false
	}
	switch {
	case before.State != after.State:
		return true
	case action == BulkCancel:
		return after.CancelRequested && !before.CancelRequested
	case action == BulkRetry:
		return after.MaxAttempts != before.MaxAttempts
	}
	return false
}
