package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// ErrNotRetryable is returned by Retry for a finished job that must not
// run again: a batch member or a job with dependants. Its end was counted
// on its batch (which may have released its callback) or settled its
// dependants, and a second end would count or settle again.
var ErrNotRetryable = errors.New("job cannot be retried")

// Retry makes job id claimable now (droverdriver.Executor's JobRetry) and
// does what its return asks for, in one transaction: a finished batch
// member or job with dependants is refused with ErrNotRetryable, since its
// end was already counted and settled; a keyed job revived waits blocked
// in its key, which is promoted under its lock as a finish promotes it; a
// unique job that gave up its key takes it again, or the retry rolls back
// with ErrUniqueConflict when another job holds it now. Keys come before
// unique keys, in FinishExecutor's lock order. It returns the job as the
// transaction left it: a worker woken by its commit may otherwise have run
// it already.
func Retry(ctx context.Context, ex droverdriver.Executor, id int64, now time.Time) (*drovertype.JobRow, error) {
	var job *drovertype.JobRow
	err := ex.Tx(ctx, func(ctx context.Context, tx droverdriver.Executor) error {
		rows, conflicts, err := retry(ctx, tx, []int64{id}, now)
		switch {
		case err != nil:
			return err
		case len(rows) == 1 && rows[0].Refused != 0:
			return retryRefused(id, rows[0].Refused)
		case len(conflicts) > 0:
			return fmt.Errorf("job %d: %w: job %d", id, droverdriver.ErrUniqueConflict, conflicts[0].Holder)
		}
		job, err = tx.JobGet(ctx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return job, nil
}

// retry runs JobRetry for ids in tx, promotes the keys of the keyed jobs
// it revived and makes the unique ones take their keys again. It returns
// what JobRetry matched and the jobs that could not take their unique
// keys, whose caller must roll tx back.
func retry(ctx context.Context, tx droverdriver.Executor, ids []int64, now time.Time) ([]droverdriver.RetriedRow, []droverdriver.UniqueConflict, error) {
	rows, err := tx.JobRetry(ctx, ids, now)
	if err != nil {
		return nil, nil, err
	}
	var keys keySet
	retried := make([]int64, 0, len(rows))
	for _, r := range rows {
		if r.Refused != 0 {
			continue
		}
		retried = append(retried, r.ID)
		if r.Key != "" {
			keys.add(r.Queue, r.Key)
		}
	}
	if len(keys.p.Keys) > 0 {
		if err := promote(ctx, tx, keys.p); err != nil {
			return nil, nil, err
		}
	}
	if len(retried) == 0 {
		return rows, nil, nil
	}
	conflicts, err := tx.UniqueRetake(ctx, retried)
	if err != nil {
		return nil, nil, err
	}
	return rows, conflicts, nil
}

// retryRefused is the error Retry returns for job id, which JobRetry left
// finished because of its flow bits (RetriedRow.Refused): it names which
// of the two reasons applies.
func retryRefused(id int64, flow int) error {
	why := "it has dependants, which were released or cancelled when it ended"
	if flow&droverdriver.FlowBatchMember != 0 {
		why = "it is a batch member, and its batch already counted its end"
	}
	return fmt.Errorf("%w: job %d: %s; insert a new job instead", ErrNotRetryable, id, why)
}
