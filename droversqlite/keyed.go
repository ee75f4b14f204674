package droversqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/droverhq/drover/droverdriver"
)

// Keyed jobs (per-key order and concurrency) and unique jobs: the parts of
// the SQLite driver that plain jobs never run. The write lock that every
// write transaction holds serialises keyed inserts with promotions, which
// PostgreSQL needs advisory locks for.

// insertKeyed inserts jobs with a key or a unique key, one statement each in
// tx (SQLite runs in process, so this costs no round trips), plus one that
// takes the key of each unique job stored, and returns their IDs in order,
// 0 for a unique job skipped as a duplicate. A job with a rate stores it
// for its key first (KeyRateSet); JobInsertKeyed stores the jobs of keys
// with a rate as blocked, and KeyPromote then starts those the keys'
// tokens and room allow. It returns the keys to promote, which the caller
// promotes once the jobs are in their final state.
func (e *executor) insertKeyed(ctx context.Context, tx *sql.Tx, jobs []droverdriver.InsertParams, now any) (ids []int64, queues, keys []string, err error) {
	st, err := jobInsertKeyed.prep(ctx, e, tx)
	if err != nil {
		return nil, nil, nil, err
	}
	defer e.done(st)
	ids = make([]int64, len(jobs))
	seen := map[[2]string]bool{}
	for i := range jobs {
		j := &jobs[i]
		var key, unique any
		if j.Key != "" {
			key = j.Key
			if qk := [2]string{j.Queue, j.Key}; !seen[qk] {
				seen[qk] = true
				queues, keys = append(queues, j.Queue), append(keys, j.Key)
			}
		}
		if j.KeyRate > 0 {
			if _, err := keyRateSet.exec(ctx, e, tx, keyRateSetParams{j.Queue, j.Key, j.KeyRate, j.KeyRatePeriod.Milliseconds(), now}); err != nil {
				return nil, nil, nil, err
			}
		}
		if j.UniqueKey != "" {
			unique = j.UniqueKey
		}
		res, err := st.ExecContext(ctx, jobInsertKeyed.args(&keyedInsertParams{insertRow{*j, now}, key, int64(j.KeyLimit), unique, uniqueQueue(j)})...)
		if err != nil {
			return nil, nil, nil, err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err != nil {
				return nil, nil, nil, err
			}
			continue // another job holds its unique key
		}
		if ids[i], err = res.LastInsertId(); err != nil {
			return nil, nil, nil, err
		}
		highestID(e.hubKey, ids[i])
		if j.UniqueKey != "" {
			if _, err := uniqueClaim.exec(ctx, e, tx, uniqueClaimParams{ids[i], j.UniqueKey, int64(j.UniqueFinal), j.Kind, uniqueQueue(j)}); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	return ids, queues, keys, nil
}

// uniqueQueue is the queue j's unique key is scoped to: its own with
// UniqueByQueue, else "" (any queue).
func uniqueQueue(j *droverdriver.InsertParams) string {
	if j.UniqueByQueue {
		return j.Queue
	}
	return ""
}

// retakeUnique takes the unique key of a job JobRetry revived in tx again,
// if it gave it up. When another job holds the key now, it fails with
// ErrUniqueConflict, and the rollback leaves the job finished. The write
// lock keeps anyone from taking the key between the two statements.
func (e *executor) retakeUnique(ctx context.Context, tx *sql.Tx, id int64) error {
	holder, err := queryValue[int64](ctx, e, tx, uniqueHolder, id)
	if err != nil {
		return err
	}
	if holder != 0 {
		return fmt.Errorf("job %d: %w: job %d", id, droverdriver.ErrUniqueConflict, holder)
	}
	_, err = uniqueRetake.exec(ctx, e, tx, id)
	return err
}

// promote runs KeyPromote for each (queue, key) pair in tx, and
// KeyRateSpend for the keys it promoted jobs of, and returns how many jobs
// it promoted and the queues that got them, to wake once tx commits.
// retried are the keyed jobs that tx retried after a failed attempt
// (droverdriver.KeyedRetries), whose next starts count against their keys'
// rates.
func (e *executor) promote(ctx context.Context, tx *sql.Tx, queues, keys []string, retried []int64) (int, []string, error) {
	st, err := keyPromote.prep(ctx, e, tx)
	if err != nil {
		return 0, nil, err
	}
	defer e.done(st)
	now := micros(time.Now())
	retriedArg := string(appendIDs(nil, retried))
	total := 0
	var wake []string
	for i := range keys {
		res, err := st.ExecContext(ctx, keyPromote.args(&keyPromoteParams{queues[i], keys[i], now, retriedArg})...)
		if err != nil {
			return 0, nil, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, nil, err
		}
		if n > 0 {
			if _, err := keyRateSpend.exec(ctx, e, tx, keyRateSpendParams{queues[i], keys[i], now, n}); err != nil {
				return 0, nil, err
			}
		}
		total += int(n)
		if n > 0 && !slices.Contains(wake, queues[i]) {
			wake = append(wake, queues[i])
		}
	}
	return total, wake, nil
}

// JobPromote is the sweep: it finds keys with blocked jobs and promotes
// what their room allows.
func (e *executor) JobPromote(ctx context.Context, limit int) (int, error) {
	var promoted int
	var wake []string
	err := e.writeTx(ctx, func(tx *sql.Tx) error {
		var queues, keys []string
		err := keyBlocked.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error {
			var q, k string
			if err := rows.Scan(&q, &k); err != nil {
				return err
			}
			queues, keys = append(queues, q), append(keys, k)
			return nil
		}, limit)
		if err != nil || len(keys) == 0 {
			return err
		}
		promoted, wake, err = e.promote(ctx, tx, queues, keys, nil)
		return err
	})
	if err == nil {
		// Buckets of idle keys go with the sweep (KeyRatePrune).
		err = e.writeTx(ctx, func(tx *sql.Tx) error {
			_, err := keyRatePrune.exec(ctx, e, tx, limitAt{micros(time.Now()), limit})
			return err
		})
	}
	if err != nil {
		return 0, e.wrap("promote keyed jobs", err)
	}
	e.wake(wake)
	return promoted, nil
}
