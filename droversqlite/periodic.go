package droversqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"
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
	err = e.writeTx(ctx, func(tx *sql.Tx) error {
		_, err := periodicTicksRecord.exec(ctx, e, tx, string(arg))
		return err
	})
	return e.wrap("record periodic ticks", err)
}
