package droverpg

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// The stored history of queue figures and subscription lag (migration
// 023, droverdriver.HistoryExecutor).

type statsRecordParams struct{ At, Since, Until, Now time.Time }

type lagRecordParams struct {
	At            time.Time
	Topics, Subs  []string
	Lags, Dropped []int64
	OldestMS      []float64
}

type rollupParams struct{ Minutes, Hours time.Time }

type historyParams struct {
	From, To    time.Time
	Bucket      float64 // seconds
	Queue, Kind string
}

type lagHistoryParams struct {
	From, To time.Time
	Bucket   float64
	Topic    string
}

var (
	finishedLock      = def(stmt[struct{}]{name: "FinishedLock", args: func(*struct{}) []any { return nil }})
	finishedSummarize = def(stmt[string]{name: "FinishedSummarize", cols: 1,
		args: func(index *string) []any { return []any{*index} }})
	statsRecord = def(stmt[statsRecordParams]{name: "StatsRecord",
		args: func(p *statsRecordParams) []any { return []any{p.At, p.Since, p.Until, p.Now} }})
	topicLagRecord = def(stmt[lagRecordParams]{name: "TopicLagRecord",
		args: func(p *lagRecordParams) []any { return []any{p.At, p.Topics, p.Subs, p.Lags, p.OldestMS, p.Dropped} }})
	statsRollup = def(stmt[rollupParams]{name: "StatsRollup", cols: 1,
		args: func(p *rollupParams) []any { return []any{p.Minutes, p.Hours} }})
	statsHistory = def(stmt[historyParams]{name: "StatsHistory", cols: 18,
		args: func(p *historyParams) []any { return []any{p.From, p.To, p.Bucket, p.Queue, p.Kind} }})
	topicLagHistory = def(stmt[lagHistoryParams]{name: "TopicLagHistory", cols: 6,
		args: func(p *lagHistoryParams) []any { return []any{p.From, p.To, p.Bucket, p.Topic} }})
)

// StatsRecord first summarises the finished jobs' new block ranges
// (summarizeFinished), so that the sample's reads of the minute's finished
// jobs through the BRIN index on finalized_at cost that minute's pages.
func (e *executor) StatsRecord(ctx context.Context, p droverdriver.StatsRecordParams) (int, error) {
	if err := e.summarizeFinished(ctx); err != nil {
		return 0, e.wrap("summarise the finished jobs' new block ranges", err)
	}
	tag, err := statsRecord.exec(ctx, e.db, e.q, statsRecordParams{p.At, p.Since, p.Until, p.Now})
	if err != nil {
		return 0, e.wrap("record queue figures", err)
	}
	return int(tag.RowsAffected()), nil
}

// summarizeFinished summarises the block ranges of finished_jobs that its
// BRIN index on finalized_at (finished_jobs_prune_idx) has not summarised
// yet. A range filled since the last VACUUM has no summary, and a bitmap
// scan of the index must read every such range and recheck its rows: on a
// busy store, where autovacuum comes to the insert-only table only after
// it grew by a fifth, the minute sample, FinishedStats and a JobPrune that
// deletes nothing each read that whole unsummarised tail (10 s a sample
// after an hour at 4,000 finishes a second). Run each minute, this reads
// only the pages filled since the last run, and later inserts widen the
// summaries as they come.
//
// The lock is taken without waiting: a VACUUM of the table, which holds
// the same lock and summarises the ranges itself, is neither waited for
// nor cancelled (a waiting lock would cancel an autovacuum), and the
// sample just goes without this minute's summaries. So does a role that
// does not own the table, which PostgreSQL does not let summarise; the
// index's autosummarize option (ALTER INDEX ... SET (autosummarize = on),
// run by the owner) is then the remedy.
func (e *executor) summarizeFinished(ctx context.Context) error {
	err := pgx.BeginFunc(ctx, e.db, func(tx pgx.Tx) error {
		if _, err := finishedLock.exec(ctx, tx, e.q, struct{}{}); err != nil {
			return err
		}
		_, err := finishedSummarize.exec(ctx, tx, e.q, pgx.Identifier{e.schema, "finished_jobs_prune_idx"}.Sanitize())
		return err
	})
	// lock_not_available, insufficient_privilege
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "55P03" || pgErr.Code == "42501") {
		return nil
	}
	return err
}

func (e *executor) TopicLagRecord(ctx context.Context, at time.Time, lags []drovertype.SubscriptionLag) error {
	p := lagRecordParams{At: at}
	for _, l := range lags {
		p.Topics, p.Subs = append(p.Topics, l.Topic), append(p.Subs, l.Subscription)
		p.Lags, p.Dropped = append(p.Lags, l.Pending), append(p.Dropped, l.Dropped)
		p.OldestMS = append(p.OldestMS, droverdriver.LagAgeMS(at, l.OldestPending))
	}
	_, err := topicLagRecord.exec(ctx, e.db, e.q, p)
	return e.wrap("record subscription lag", err)
}

func (e *executor) StatsRollup(ctx context.Context, p droverdriver.StatsRollupParams) (int, error) {
	var n int
	err := statsRollup.queryRow(ctx, e.db, e.q, rollupParams{p.Minutes, p.Hours}).Scan(&n)
	return n, e.wrap("roll up the history", err)
}

func (e *executor) StatsHistory(ctx context.Context, p droverdriver.StatsHistoryParams) ([]drovertype.StatSample, error) {
	rows, err := statsHistory.query(ctx, e.db, e.q, historyParams{p.From, p.To, p.Bucket.Seconds(), p.Queue, p.Kind})
	if err != nil {
		return nil, e.wrap("read the history", err)
	}
	defer rows.Close()
	var out []drovertype.StatSample
	for rows.Next() {
		var s drovertype.StatSample
		var ms [6]float64
		if err := rows.Scan(&s.At, &s.Queue, &s.Kind, &s.Pending, &s.Blocked, &s.Available, &s.Scheduled, &s.Retryable, &s.Running,
			&s.Completed, &s.Cancelled, &s.Discarded, &ms[0], &ms[1], &ms[2], &ms[3], &ms[4], &ms[5]); err != nil {
			return nil, e.wrap("read the history", err)
		}
		droverdriver.SetDurations(&s, ms)
		out = append(out, s)
	}
	return out, e.wrap("read the history", rows.Err())
}

func (e *executor) TopicLagHistory(ctx context.Context, p droverdriver.TopicLagHistoryParams) ([]drovertype.TopicLagSample, error) {
	rows, err := topicLagHistory.query(ctx, e.db, e.q, lagHistoryParams{p.From, p.To, p.Bucket.Seconds(), p.Topic})
	if err != nil {
		return nil, e.wrap("read the lag history", err)
	}
	defer rows.Close()
	var out []drovertype.TopicLagSample
	for rows.Next() {
		var s drovertype.TopicLagSample
		var ms float64
		if err := rows.Scan(&s.At, &s.Topic, &s.Subscription, &s.Lag, &ms, &s.Dropped); err != nil {
			return nil, e.wrap("read the lag history", err)
		}
		s.Oldest = droverdriver.MS(ms)
		out = append(out, s)
	}
	return out, e.wrap("read the lag history", rows.Err())
}
