package droverpg

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover/internal/driver"
)

// claimLimited sends QueueLimitTake and JobClaim for a queue with
// cluster-wide limits as one batch, which PostgreSQL runs as one implicit
// transaction: the limits row stays locked from the refill until the claim
// has counted its jobs in. The caller reads both results and closes the
// batch.
func (e *executor) claimLimited(ctx context.Context, p driver.ClaimParams, claimArgs []any) pgx.BatchResults {
	l := p.Limit
	b := &pgx.Batch{}
	b.Queue(e.q["QueueLimitTake"], p.Queue, l.MaxRunning, l.Rate, l.Period.Milliseconds())
	b.Queue(e.q["JobClaim"], claimArgs...)
	return e.db.SendBatch(ctx, b)
}
