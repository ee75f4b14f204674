package droversqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/droverhq/drover/droverdriver"
)

// limitRoom refills a limited queue's rate bucket and returns how many jobs
// the claim in tx may take under the queue's stored settings, at most
// p.Max, and whether the queue has a rate to spend. The write lock tx holds
// makes the count exact: no claim or finish of another process interleaves
// with it. A queue whose settings row is gone (its limits were removed
// after the caller read them) gets p.Max and no rate.
func (e *executor) limitRoom(ctx context.Context, tx *sql.Tx, p droverdriver.ClaimParams, now time.Time) (room int, rated, strict bool, err error) {
	room = p.Max
	err = queueLimitTake.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error { return rows.Scan(&room, &rated, &strict) },
		queueLimitTakeParams{Queue: p.Queue, Now: micros(now), Max: p.Max})
	return room, rated, strict, err
}
