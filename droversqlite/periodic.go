package droversqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/droverhq/drover/droverdriver"
)

// Periodic jobs: the last tick each one inserted (periodic.go in the root
// package).

func (e *executor) PeriodicTicks(ctx context.Context, names []string) (map[string]time.Time, error) {
	arg, err := json.Marshal(names)
	if err != nil {
		return nil, err
	}
	last := map[string]time.Time{}
	err = periodicTicks.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var name string
		var tick int64
		if err := rows.Scan(&name, &tick); err != nil {
			return err
		}
		last[name] = fromMicros(tick)
		return nil
	}, string(arg))
	if err != nil {
		return nil, e.wrap("read periodic ticks", err)
	}
	return last, nil
}

func (e *executor) PeriodicTicksRecord(ctx context.Context, names []string, ticks []time.Time) error {
	m := make(map[string]int64, len(names))
	for i, n := range names {
		m[n] = micros(ticks[i])
	}
	arg, err := json.Marshal(m)
	if err != nil {
		return err
	}
	err = e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := periodicTicksRecord.exec(ctx, e, tx, string(arg))
		return err
	})
	return e.wrap("record periodic ticks", err)
}

// Stored periodic definitions (droverdriver.PeriodicExecutor).

var _ droverdriver.PeriodicExecutor = (*executor)(nil)

func toPeriodicParams(p droverdriver.PeriodicParams) (periodicParams, error) {
	tags, err := json.Marshal(nonNilTags(p.Tags))
	return periodicParams{Name: p.Name, Schedule: p.Schedule, Kind: p.Kind, Args: string(p.Args), Queue: p.Queue,
		Priority: int64(p.Priority), MaxAttempts: int64(p.MaxAttempts), Tags: string(tags), Now: micros(p.Now)}, err
}

func nonNilTags(tags []string) []string {
	if tags == nil {
		return []string{}
	}
	return tags
}

func (e *executor) PeriodicCreate(ctx context.Context, p droverdriver.PeriodicParams) (*droverdriver.PeriodicRow, error) {
	return e.periodicWrite(ctx, "create periodic job", periodicCreate, p)
}

func (e *executor) PeriodicUpdate(ctx context.Context, p droverdriver.PeriodicParams) (*droverdriver.PeriodicRow, error) {
	return e.periodicWrite(ctx, "update periodic job", periodicUpdate, p)
}

// periodicWrite runs a statement of periodicParams that returns the
// definition it wrote, if any.
func (e *executor) periodicWrite(ctx context.Context, op string, s *stmt[periodicParams], p droverdriver.PeriodicParams) (*droverdriver.PeriodicRow, error) {
	params, err := toPeriodicParams(p)
	if err != nil {
		return nil, err
	}
	var row *droverdriver.PeriodicRow
	err = e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return s.query(ctx, e, tx, nil, func(rows *sql.Rows) (err error) {
			row, err = scanPeriodic(rows)
			return err
		}, params)
	})
	return row, e.wrap(op, err)
}

// registeredJSON is one definition of PeriodicRegister's JSON array.
type registeredJSON struct {
	Name        string          `json:"name"`
	Schedule    string          `json:"schedule"`
	Kind        string          `json:"kind"`
	Args        json.RawMessage `json:"args"`
	Queue       string          `json:"queue"`
	Priority    int             `json:"priority"`
	MaxAttempts int             `json:"max_attempts"`
	// Tags is the JSON array as text, the column's form.
	Tags string `json:"tags"`
}

func (e *executor) PeriodicRegister(ctx context.Context, defs []droverdriver.PeriodicParams) error {
	if len(defs) == 0 {
		return nil
	}
	out := make([]registeredJSON, len(defs))
	for i, d := range defs {
		tags, err := json.Marshal(nonNilTags(d.Tags))
		if err != nil {
			return err
		}
		out[i] = registeredJSON{Name: d.Name, Schedule: d.Schedule, Kind: d.Kind, Args: d.Args, Queue: d.Queue,
			Priority: d.Priority, MaxAttempts: d.MaxAttempts, Tags: string(tags)}
	}
	arg, err := json.Marshal(out)
	if err != nil {
		return err
	}
	err = e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := periodicRegister.exec(ctx, e, tx, periodicRegisterParams{string(arg), micros(defs[0].Now)})
		return err
	})
	return e.wrap("register periodic jobs", err)
}

func (e *executor) PeriodicList(ctx context.Context) ([]*droverdriver.PeriodicRow, error) {
	var out []*droverdriver.PeriodicRow
	err := periodicList.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		row, err := scanPeriodic(rows)
		out = append(out, row)
		return err
	}, struct{}{})
	return out, e.wrap("list periodic jobs", err)
}

func (e *executor) PeriodicSetPaused(ctx context.Context, name string, paused bool, now time.Time) (*droverdriver.PeriodicRow, error) {
	var row *droverdriver.PeriodicRow
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return periodicSetPaused.query(ctx, e, tx, nil, func(rows *sql.Rows) (err error) {
			row, err = scanPeriodic(rows)
			return err
		}, periodicPausedParams{name, paused, micros(now)})
	})
	return row, e.wrap("pause periodic job", err)
}

func (e *executor) PeriodicDelete(ctx context.Context, name string) (bool, error) {
	var n int64
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := periodicDelete.exec(ctx, e, tx, name)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n > 0, e.wrap("delete periodic job", err)
}

// scanPeriodic reads the periodicCols columns of a definition.
func scanPeriodic(rows *sql.Rows) (*droverdriver.PeriodicRow, error) {
	var p droverdriver.PeriodicRow
	var args, tags string
	var created, updated int64
	var tick sql.NullInt64
	if err := rows.Scan(&p.Name, &p.Schedule, &p.Kind, &args, &p.Queue, &p.Priority, &p.MaxAttempts, &tags,
		&p.Source, &p.Paused, &created, &updated, &tick); err != nil {
		return nil, err
	}
	p.Args = []byte(args)
	if err := json.Unmarshal([]byte(tags), &p.Tags); err != nil {
		return nil, err
	}
	p.CreatedAt, p.UpdatedAt = fromMicros(created), fromMicros(updated)
	if tick.Valid {
		t := fromMicros(tick.Int64)
		p.LastTick = &t
	}
	return &p, nil
}
