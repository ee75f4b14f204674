package droversqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"time"

	"github.com/droverhq/drover/droverdriver"
)

// Keyed jobs (per-key order and concurrency) and unique jobs: the parts of
// the SQLite driver that plain jobs never run. The write lock that every
// write transaction holds serialises keyed inserts with promotions, which
// PostgreSQL needs advisory locks for.

// insertKeyed inserts jobs with a key, a unique key or routing, one statement each in
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
		route, routing := routeArgs(j)
		res, err := st.ExecContext(ctx, jobInsertKeyed.args(&keyedInsertParams{insertRow{*j, now}, key, int64(j.KeyLimit), unique,
			uniqueQueue(j), route, routing})...)
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

// UniqueRetake runs UniqueHolder, then UniqueRetake for the jobs it found
// free to take their keys: the write lock keeps anyone from taking one
// between the two.
func (e *executor) UniqueRetake(ctx context.Context, ids []int64) ([]droverdriver.UniqueConflict, error) {
	var conflicts []droverdriver.UniqueConflict
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		conflicts = conflicts[:0]
		var free []int64
		err := uniqueHolder.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error {
			var c droverdriver.UniqueConflict
			if err := rows.Scan(&c.ID, &c.Holder); err != nil {
				return err
			}
			if c.Holder == c.ID {
				free = append(free, c.ID)
			} else {
				conflicts = append(conflicts, c)
			}
			return nil
		}, string(appendIDs(nil, ids)))
		if err != nil || len(free) == 0 {
			return err
		}
		_, err = uniqueRetake.exec(ctx, e, tx, string(appendIDs(nil, free)))
		return err
	})
	return conflicts, e.wrap("retake unique keys", err)
}

// promote runs KeyPromote for each (queue, key) pair in tx that KeyWaiting
// finds something to promote in, and KeyRateSpend for the keys it promoted
// jobs of, and returns how many jobs it promoted and the queues that got
// them, to wake once tx commits. retried are the keyed jobs that tx retried
// after a failed attempt (droverdriver.KeyedRetries), whose next starts
// count against their keys' rates. KeyWaiting reads the whole batch in one
// statement, so that the end of a keyed job that nothing waits behind costs
// one index search, not a KeyPromote of its own (issue 36).
func (e *executor) promote(ctx context.Context, tx *sql.Tx, queues, keys []string, retried []int64) (int, []string, error) {
	if len(keys) == 0 {
		return 0, nil, nil
	}
	pairs := make([][2]string, len(keys))
	for i := range keys {
		pairs[i] = [2]string{queues[i], keys[i]}
	}
	pairsArg, err := json.Marshal(pairs)
	if err != nil {
		return 0, nil, err
	}
	retriedArg := string(appendIDs(nil, retried))
	var waiting [][2]string
	err = keyWaiting.query(ctx, e, tx, e.writer, func(r *sql.Rows) error {
		var p [2]string
		if err := r.Scan(&p[0], &p[1]); err != nil {
			return err
		}
		waiting = append(waiting, p)
		return nil
	}, keyWaitingParams{string(pairsArg), retriedArg})
	if err != nil || len(waiting) == 0 {
		return 0, nil, err
	}
	st, err := keyPromote.prep(ctx, e, tx)
	if err != nil {
		return 0, nil, err
	}
	defer e.done(st)
	now := micros(time.Now())
	total := 0
	var wake []string
	for _, p := range waiting {
		res, err := st.ExecContext(ctx, keyPromote.args(&keyPromoteParams{p[0], p[1], now, retriedArg})...)
		if err != nil {
			return 0, nil, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, nil, err
		}
		if n > 0 {
			if _, err := keyRateSpend.exec(ctx, e, tx, keyRateSpendParams{p[0], p[1], now, n}); err != nil {
				return 0, nil, err
			}
		}
		total += int(n)
		if n > 0 && !slices.Contains(wake, p[0]) {
			wake = append(wake, p[0])
		}
	}
	return total, wake, nil
}

func (e *executor) KeyBlocked(ctx context.Context, limit int) (droverdriver.KeyParams, error) {
	var keys droverdriver.KeyParams
	err := keyBlocked.query(ctx, e, nil, e.writer, func(rows *sql.Rows) error {
		var q, k string
		if err := rows.Scan(&q, &k); err != nil {
			return err
		}
		keys.Queues, keys.Keys = append(keys.Queues, q), append(keys.Keys, k)
		return nil
	}, limit)
	return keys, e.wrap("find blocked keys", err)
}

func (e *executor) KeyRatePrune(ctx context.Context, limit int) error {
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := keyRatePrune.exec(ctx, e, tx, limitAt{micros(time.Now()), limit})
		return err
	})
	return e.wrap("delete idle key rates", err)
}
