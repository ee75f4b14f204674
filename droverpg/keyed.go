package droverpg

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/droverhq/drover/internal/driver"
)

// Keyed jobs (per-key order and concurrency) and unique jobs: the parts of
// the PostgreSQL driver that plain jobs never run. See KeyLock, KeyPromote,
// UniqueRelease and UniqueRetake in queries.sql for the locking, promotion
// and unique key rules.

// queueKeyedInsert adds KeyLock (when some jobs have a key) and
// JobInsertKeyed to b, marking the queues to wake in notify.
func (e *executor) queueKeyedInsert(b *pgx.Batch, jobs []driver.InsertParams, now time.Time, notify wakeSet) {
	n := len(jobs)
	var (
		keys       = make([]*string, n)
		limits     = make([]int32, n)
		uniques    = make([]*string, n)
		finals     = make([]int16, n)
		lockQueues []string
		lockKeys   []string
	)
	for i := range jobs {
		j := &jobs[i]
		if dueNow(j, now) {
			notify[j.Queue] = true
		}
		if j.Key != "" {
			keys[i], limits[i] = &j.Key, int32(j.KeyLimit)
			lockQueues, lockKeys = append(lockQueues, j.Queue), append(lockKeys, j.Key)
		}
		if j.UniqueKey != "" {
			uniques[i], finals[i] = &j.UniqueKey, int16(j.UniqueFinal)
		}
	}
	if len(lockKeys) > 0 {
		b.Queue(e.q["KeyLock"], lockQueues, lockKeys)
	}
	table := pgx.Identifier{e.schema, "jobs"}.Sanitize()
	b.Queue(e.q["JobInsertKeyed"], columnsOf(jobs).params(keys, limits, uniques, table, finals)...)
}

// readKeyedInsert reads the results queueKeyedInsert queued and returns
// the special jobs' IDs in their order, 0 for a unique job skipped as a
// duplicate.
func readKeyedInsert(br pgx.BatchResults, jobs []driver.InsertParams) ([]int64, error) {
	for i := range jobs {
		if jobs[i].Key != "" {
			if _, err := br.Exec(); err != nil { // KeyLock
				return nil, err
			}
			break
		}
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// releaseUnique frees, in tx, the unique keys of the jobs in ids that
// ended in a final state their key does not keep (UniqueRelease). It comes
// after every other lock the transaction takes; see UniqueRelease.
func (e *executor) releaseUnique(ctx context.Context, tx pgx.Tx, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, e.q["UniqueRelease"], ids); err != nil {
		return fmt.Errorf("release unique keys: %w", err)
	}
	return nil
}

// finishKeyed runs JobFinish, KeyLock and KeyPromote in one round trip and
// one implicit transaction. The lock only has to come before the promotion
// counts the keys' active jobs: a keyed insert that counted a finished job
// as active holds the lock until it commits, so the promotion then sees
// the job it stored blocked. Taking it after the finish's row locks keeps
// one lock order (rows, then keys) with the settling transactions of
// workflows (flow.go), which learn their keys only once they settled.
func (e *executor) finishKeyed(ctx context.Context, queues, keys []string, finishArgs ...any) ([]int64, error) {
	b := &pgx.Batch{}
	b.Queue(e.q["JobFinish"], finishArgs...)
	b.Queue(e.q["KeyLock"], queues, keys)
	b.Queue(e.q["KeyPromote"], queues, keys, e.channel)
	br := e.db.SendBatch(ctx, b)
	defer br.Close()
	rows, err := br.Query()
	if err != nil {
		return nil, e.wrap("finish jobs", err)
	}
	accepted, _, _, err := readFinished(rows, 0)
	if err != nil {
		return nil, e.wrap("finish jobs", err)
	}
	if _, err := br.Exec(); err != nil {
		return nil, e.wrap("promote keyed jobs", err)
	}
	if _, err := br.Exec(); err != nil {
		return nil, e.wrap("promote keyed jobs", err)
	}
	return accepted, e.wrap("finish jobs", br.Close())
}

// promote makes blocked jobs of the given keys available where the keys
// have room, in tx: KeyLock then KeyPromote, in one round trip, after the
// statements that freed or filled the keys' places (see finishKeyed for
// why the lock may come after them).
func (e *executor) promote(ctx context.Context, tx pgx.Tx, queues, keys []string) error {
	b := &pgx.Batch{}
	b.Queue(e.q["KeyLock"], queues, keys)
	b.Queue(e.q["KeyPromote"], queues, keys, e.channel)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("promote keyed jobs: %w", err)
	}
	return nil
}

// JobPromote is the sweep: it finds keys with blocked jobs and promotes
// what their room allows, under the same locks as a finish.
func (e *executor) JobPromote(ctx context.Context, limit int) (int, error) {
	rows, err := e.db.Query(ctx, e.q["KeyBlocked"], limit)
	if err != nil {
		return 0, e.wrap("promote keyed jobs", err)
	}
	var queues, keys []string
	for rows.Next() {
		var q, k string
		if err := rows.Scan(&q, &k); err != nil {
			rows.Close()
			return 0, e.wrap("promote keyed jobs", err)
		}
		queues, keys = append(queues, q), append(keys, k)
	}
	if err := rows.Err(); err != nil || len(keys) == 0 {
		return 0, e.wrap("promote keyed jobs", err)
	}
	b := &pgx.Batch{}
	b.Queue(e.q["KeyLock"], queues, keys)
	b.Queue(e.q["KeyPromote"], queues, keys, e.channel)
	br := e.db.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return 0, e.wrap("promote keyed jobs", err)
	}
	var promoted, woken int
	if err := br.QueryRow().Scan(&promoted, &woken); err != nil {
		return 0, e.wrap("promote keyed jobs", err)
	}
	return promoted, e.wrap("promote keyed jobs", br.Close())
}

// retakeUnique runs UniqueRetake for a job JobRetry revived in tx. When
// another job holds the key now, it fails with ErrUniqueConflict, and the
// caller's rollback leaves the job finished.
func (e *executor) retakeUnique(ctx context.Context, tx pgx.Tx, id int64) error {
	rows, err := tx.Query(ctx, e.q["UniqueRetake"], id)
	if err != nil {
		return err
	}
	holders, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "23505": // unique_violation: a holder committed meanwhile
		return fmt.Errorf("job %d: %w", id, driver.ErrUniqueConflict)
	case err != nil:
		return err
	case len(holders) > 0:
		return fmt.Errorf("job %d: %w: job %d", id, driver.ErrUniqueConflict, holders[0])
	}
	return nil
}
