package droversqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/droverhq/drover/droverdriver"
)

// limitRoom writes a limited queue's limits, refills its rate bucket and
// returns how many jobs the claim in tx may take, at most p.Max. The write
// lock tx holds makes the count exact: no claim or finish of another
// process interleaves with it.
func (e *executor) limitRoom(ctx context.Context, tx *sql.Tx, p droverdriver.ClaimParams, now time.Time) (int, error) {
	l := p.Limit
	return queryValue[int](ctx, e, tx, queueLimitTake, queueLimitTakeParams{p.Queue, l.MaxRunning, l.Rate, l.Period.Milliseconds(), micros(now), p.Max})
}
