package engine

import (
	"context"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// The other ways a job ends, or waits again, without a result of its own:
// rescue of an expired lease, cancel and discard by an operator. Each runs
// its statement and Ended in one transaction, so that the job's workflow
// or batch is settled, its key promoted and its unique key freed before
// anyone sees it ended, exactly as when a worker's result ends it.

// Rescue returns the running jobs whose lease expired before p.Now (at
// most p.Limit) to available, or ends them when out of attempts, and
// reports how many it moved. A rescued keyed job that waits again spends
// a token of its key's rate, like a retry.
func Rescue(ctx context.Context, ex droverdriver.Executor, p droverdriver.RescueParams) (int, error) {
	var n int
	err := ex.Tx(ctx, func(ctx context.Context, tx droverdriver.Executor) error {
		rows, err := tx.JobRescue(ctx, p)
		if err != nil {
			return err
		}
		n = len(rows)
		var again map[int64]bool
		for i := range rows {
			if rows[i].State == drovertype.JobStateAvailable && rows[i].Key != "" {
				if again == nil {
					again = map[int64]bool{}
				}
				again[rows[i].ID] = true
			}
		}
		return Ended(ctx, tx, rows, again)
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// Cancel cancels a job that has not finished (droverdriver.Executor's
// JobCancel) and returns it as it stands after the call.
func Cancel(ctx context.Context, ex droverdriver.Executor, id int64, now time.Time) (*drovertype.JobRow, error) {
	return endOne(ctx, ex, id, func(ctx context.Context, tx droverdriver.Executor) ([]droverdriver.FinishedRow, error) {
		ended, _, err := tx.JobCancel(ctx, droverdriver.CancelParams{IDs: []int64{id}, Now: now})
		return ended, err
	})
}

// Discard finishes a waiting job as discarded (droverdriver.Executor's
// JobDiscard) and returns it as it stands after the call.
func Discard(ctx context.Context, ex droverdriver.Executor, id int64, now time.Time) (*drovertype.JobRow, error) {
	return endOne(ctx, ex, id, func(ctx context.Context, tx droverdriver.Executor) ([]droverdriver.FinishedRow, error) {
		return tx.JobDiscard(ctx, []int64{id}, now)
	})
}

// endOne runs end and Ended in one transaction and reads job id back in
// it, as the transaction left it: a worker woken by its commit may
// otherwise have changed it already.
func endOne(ctx context.Context, ex droverdriver.Executor, id int64,
	end func(context.Context, droverdriver.Executor) ([]droverdriver.FinishedRow, error)) (*drovertype.JobRow, error) {
	var job *drovertype.JobRow
	err := ex.Tx(ctx, func(ctx context.Context, tx droverdriver.Executor) error {
		rows, err := end(ctx, tx)
		if err != nil {
			return err
		}
		if err := Ended(ctx, tx, rows, nil); err != nil {
			return err
		}
		job, err = tx.JobGet(ctx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return job, nil
}

// Finisher finishes results through the engine on an Executor, for
// callers written against a store that finishes (the completer).
type Finisher struct {
	droverdriver.Executor
}

// JobFinish runs Finish.
func (f Finisher) JobFinish(ctx context.Context, results []droverdriver.Result) ([]int64, error) {
	return Finish(ctx, f.Executor, results)
}

// Refused reports whether the executor says err refuses a statement
// (droverdriver.RefusalReporter); false when it cannot tell.
func (f Finisher) Refused(err error) bool {
	rr, ok := f.Executor.(droverdriver.RefusalReporter)
	return ok && rr.Refused(err)
}
