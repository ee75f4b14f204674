package droversqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// The statements the engine composes to finish attempts
// (droverdriver.FinishExecutor). Which of them run, and on which jobs, is
// the engine's decision (internal/engine/finish.go).

// Tx runs fn in a write transaction on the writer, which begins IMMEDIATE
// and so holds the file's write lock from its first statement (a round's,
// shared with the other writes queued with it: rounds.go), or in a
// savepoint of the transaction the executor runs in.
func (e *executor) Tx(ctx context.Context, fn func(ctx context.Context, tx droverdriver.Executor) error) error {
	if e.tx != nil {
		return e.savepoint(ctx, e.tx, func() error { return fn(ctx, e) })
	}
	var woken []string
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		woken = woken[:0]
		return fn(ctx, &executor{shared: e.shared, tx: tx, owned: true, pending: &woken})
	})
	if err == nil {
		notify(e.hubKey, woken)
	}
	return err
}

// savepoint runs fn in a savepoint of tx, and rolls back to it when fn
// fails, leaving tx as it was before the call. When the savepoint cannot
// be begun, rolled back or released, SQLite has rolled the whole
// transaction back (an I/O error, a full disk, an interrupt): the error is
// then a txLostError, since what tx held before the call is gone too.
func (e *executor) savepoint(ctx context.Context, tx *sql.Tx, fn func() error) error {
	if _, err := savepointBegin.exec(ctx, e, tx, struct{}{}); err != nil {
		return txLostError{err}
	}
	if err := fn(); err != nil {
		ctx = context.WithoutCancel(ctx)
		if _, rerr := savepointRollback.exec(ctx, e, tx, struct{}{}); rerr != nil {
			return txLostError{err}
		}
		if _, rerr := savepointRelease.exec(ctx, e, tx, struct{}{}); rerr != nil {
			return txLostError{err}
		}
		return err
	}
	if _, err := savepointRelease.exec(ctx, e, tx, struct{}{}); err != nil {
		return txLostError{err}
	}
	return nil
}

// txLostError is the failure that took a whole write transaction with it:
// its cause stays what errors.Is and As find, so that a refusal or an
// outage is told apart as before.
type txLostError struct{ cause error }

func (e txLostError) Error() string {
	return "the write transaction was rolled back: " + e.cause.Error()
}

func (e txLostError) Unwrap() error { return e.cause }

// wake wakes the listeners of queues: once the Tx the executor runs in has
// committed, or at once. In a caller's transaction that is before it
// commits; a woken claim then waits for the write lock, and so for the
// commit.
func (e *executor) wake(queues []string) {
	if e.pending != nil {
		for _, q := range queues {
			if !slices.Contains(*e.pending, q) {
				*e.pending = append(*e.pending, q)
			}
		}
		return
	}
	notify(e.hubKey, queues)
}

// JobFinishMany bets that every result passes its fence, which is the
// common case, and checks the bet against the number of rows the
// statements changed: none of them needs RETURNING then (SQLite buffers
// returned rows in a temporary table, measured as a tenth of the cost of a
// finish). When the bet is lost (a result was stale, or its job refused),
// it rolls back to a savepoint. On the plain path (some flow refused) it
// then applies nothing, and the engine sends the batch to its side path;
// a batch that names a job twice goes there whole, since two results for
// one job could both pass the fence and the count would not tell.
//
// On the side path (nothing refused) a won bet reads the applied jobs
// back (JobFinishApplied); a lost one, or a batch that may forget a job
// (which would then not be found after), first reads which results pass
// (JobFinishFenced), then applies them and reads their states.
func (e *executor) JobFinishMany(ctx context.Context, p droverdriver.FinishParams) (droverdriver.FinishResult, error) {
	results := p.Results
	if len(results) == 0 {
		return droverdriver.FinishResult{All: true}, nil
	}
	unique := uniqueResults(results)
	if p.Refuse != 0 && len(unique) != len(results) {
		return droverdriver.FinishResult{}, nil
	}
	buf := getBuf()
	defer putBuf(buf)
	var kinds resultKinds
	*buf, kinds = appendResults((*buf)[:0], unique)
	batch := string(*buf)
	var res droverdriver.FinishResult
	// The finish may share its statements with other finishes of its
	// round (shared.go), which then set res.
	share := &finishShare{results: unique, refuse: p.Refuse, res: &res}
	err := e.writeShared(ctx, share, func(ctx context.Context, tx *sql.Tx) error {
		// finalized_at is read under the write lock, like attempted_at in
		// JobClaim.
		now := micros(time.Now())
		res = droverdriver.FinishResult{}
		if p.Refuse == 0 && kinds.forgets {
			var err error
			res, err = e.finishFenced(ctx, tx, unique, batch, now, kinds)
			return err
		}
		err := e.savepoint(ctx, tx, func() error {
			n, err := e.applyResults(ctx, tx, batch, now, kinds, p.Refuse)
			if err != nil {
				return err
			}
			if n != len(unique) {
				return errBetLost
			}
			if p.Refuse == 0 {
				res.Applied, err = e.finishApplied(ctx, tx, resultIDs(unique), nil)
				return err
			}
			res.All = true
			return nil
		})
		if betLost(err) && p.Refuse == 0 {
			res, err = e.finishFenced(ctx, tx, unique, batch, now, kinds)
		}
		return err
	})
	if betLost(err) {
		err = nil
	}
	if err != nil {
		return droverdriver.FinishResult{}, e.wrap("finish jobs", err)
	}
	return res, nil
}

