package droverpg

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// FloorCommand and CompleteFloorCommand describe what Floor measures, for
// reports.
const (
	FloorCommand         = "raw SQL floor: %d clients each loop { claim %d ids with FOR UPDATE SKIP LOCKED; DELETE them } over %d rows in a scratch table (the loop of shared/peers/claim_delete.sql)"
	CompleteFloorCommand = "claim-and-complete floor: %d clients each loop { claim %d ids with FOR UPDATE SKIP LOCKED; mark them completed } over %d rows in a scratch table (the loop of shared/peers/claim_complete.sql)"
)

// Floor measures the raw SQL floor of a job queue on this database: the
// rate at which bare statements claim a batch of rows with FOR UPDATE SKIP
// LOCKED and delete them, with no queue library around them, or with
// complete, mark them completed: the floor of a queue that keeps the
// history of its jobs, as Drover does. It uses a scratch table in the
// driver's schema and drops it afterwards. The bench reports Drover's rate
// against it, measured in the same run. loopStarts, when not nil, is
// called as the timed loop begins, after the set-up, so that the bench can
// read its CPU and WAL counters around the loop alone.
func (d *Driver) Floor(ctx context.Context, rows, batch, clients int, complete bool, loopStarts func()) (float64, error) {
	table := pgx.Identifier{d.schema, "floor_jobs"}.Sanitize()
	setup := []string{
		"DROP TABLE IF EXISTS " + table,
		"CREATE TABLE " + table + " (id bigserial PRIMARY KEY, queue text, args jsonb, state smallint DEFAULT 0, run_at timestamptz DEFAULT now(), attempt int DEFAULT 0, locked_by text)",
		"CREATE INDEX ON " + table + " (id) WHERE state = 0",
		fmt.Sprintf("INSERT INTO %s (queue, args) SELECT 'default', jsonb_build_object('n', g) FROM generate_series(1, %d) g", table, rows),
		"VACUUM ANALYZE " + table,
	}
	for _, q := range setup {
		if _, err := d.pool.Exec(ctx, q); err != nil {
			return 0, fmt.Errorf("floor setup: %w", err)
		}
	}
	defer d.pool.Exec(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+table)

	claim := `WITH c AS (SELECT id FROM ` + table + ` WHERE state = 0 ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED),
		u AS (UPDATE ` + table + ` t SET state = 1, attempt = t.attempt + 1, locked_by = 'w' FROM c WHERE t.id = c.id RETURNING t.id)
		SELECT coalesce(array_agg(id), '{}') FROM u`
	del := `DELETE FROM ` + table + ` WHERE id = ANY($1)`
	if complete {
		del = `UPDATE ` + table + ` SET state = 2, locked_by = NULL WHERE id = ANY($1)`
	}
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	if loopStarts != nil {
		loopStarts()
	}
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				var ids []int64
				if err := d.pool.QueryRow(ctx, claim, batch).Scan(&ids); err != nil {
					errs <- err
					return
				}
				if len(ids) == 0 {
					return
				}
				if _, err := d.pool.Exec(ctx, del, ids); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return 0, fmt.Errorf("floor loop: %w", err)
	}
	return float64(rows) / elapsed.Seconds(), nil
}
