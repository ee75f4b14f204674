package droverpg

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
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
