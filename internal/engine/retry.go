package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/droverhq/drover/droverdriver"
)

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
func Retry(ctx context.Context, ex droverdriver.Executor, id int64, now time.Time) (*droverdriver.JobRow, error) {
	var job *droverdriver.JobRow
	err := ex.Tx(ctx, func(ctx context.Context, tx droverdriver.Executor) error {
		r, err := tx.JobRetry(ctx, id, now)
		if err != nil {
			return err
		}
		if r != nil {
			if r.Refused != 0 {
				return droverdriver.RetryRefused(id, r.Refused)
			}
			if r.Key != "" {
				keys := droverdriver.KeyParams{Queues: []string{r.Queue}, Keys: []string{r.Key}}
				if err := tx.KeyLock(ctx, keys); err != nil {
					return err
				}
				if _, err := tx.KeyPromote(ctx, keys); err != nil {
					return err
				}
			}
			holder, err := tx.UniqueRetake(ctx, id)
			if err != nil {
				return err
			}
			if holder != 0 {
				return fmt.Errorf("job %d: %w: job %d", id, droverdriver.ErrUniqueConflict, holder)
			}
		}
		job, err = tx.JobGet(ctx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return job, nil
}
