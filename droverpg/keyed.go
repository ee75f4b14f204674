package droverpg

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/droverhq/drover/droverdriver"
)

// Keyed jobs (per-key order and concurrency) and unique jobs: the parts of
// the PostgreSQL driver that plain jobs never run. See KeyLock, KeyPromote,
// UniqueRelease and UniqueRetake in queries.sql for the locking, promotion
// and unique key rules.

// queueKeyedInsert adds KeyLock (when some jobs have a key) and
// JobInsertKeyed to b, marking the queues to wake in notify. With keys, it
// also adds KeyRateSet before the insert (when some jobs have a rate) and
// KeyPromote after it: the insert stores the jobs of keys with a rate as
// blocked, and the promotion starts them as their tokens allow. Keys also
// bring CustomPlans before the insert, so that the insert and KeyPromote,
// which look their keys' jobs up, are planned for the table's current size
// instead of by a cached plan priced on an empty table. A setting in the
// batch, rather than a pgx exec mode for these statements, because a
// pgx.Batch runs all its statements in the connection's one mode; it costs
// no round trip. In a caller's transaction the setting holds until it
// ends: its later statements are planned afresh too, never run otherwise.
func (e *executor) queueKeyedInsert(b *pgx.Batch, jobs []droverdriver.InsertParams, now time.Time, notify wakeSet) {
	n := len(jobs)
	var (
		keys       = make([]*string, n)
		limits     = make([]int32, n)
		uniques    = make([]*string, n)
		finals     = make([]int16, n)
		byQueue    = make([]bool, n)
		lockQueues []string
		lockKeys   []string
		rates      keyRates
	)
	for i := range jobs {
		j := &jobs[i]
		if j.Due(now) {
			wakeFor(notify, j)
		}
		if j.Key != "" {
			keys[i], limits[i] = &j.Key, int32(j.KeyLimit)
			lockQueues, lockKeys = append(lockQueues, j.Queue), append(lockKeys, j.Key)
			rates.add(j)
		}
		if j.UniqueKey != "" {
			uniques[i], finals[i], byQueue[i] = &j.UniqueKey, int16(j.UniqueFinal), j.UniqueByQueue
		}
	}
	if len(lockKeys) > 0 {
		keyLock.queue(b, e.q, keyList{lockQueues, lockKeys})
		if len(rates.queues) > 0 {
			keyRateSet.queue(b, e.q, rates)
		}
		customPlans.queue(b, e.q, struct{}{})
	}
	table := pgx.Identifier{e.schema, "jobs"}.Sanitize()
	jobInsertKeyed.queue(b, e.q, keyedInsertParams{columnsOf(jobs), keys, limits, uniques, table, finals, byQueue, routesOf(jobs)})
	if len(lockKeys) > 0 {
		// Its queues are woken already: notify holds every keyed job's.
		keyPromote.queue(b, e.q, keyPromoteParams{keyList{lockQueues, lockKeys}, nil})
	}
}

// keyRates collects the per-key rates (InsertParams.KeyRate) of an insert
// as KeyRateSet's parameters.
type keyRates struct {
	queues, keys []string
	rates        []int32
	periods      []int64
}

func (r *keyRates) add(j *droverdriver.InsertParams) {
	if j.KeyRate > 0 {
		r.queues, r.keys = append(r.queues, j.Queue), append(r.keys, j.Key)
		r.rates, r.periods = append(r.rates, int32(j.KeyRate)), append(r.periods, j.KeyRatePeriod.Milliseconds())
	}
}

func (r *keyRates) params() []any { return []any{r.queues, r.keys, r.rates, r.periods} }

// readKeyedInsert reads the results queueKeyedInsert queued and returns
// the special jobs' IDs in their order, 0 for a unique job skipped as a
// duplicate.
func readKeyedInsert(br pgx.BatchResults, jobs []droverdriver.InsertParams) ([]int64, error) {
	keyed, rated := false, false
	for i := range jobs {
		keyed = keyed || jobs[i].Key != ""
		rated = rated || jobs[i].KeyRate > 0
	}
	if keyed {
		if _, err := br.Exec(); err != nil { // KeyLock
			return nil, err
		}
	}
	if rated {
		if _, err := br.Exec(); err != nil { // KeyRateSet
			return nil, err
		}
	}
	if keyed {
		if _, err := br.Exec(); err != nil { // CustomPlans
			return nil, err
		}
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, err
	}
	if keyed {
		if _, err := br.Exec(); err != nil { // KeyPromote
			return nil, err
		}
	}
	return ids, nil
}

func (e *executor) KeyBlocked(ctx context.Context, limit int) (droverdriver.KeyParams, error) {
	queues, keys, err := e.keysOf(ctx, keyBlocked, limit)
	return droverdriver.KeyParams{Queues: queues, Keys: keys}, e.wrap("find blocked keys", err)
}

func (e *executor) KeyRatePrune(ctx context.Context, limit int) error {
	return e.wrap("delete idle key rates", e.pruneKeyRates(ctx, limit))
}

// pruneKeyRates deletes the rate buckets of keys that have no unfinished
// job and a full bucket, at most limit, so that the table follows the keys
// in use rather than every key that ever had a rate. It locks the keys like
// an insert does and checks again under the lock (KeyRatePrune).
func (e *executor) pruneKeyRates(ctx context.Context, limit int) error {
	queues, keys, err := e.keysOf(ctx, keyRateIdle, limit)
	if err != nil || len(keys) == 0 {
		return err
	}
	b := &pgx.Batch{}
	keyLock.queue(b, e.q, keyList{queues, keys})
	keyRatePrune.queue(b, e.q, keyList{queues, keys})
	return e.db.SendBatch(ctx, b).Close()
}

// keysOf runs query, which returns (queue, key) pairs, with limit.
func (e *executor) keysOf(ctx context.Context, query *stmt[int], limit int) (queues, keys []string, err error) {
	rows, err := query.query(ctx, e.db, e.q, limit)
	if err != nil {
		return nil, nil, err
	}
	var q, k string
	_, err = pgx.ForEachRow(rows, []any{&q, &k}, func() error {
		queues, keys = append(queues, q), append(keys, k)
		return nil
	})
	return queues, keys, err
}

// UniqueRetake reports a holder that commits while the statement waits for
// it by the unique index's violation.
func (e *executor) UniqueRetake(ctx context.Context, ids []int64) ([]droverdriver.UniqueConflict, error) {
	rows, err := uniqueRetake.query(ctx, e.db, e.q, ids)
	if err != nil {
		return nil, e.wrap("retake unique keys", err)
	}
	conflicts, err := pgx.CollectRows(rows, pgx.RowToStructByPos[droverdriver.UniqueConflict])
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "23505": // unique_violation
		return nil, fmt.Errorf("%s: %w", droverdriver.JobsNamed(ids), droverdriver.ErrUniqueConflict)
	case err != nil:
		return nil, e.wrap("retake unique keys", err)
	}
	return conflicts, nil
}