// errBetLost rolls a finish back to its savepoint.
var errBetLost = errors.New("some results did not pass their fence")

// betLost reports that err is a lost bet that the savepoint rolled back,
// with the transaction still open.
func betLost(err error) bool {
	var lost txLostError
	return errors.Is(err, errBetLost) && !errors.As(err, &lost)
}

// finishFenced applies every result of batch that passes its fence, with no
// flow refused, and returns the jobs applied with their stored columns as
// they were before (a forgotten job is gone after) and their states after.
func (e *executor) finishFenced(ctx context.Context, tx *sql.Tx, results []droverdriver.Result, batch string, now int64, kinds resultKinds) (droverdriver.FinishResult, error) {
	before := map[int64]droverdriver.FinishedRow{}
	err := jobFinishFenced.query(ctx, e, tx, e.writer, func(r *sql.Rows) error {
		var row droverdriver.FinishedRow
		var key sql.NullString
		if err := r.Scan(&row.ID, &row.Flow, &row.Queue, &key); err != nil {
			return err
		}
		row.Key = key.String
		before[row.ID] = row
		return nil
	}, batch)
	if err != nil || len(before) == 0 {
		return droverdriver.FinishResult{}, err
	}
	n, err := e.applyResults(ctx, tx, batch, now, kinds, 0)
	if err != nil {
		return droverdriver.FinishResult{}, err
	}
	if n != len(before) {
		return droverdriver.FinishResult{}, fmt.Errorf("%d results pass their fence but %d were applied", len(before), n)
	}
	var ids []int64
	for i := range results {
		if _, ok := before[results[i].ID]; ok {
			ids = append(ids, results[i].ID)
		}
	}
	rows, err := e.finishApplied(ctx, tx, ids, before)
	return droverdriver.FinishResult{Applied: rows}, err
}

// finishApplied reads the jobs ids as JobFinishApplied returns them; the
// columns of a job in before, read before its result applied, stand in for
// those after, except its state.
func (e *executor) finishApplied(ctx context.Context, tx *sql.Tx, ids []int64, before map[int64]droverdriver.FinishedRow) ([]droverdriver.FinishedRow, error) {
	rows := make([]droverdriver.FinishedRow, 0, len(ids))
	err := jobFinishApplied.query(ctx, e, tx, e.writer, func(r *sql.Rows) error {
		var row droverdriver.FinishedRow
		var state string
		var key sql.NullString
		if err := r.Scan(&row.ID, &state, &row.Flow, &row.Queue, &key); err != nil {
			return err
		}
		if b, ok := before[row.ID]; ok {
			row = b
		} else {
			row.Key = key.String
		}
		row.State = drovertype.JobState(state)
		rows = append(rows, row)
		return nil
	}, string(appendIDs(nil, ids)))
	return rows, err
}

// resultIDs returns the IDs of results.
func resultIDs(results []droverdriver.Result) []int64 {
	ids := make([]int64, len(results))
	for i := range results {
		ids[i] = results[i].ID
	}
	return ids
}

// JobFinishKeyedMany runs JobFinishMany and KeyPromote in one transaction:
// the write lock that the transaction holds is the keys' lock.
func (e *executor) JobFinishKeyedMany(ctx context.Context, p droverdriver.FinishParams, keys droverdriver.KeyParams) (droverdriver.FinishResult, error) {
	var res droverdriver.FinishResult
	err := e.Tx(ctx, func(ctx context.Context, tx droverdriver.Executor) error {
		var err error
		if res, err = tx.JobFinishMany(ctx, p); err != nil {
			return err
		}
		_, err = tx.KeyPromote(ctx, keys)
		return err
	})
	return res, err
}

// KeyLock does nothing: every write transaction holds the database's write
// lock, which serialises keyed inserts with promotions.
func (e *executor) KeyLock(context.Context, droverdriver.KeyParams) error { return nil }

func (e *executor) KeyPromote(ctx context.Context, keys droverdriver.KeyParams) (int, error) {
	var promoted int
	var woken []string
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		promoted, woken, err = e.promote(ctx, tx, keys.Queues, keys.Keys, keys.Retried)
		return err
	})
	if err != nil {
		return 0, e.wrap("promote keyed jobs", err)
	}
	e.wake(woken)
	return promoted, nil
}

func (e *executor) UniqueRelease(ctx context.Context, ids []int64) error {
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := uniqueRelease.exec(ctx, e, tx, string(appendIDs(nil, ids)))
		return err
	})
	return e.wrap("release unique keys", err)
}
