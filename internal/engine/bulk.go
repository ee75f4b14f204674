package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/droverhq/drover/droverdriver"
)

// BulkAction is what Bulk does to each job of a page.
type BulkAction int

// The bulk actions: the single-job actions (Retry, Cancel, Discard) and
// Delete, which has no single-job form.
const (
	BulkRetry BulkAction = iota + 1
	BulkCancel
	BulkDiscard
	// BulkDelete deletes finished jobs and waiting ones, which it cancels
	// first in the same transaction (their dependants are cancelled, their
	// batch counts them, their keys are promoted and their unique keys
	// freed, as for any cancel); running jobs are refused: left as they
	// are, and not counted.
	BulkDelete
)

// Bulk applies action to a page of jobs (ids) in one transaction, a few
// statements whatever the page's size (each driver statement takes the
// page's IDs), and returns how many jobs it changed: retried, cancelled
// or asked to stop, discarded, or deleted, as the rows the statements
// return say. Each statement is guarded by the state the store holds, not
// the state the page was read in, so a job that moved on since is
// changed, or left, as the action's rules say.
//
// A retry whose jobs cannot all take their unique keys again rolls back
// and runs again without those jobs (they are left as they were, not
// counted), so that one held key does not stop the page; refused jobs
// (batch members, jobs with dependants) are left and not counted either.
func Bulk(ctx context.Context, ex droverdriver.Executor, action BulkAction, ids []int64, now time.Time) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	switch action {
	case BulkRetry:
		return bulkRetry(ctx, ex, slices.Clone(ids), now)
	case BulkCancel, BulkDiscard, BulkDelete:
	default:
		return 0, fmt.Errorf("bulk action %d: unknown", action)
	}
	var changed int
	err := ex.Tx(ctx, func(ctx context.Context, tx droverdriver.Executor) error {
		var ended []droverdriver.FinishedRow
		var flagged []int64
		var err error
		if action == BulkDiscard {
			ended, err = tx.JobDiscard(ctx, ids, now)
		} else {
			ended, flagged, err = tx.JobCancel(ctx, droverdriver.CancelParams{IDs: ids, Now: now, LeaveRunning: action == BulkDelete})
		}
		if err != nil {
			return err
		}
		if err := Ended(ctx, tx, ended, nil); err != nil {
			return err
		}
		changed = len(ended) + len(flagged)
		if action == BulkDelete {
			deleted, err := tx.JobDelete(ctx, ids)
			if err != nil {
				return err
			}
			changed = len(deleted)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return changed, nil
}

// errUniqueHeld rolls back a bulk retry some of whose jobs cannot take
// their unique keys again.
type errUniqueHeld struct{ ids []int64 }

func (e *errUniqueHeld) Error() string {
	return fmt.Sprintf("%s: %v", droverdriver.JobsNamed(e.ids), droverdriver.ErrUniqueConflict)
}

// bulkRetry retries ids, again without the jobs whose unique keys are
// held, until none is: each round leaves out at least one job, so it ends.
func bulkRetry(ctx context.Context, ex droverdriver.Executor, ids []int64, now time.Time) (int, error) {
	for len(ids) > 0 {
		var changed int
		err := ex.Tx(ctx, func(ctx context.Context, tx droverdriver.Executor) error {
			rows, conflicts, err := retry(ctx, tx, ids, now)
			if err != nil {
				return err
			}
			if len(conflicts) > 0 {
				held := make([]int64, len(conflicts))
				for i, c := range conflicts {
					held[i] = c.ID
				}
				return &errUniqueHeld{held}
			}
			changed = 0
			for _, r := range rows {
				if r.Refused == 0 {
					changed++
				}
			}
			return nil
		})
		var held *errUniqueHeld
		if errors.As(err, &held) {
			ids = slices.DeleteFunc(ids, func(id int64) bool { return slices.Contains(held.ids, id) })
			continue
		}
		return changed, err
	}
	return 0, nil
}
