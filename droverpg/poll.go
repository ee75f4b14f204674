package droverpg

import (
	"context"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/jackc/pgx/v5"
)

// queuesDueParams are QueuesDue's: the queues, and the claimer's time (nil
// for the store's clock).
type queuesDueParams struct {
	Queues []string
	Now    *time.Time
}

var _ droverdriver.QueuesDueExecutor = (*executor)(nil)

// QueuesDue implements droverdriver.QueuesDueExecutor.
func (e *executor) QueuesDue(ctx context.Context, queues []string, now time.Time) ([]string, error) {
	p := queuesDueParams{Queues: queues}
	if !now.IsZero() {
		p.Now = &now
	}
	rows, err := queuesDue.query(ctx, e.db, e.q, p)
	if err != nil {
		return nil, e.wrap("read the queues with jobs due", err)
	}
	due, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return due, e.wrap("read the queues with jobs due", err)
}
