package droverpg

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover/droverdriver"
)

// Periodic jobs: the last tick each one inserted (periodic.go in the root
// package).

func (e *executor) PeriodicTicks(ctx context.Context, names []string) (map[string]time.Time, error) {
	rows, err := periodicTicks.query(ctx, e.db, e.q, names)
	if err != nil {
		return nil, e.wrap("read periodic ticks", err)
	}
	last := map[string]time.Time{}
	var name string
	var tick time.Time
	_, err = pgx.ForEachRow(rows, []any{&name, &tick}, func() error {
		last[name] = tick
		return nil
	})
	return last, e.wrap("read periodic ticks", err)
}

func (e *executor) PeriodicTicksRecord(ctx context.Context, names []string, ticks []time.Time) error {
	_, err := periodicTicksRecord.exec(ctx, e.db, e.q, periodicTicksRecordParams{names, ticks})
	return e.wrap("record periodic ticks", err)
}

// Stored periodic definitions (droverdriver.PeriodicExecutor).

var _ droverdriver.PeriodicExecutor = (*executor)(nil)

func toPeriodicParams(p droverdriver.PeriodicParams) periodicParams {
	return periodicParams{Name: p.Name, Schedule: p.Schedule, Kind: p.Kind, Args: string(p.Args), Queue: p.Queue,
		Priority: p.Priority, MaxAttempts: p.MaxAttempts, Tags: strings.Join(p.Tags, ","), Now: p.Now}
}

func (e *executor) PeriodicCreate(ctx context.Context, p droverdriver.PeriodicParams) (*droverdriver.PeriodicRow, error) {
	rows, err := periodicCreate.query(ctx, e.db, e.q, toPeriodicParams(p))
	return e.periodicRow("create periodic job", rows, err)
}

func (e *executor) PeriodicUpdate(ctx context.Context, p droverdriver.PeriodicParams) (*droverdriver.PeriodicRow, error) {
	rows, err := periodicUpdate.query(ctx, e.db, e.q, toPeriodicParams(p))
	return e.periodicRow("update periodic job", rows, err)
}

func (e *executor) PeriodicRegister(ctx context.Context, defs []droverdriver.PeriodicParams) error {
	if len(defs) == 0 {
		return nil
	}
	var r periodicRegisterParams
	for _, d := range defs {
		r.Names = append(r.Names, d.Name)
		r.Schedules = append(r.Schedules, d.Schedule)
		r.Kinds = append(r.Kinds, d.Kind)
		r.Args = append(r.Args, string(d.Args))
		r.Queues = append(r.Queues, d.Queue)
		r.Priorities = append(r.Priorities, int16(d.Priority))
		r.MaxAttempts = append(r.MaxAttempts, int32(d.MaxAttempts))
		r.Tags = append(r.Tags, strings.Join(d.Tags, ","))
		r.Now = d.Now
	}
	_, err := periodicRegister.exec(ctx, e.db, e.q, r)
	return e.wrap("register periodic jobs", err)
}

func (e *executor) PeriodicList(ctx context.Context) ([]*droverdriver.PeriodicRow, error) {
	rows, err := periodicList.query(ctx, e.db, e.q, struct{}{})
	if err != nil {
		return nil, e.wrap("list periodic jobs", err)
	}
	out, err := pgx.CollectRows(rows, scanPeriodic)
	return out, e.wrap("list periodic jobs", err)
}

func (e *executor) PeriodicSetPaused(ctx context.Context, name string, paused bool, now time.Time) (*droverdriver.PeriodicRow, error) {
	rows, err := periodicSetPaused.query(ctx, e.db, e.q, periodicPausedParams{name, paused, now})
	return e.periodicRow("pause periodic job", rows, err)
}

func (e *executor) PeriodicDelete(ctx context.Context, name string) (bool, error) {
	tag, err := periodicDelete.exec(ctx, e.db, e.q, name)
	if err != nil {
		return false, e.wrap("delete periodic job", err)
	}
	return tag.RowsAffected() > 0, nil
}

// periodicRow reads the one definition a statement returned, or nil when
// it returned none.
func (e *executor) periodicRow(op string, rows pgx.Rows, err error) (*droverdriver.PeriodicRow, error) {
	if err != nil {
		return nil, e.wrap(op, err)
	}
	out, err := pgx.CollectRows(rows, scanPeriodic)
	if err != nil || len(out) == 0 {
		return nil, e.wrap(op, err)
	}
	return out[0], nil
}

// scanPeriodic reads the periodicCols columns of a definition.
func scanPeriodic(r pgx.CollectableRow) (*droverdriver.PeriodicRow, error) {
	var p droverdriver.PeriodicRow
	err := r.Scan(&p.Name, &p.Schedule, &p.Kind, &p.Args, &p.Queue, &p.Priority, &p.MaxAttempts, &p.Tags,
		&p.Source, &p.Paused, &p.CreatedAt, &p.UpdatedAt, &p.LastTick)
	return &p, err
}
