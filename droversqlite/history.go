package droversqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverdriver/sqlstmt"
	"github.com/droverhq/drover/drovertype"
)

// The stored history of queue figures and subscription lag (migration
// 023, droverdriver.HistoryExecutor).

type statsSampleParams struct{ Since, Until, Now int64 }

type statsInsertParams struct {
	At   int64
	Rows string // a JSON array of StatsSample's rows
}

type lagRecordParams struct {
	At   int64
	Lags string // a JSON array of [topic, subscription, lag, oldest ms, dropped]
}

type rollupParams struct{ Minutes, Hours int64 }

type historyParams struct {
	From, To, Bucket int64 // micros
	Queue, Kind      string
}

type lagHistoryParams struct {
	From, To, Bucket int64
	Topic            string
}

var (
	statsSample = def(stmt[statsSampleParams]{name: "StatsSample", cols: 17,
		args: func(p *statsSampleParams) []any { return []any{p.Since, p.Until, p.Now} }})
	statsInsert = def(stmt[statsInsertParams]{name: "StatsInsert",
		args: func(p *statsInsertParams) []any { return []any{p.At, p.Rows} }})
	topicLagRecord = def(stmt[lagRecordParams]{name: "TopicLagRecord",
		args: func(p *lagRecordParams) []any { return []any{p.At, p.Lags} }})
	statsRollupSamples   = def(stmt[int64]{name: "StatsRollupSamples", args: sqlstmt.OneArg[int64]})
	statsRollupLag       = def(stmt[int64]{name: "StatsRollupLag", args: sqlstmt.OneArg[int64]})
	statsRollupDelete    = def(stmt[rollupParams]{name: "StatsRollupDelete", args: (*rollupParams).args})
	statsRollupDeleteLag = def(stmt[rollupParams]{name: "StatsRollupDeleteLag", args: (*rollupParams).args})
	statsHistory         = def(stmt[historyParams]{name: "StatsHistory", cols: 18,
		args: func(p *historyParams) []any { return []any{p.From, p.To, p.Bucket, p.Queue, p.Kind} }})
	topicLagHistory = def(stmt[lagHistoryParams]{name: "TopicLagHistory", cols: 6,
		args: func(p *lagHistoryParams) []any { return []any{p.From, p.To, p.Bucket, p.Topic} }})
)

func (p *rollupParams) args() []any { return []any{p.Minutes, p.Hours} }

func init() {
	readQueries = append(readQueries, statsSample.name, statsHistory.name, topicLagHistory.name)
}

// StatsRecord reads the sample on a reader (StatsSample), then stores it
// in one short write (StatsInsert): together they are PostgreSQL's
// StatsRecord. The read walks every waiting job, which on SQLite's single
// writer would hold up every claim, finish and heartbeat meanwhile.
func (e *executor) StatsRecord(ctx context.Context, p droverdriver.StatsRecordParams) (int, error) {
	var rows [][17]any
	err := statsSample.query(ctx, e, nil, e.reader, func(r *sql.Rows) error {
		// The columns go back to the store as they came: names, counts
		// and milliseconds.
		var row [17]any
		dst := make([]any, len(row))
		for i := range row {
			dst[i] = &row[i]
		}
		if err := r.Scan(dst...); err != nil {
			return err
		}
		rows = append(rows, row)
		return nil
	}, statsSampleParams{micros(p.Since), micros(p.Until), micros(p.Now)})
	if err != nil {
		return 0, e.wrap("record queue figures", err)
	}
	b, err := json.Marshal(rows)
	if err != nil {
		return 0, err
	}
	res, err := statsInsert.exec(ctx, e, nil, statsInsertParams{micros(p.At), string(b)})
	if err != nil {
		return 0, e.wrap("record queue figures", err)
	}
	n, err := res.RowsAffected()
	return int(n), e.wrap("record queue figures", err)
}

func (e *executor) TopicLagRecord(ctx context.Context, at time.Time, lags []drovertype.SubscriptionLag) error {
	rows := make([][5]any, len(lags))
	for i, l := range lags {
		rows[i] = [5]any{l.Topic, l.Subscription, l.Pending, droverdriver.LagAgeMS(at, l.OldestPending), l.Dropped}
	}
	b, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	_, err = topicLagRecord.exec(ctx, e, nil, lagRecordParams{micros(at), string(b)})
	return e.wrap("record subscription lag", err)
}

// StatsRollup runs StatsRollupSamples and StatsRollupLag, then the two
// deletes, in one write transaction: together they are PostgreSQL's
// StatsRollup.
func (e *executor) StatsRollup(ctx context.Context, p droverdriver.StatsRollupParams) (int, error) {
	var n int64
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		n = 0
		minutes := micros(p.Minutes)
		if _, err := statsRollupSamples.exec(ctx, e, tx, minutes); err != nil {
			return err
		}
		if _, err := statsRollupLag.exec(ctx, e, tx, minutes); err != nil {
			return err
		}
		for _, st := range []*stmt[rollupParams]{statsRollupDelete, statsRollupDeleteLag} {
			res, err := st.exec(ctx, e, tx, rollupParams{minutes, micros(p.Hours)})
			if err != nil {
				return err
			}
			d, err := res.RowsAffected()
			if err != nil {
				return err
			}
			n += d
		}
		return nil
	})
	return int(n), e.wrap("roll up the history", err)
}

func (e *executor) StatsHistory(ctx context.Context, p droverdriver.StatsHistoryParams) ([]drovertype.StatSample, error) {
	var out []drovertype.StatSample
	err := statsHistory.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var s drovertype.StatSample
		var at int64
		var ms [6]float64
		if err := rows.Scan(&at, &s.Queue, &s.Kind, &s.Pending, &s.Blocked, &s.Available, &s.Scheduled, &s.Retryable, &s.Running,
			&s.Completed, &s.Cancelled, &s.Discarded, &ms[0], &ms[1], &ms[2], &ms[3], &ms[4], &ms[5]); err != nil {
			return err
		}
		s.At = fromMicros(at)
		droverdriver.SetDurations(&s, ms)
		out = append(out, s)
		return nil
	}, historyParams{micros(p.From), micros(p.To), p.Bucket.Microseconds(), p.Queue, p.Kind})
	return out, e.wrap("read the history", err)
}

func (e *executor) TopicLagHistory(ctx context.Context, p droverdriver.TopicLagHistoryParams) ([]drovertype.TopicLagSample, error) {
	var out []drovertype.TopicLagSample
	err := topicLagHistory.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var s drovertype.TopicLagSample
		var at int64
		var ms float64
		if err := rows.Scan(&at, &s.Topic, &s.Subscription, &s.Lag, &ms, &s.Dropped); err != nil {
			return err
		}
		s.At, s.Oldest = fromMicros(at), droverdriver.MS(ms)
		out = append(out, s)
		return nil
	}, lagHistoryParams{micros(p.From), micros(p.To), p.Bucket.Microseconds(), p.Topic})
	return out, e.wrap("read the lag history", err)
}
