package droverpg

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover/droverdriver"
)

// claimLimited claims for a queue with cluster-wide limits, in one
// transaction: QueueLimitTake locks the queue's limits row and refills its
// bucket, QueueLimitRoom counts what the limits leave room for (a statement
// of its own, so that its snapshot is taken under the lock), and JobClaim
// takes that many. The room is passed to JobClaim as its LIMIT, a value the
// planner sees, so the claim keeps its ordered index scan. Under a rate,
// QueueLimitSpend then takes a token per job claimed. Three or four round
// trips, once per claim of up to ClaimMax jobs; queues without limits take
// none of them. cp are the claim's parameters but for the room.
func (e *executor) claimLimited(ctx context.Context, p droverdriver.ClaimParams, token droverdriver.LeaseToken, cp claimParams) ([]*droverdriver.JobRow, error) {
	var jobs []*droverdriver.JobRow
	err := pgx.BeginFunc(ctx, e.db, func(tx pgx.Tx) error {
		l := p.Limit
		b := &pgx.Batch{}
		queueLimitTake.queue(b, e.q, queueLimitTakeParams{Queue: p.Queue, MaxRunning: l.MaxRunning, Rate: l.Rate, PeriodMS: l.Period.Milliseconds()})
		queueLimitRoom.queue(b, e.q, queueCount{p.Queue, p.Max})
		br := tx.SendBatch(ctx, b)
		if _, err := br.Exec(); err != nil {
			br.Close()
			return err
		}
		var room int
		if err := br.QueryRow().Scan(&room); err != nil {
			br.Close()
			return err
		}
		if err := br.Close(); err != nil || room == 0 {
			return err
		}
		cp.Max = room
		rows, err := e.claimQuery(ctx, tx, p, cp)
		if err != nil {
			return err
		}
		p.Max = room
		if jobs, err = scanClaimed(rows, p, token); err != nil || len(jobs) == 0 || l.Rate == 0 {
			return err
		}
		_, err = queueLimitSpend.exec(ctx, tx, e.q, queueCount{p.Queue, len(jobs)})
		return err
	})
	return jobs, err
}
