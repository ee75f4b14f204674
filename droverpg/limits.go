package droverpg

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// claimLimited claims for a queue with cluster-wide limits, in one
// transaction: QueueLimitTake locks the queue's settings row and refills
// its bucket, QueueLimitRoom counts what the stored limits leave room for
// (a statement of its own, so that its snapshot is taken under the lock),
// and JobClaim takes that many. The room is passed to JobClaim as its LIMIT, a value the
// planner sees, so the claim keeps its ordered index scan. Under a rate,
// QueueLimitSpend then takes a token per job claimed, at the time the
// claim started them. Three or four round
// trips, once per claim of up to ClaimMax jobs; queues without limits take
// none of them. cp are the claim's parameters but for the room.
func (e *executor) claimLimited(ctx context.Context, p droverdriver.ClaimParams, token drovertype.LeaseToken, cp claimParams) ([]*drovertype.JobRow, error) {
	var jobs []*drovertype.JobRow
	err := pgx.BeginFunc(ctx, e.db, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		queueLimitTake.queue(b, e.q, p.Queue)
		queueLimitRoom.queue(b, e.q, queueCount{p.Queue, p.Max})
		br := tx.SendBatch(ctx, b)
		if _, err := br.Exec(); err != nil {
			br.Close()
			return err
		}
		var room int
		var rated, strict bool
		if err := br.QueryRow().Scan(&room, &rated, &strict); err != nil {
			br.Close()
			return err
		}
		if err := br.Close(); err != nil || room == 0 {
			return err
		}
		cp.Max = room
		// The row, read under its lock, decides strict order, whatever
		// the claimer's cached settings said (ClaimParams.Variant).
		v := p.Variant
		if strict {
			v = droverdriver.ClaimStrict
		}
		rows, err := e.claimQuery(ctx, tx, v, p, cp)
		if err != nil {
			return err
		}
		p.Max = room
		// A strict claim spends its rate tokens itself (JobClaimStrict).
		if jobs, err = scanClaimed(rows, p, token, cp.slots != nil); err != nil || len(jobs) == 0 || !rated || strict {
			return err
		}
		// The bucket is spent at the claim's start, which the store's
		// clock gave every job of the claim alike (JobClaim).
		sp := spendParams{Queue: p.Queue, N: len(jobs)}
		if cp.Now == nil {
			sp.At = jobs[0].AttemptedAt
		}
		_, err = queueLimitSpend.exec(ctx, tx, e.q, sp)
		return err
	})
	return jobs, err
}

// scanSettings reads a row of the QueueSettings statements.
func scanSettings(row pgx.Row) (*drovertype.QueueSettings, error) {
	s := &drovertype.QueueSettings{}
	var periodMS int64
	if err := row.Scan(&s.Queue, &s.Paused, &s.Limit.MaxRunning, &s.Limit.Rate, &periodMS, &s.Strict, &s.UpdatedAt, &s.PausedKinds); err != nil {
		return nil, err
	}
	s.Limit.Period = time.Duration(periodMS) * time.Millisecond
	if len(s.PausedKinds) == 0 {
		s.PausedKinds = nil
	}
	return s, nil
}

func (e *executor) QueueSettingsGet(ctx context.Context, queue string) (*drovertype.QueueSettings, error) {
	s, err := scanSettings(queueSettingsGet.queryRow(ctx, e.db, e.q, queue))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return s, e.wrap("read queue settings", err)
}

func (e *executor) QueueKnown(ctx context.Context, queue string) (bool, error) {
	var known bool
	err := queueKnown.queryRow(ctx, e.db, e.q, queue).Scan(&known)
	return known, e.wrap("look up queue", err)
}

func (e *executor) QueueSettingsList(ctx context.Context) ([]*drovertype.QueueSettings, error) {
	rows, err := queueSettingsList.query(ctx, e.db, e.q, struct{}{})
	if err != nil {
		return nil, e.wrap("list queue settings", err)
	}
	defer rows.Close()
	out := []*drovertype.QueueSettings{}
	for rows.Next() {
		s, err := scanSettings(rows)
		if err != nil {
			return nil, e.wrap("list queue settings", err)
		}
		out = append(out, s)
	}
	return out, e.wrap("list queue settings", rows.Err())
}

// QueueSettingsSet writes the row and notifies in one transaction: the
// notice is delivered at commit, when the new row is what every claim
// reads. Settings change rarely, so the notification's commit lock
// (waker.go) costs nothing here.
func (e *executor) QueueSettingsSet(ctx context.Context, p droverdriver.QueueSettingsSetParams) (*drovertype.QueueSettings, error) {
	var l drovertype.QueueLimit
	if p.Limit != nil {
		l = *p.Limit
	}
	var out *drovertype.QueueSettings
	err := pgx.BeginFunc(ctx, e.db, func(tx pgx.Tx) error {
		var err error
		out, err = scanSettings(queueSettingsSet.queryRow(ctx, tx, e.q, settingsSetParams{
			Queue: p.Queue, Paused: p.Paused, SetLimits: p.Limit != nil,
			MaxRunning: l.MaxRunning, Rate: l.Rate, PeriodMS: l.Period.Milliseconds(), Strict: p.Strict,
			PauseKinds: p.PauseKinds, ResumeKinds: p.ResumeKinds}))
		if err != nil {
			return err
		}
		_, err = notifyStmt.exec(ctx, tx, e.q, notifyParams{e.channel, []string{droverdriver.SettingsNotice(p.Queue)}})
		return err
	})
	if err != nil {
		return nil, e.wrap("write queue settings", err)
	}
	return out, nil
}
