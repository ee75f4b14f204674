package engine

import (
	"context"

	"github.com/droverhq/drover/droverdriver"
)

// Promote is the sweep behind keyed jobs: it promotes the blocked jobs of
// up to limit keys as far as their room (and rate) allows, under the keys'
// lock as a finish does, and reports how many it promoted; then it deletes
// the rate buckets of idle keys. A finish promotes behind the keyed jobs
// it ends, so the sweep covers only what frees a key's place without one
// (a job rescued out of attempts, a store that lost a promotion) and keys
// whose rate held their jobs back. Keys found blocked that a finish
// promoted meanwhile promote nothing: KeyPromote counts again under the
// lock.
func Promote(ctx context.Context, ex droverdriver.Executor, limit int) (int, error) {
	keys, err := ex.KeyBlocked(ctx, limit)
	if err != nil {
		return 0, err
	}
	var promoted int
	if len(keys.Keys) > 0 {
		err = ex.Tx(ctx, func(ctx context.Context, tx droverdriver.Executor) error {
			if err := tx.KeyLock(ctx, keys); err != nil {
				return err
			}
			promoted, err = tx.KeyPromote(ctx, keys)
			return err
		})
		if err != nil {
			return 0, err
		}
	}
	return promoted, ex.KeyRatePrune(ctx, limit)
}
