package droverpg

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// The statements the engine composes to finish attempts
// (droverdriver.FinishExecutor). Which of them run, and on which jobs, is
// the engine's decision (internal/engine/finish.go).

func (e *executor) Tx(ctx context.Context, fn func(ctx context.Context, tx droverdriver.Executor) error) error {
	return e.inTx(ctx, func(tx pgx.Tx, wake wakeSet) error {
		return fn(ctx, &executor{db: tx, q: e.q, schema: e.schema, channel: e.channel, pending: wake})
	})
}

func (e *executor) JobFinishMany(ctx context.Context, p droverdriver.FinishParams) (droverdriver.FinishResult, error) {
	if len(p.Results) == 0 {
		return droverdriver.FinishResult{All: true}, nil
	}
	st, read := e.finishStatement(p.Results, p.Refuse)
	rows, err := st.query(ctx, e.db, e.q)
	if err != nil {
		return droverdriver.FinishResult{}, e.wrap("finish jobs", err)
	}
	res, err := read(rows, len(p.Results))
	return res, e.wrap("finish jobs", err)
}

// JobFinishKeyedMany runs JobFinish (or JobComplete), KeyLock and
// KeyPromote in one round trip and one implicit transaction (or in the
// caller's). The lock only has to come before the promotion counts the
// keys' active jobs: a keyed insert that counted a finished job as active
// holds the lock until it commits, so the promotion then sees the job it
// stored blocked. Taking it after the finish's row locks keeps one lock
// order (rows, then keys) with the engine's side path, which learns its
// keys only from the rows it finished.
func (e *executor) JobFinishKeyedMany(ctx context.Context, p droverdriver.FinishParams, keys droverdriver.KeyParams) (droverdriver.FinishResult, error) {
	b := &pgx.Batch{}
	st, read := e.finishStatement(p.Results, p.Refuse)
	st.queue(b, e.q)
	keyLock.queue(b, e.q, keyList{keys.Queues, keys.Keys})
	keyPromote.queue(b, e.q, keyPromoteParams{keyList{keys.Queues, keys.Keys}, keys.Retried})
	br := e.db.SendBatch(ctx, b)
	defer br.Close()
	rows, err := br.Query()
	if err != nil {
		return droverdriver.FinishResult{}, e.wrap("finish jobs", err)
	}
	res, err := read(rows, len(p.Results))
	if err != nil {
		return res, e.wrap("finish jobs", err)
	}
	if _, err := br.Exec(); err != nil {
		return res, e.wrap("lock keys", err)
	}
	var promoted int
	var woken []string
	if err := br.QueryRow().Scan(&promoted, &woken); err != nil {
		return res, e.wrap("promote keyed jobs", err)
	}
	if err := br.Close(); err != nil {
		return res, e.wrap("finish jobs", err)
	}
	return res, e.wrap("notify", e.announce(ctx, woken))
}

// readFinished reads the rows of JobFinish or JobComplete, one per job
// finished or put back to wait, and closes them. n is the number of
// results: when every one was applied, All says so. The text columns are
// read without copying, and a row's queue is copied only when it differs
// from the previous row's, so that a batch of one queue's plain jobs
// allocates nothing per row but the row itself.
func readFinished(rows pgx.Rows, n int) (droverdriver.FinishResult, error) {
	defer rows.Close()
	applied := make([]droverdriver.FinishedRow, 0, n)
	var state, queue, key pgtype.DriverBytes
	var flow int32
	lastQueue := ""
	for rows.Next() {
		var r droverdriver.FinishedRow
		if err := rows.Scan(&r.ID, &state, &flow, &queue, &key); err != nil {
			return droverdriver.FinishResult{}, err
		}
		r.State, r.Flow = storedState(state), int(flow)
		if string(queue) != lastQueue {
			lastQueue = string(queue)
		}
		r.Queue = lastQueue
		if key != nil {
			r.Key = string(key)
		}
		applied = append(applied, r)
	}
	if err := rows.Err(); err != nil {
		return droverdriver.FinishResult{}, err
	}
	return droverdriver.FinishResult{All: len(applied) == n, Applied: applied}, nil
}

// readCompleted reads JobComplete's rows, one per flow, queue and
// ordering key with the IDs of the jobs that completed under them, and
// closes them; it returns what readFinished does.
func readCompleted(rows pgx.Rows, n int) (droverdriver.FinishResult, error) {
	defer rows.Close()
	applied := make([]droverdriver.FinishedRow, 0, n)
	var flow int32
	var queue string
	var key *string
	var ids []int64
	for rows.Next() {
		if err := rows.Scan(&flow, &queue, &key, &ids); err != nil {
			return droverdriver.FinishResult{}, err
		}
		r := droverdriver.FinishedRow{State: drovertype.JobStateCompleted, Flow: int(flow), Queue: queue}
		if key != nil {
			r.Key = *key
		}
		for _, id := range ids {
			r.ID = id
			applied = append(applied, r)
		}
	}
	if err := rows.Err(); err != nil {
		return droverdriver.FinishResult{}, err
	}
	return droverdriver.FinishResult{All: len(applied) == n, Applied: applied}, nil
}

// jobStates are the states storedState interns.
var jobStates = drovertype.JobStates()

// storedState returns the JobState spelled b without allocating for the
// states a finish leaves.
func storedState(b []byte) drovertype.JobState {
	for _, s := range jobStates {
		if string(s) == string(b) {
			return s
		}
	}
	return drovertype.JobState(b)
}

// JobFlowSettle sends NoJIT, JobFlowLock and JobFlowSettle in one
// round trip.
func (e *executor) JobFlowSettle(ctx context.Context, p droverdriver.SettleParams) (droverdriver.KeyParams, error) {
	var keys droverdriver.KeyParams
	b := &pgx.Batch{}
	noJIT.queue(b, e.q, struct{}{})
	jobFlowLock.queue(b, e.q, p.IDs)
	jobFlowSettle.queue(b, e.q, p.IDs)
	br := e.db.SendBatch(ctx, b)
	defer br.Close()
	_, err := br.Exec()
	if err == nil {
		_, err = br.Exec()
	}
	var woken []string
	if err == nil {
		err = br.QueryRow().Scan(&woken, &keys.Queues, &keys.Keys)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return keys, e.wrap("settle", err)
	}
	return keys, e.wrap("notify", e.announce(ctx, woken))
}

func (e *executor) KeyLock(ctx context.Context, keys droverdriver.KeyParams) error {
	_, err := keyLock.exec(ctx, e.db, e.q, keyList{keys.Queues, keys.Keys})
	return e.wrap("lock keys", err)
}

func (e *executor) KeyPromote(ctx context.Context, keys droverdriver.KeyParams) (int, error) {
	var promoted int
	var woken []string
	err := keyPromote.queryRow(ctx, e.db, e.q, keyPromoteParams{keyList{keys.Queues, keys.Keys}, keys.Retried}).Scan(&promoted, &woken)
	if err != nil {
		return 0, e.wrap("promote keyed jobs", err)
	}
	return promoted, e.wrap("notify", e.announce(ctx, woken))
}

// UniqueRelease comes after every other lock its transaction takes; see
// UniqueRelease in queries.sql.
func (e *executor) UniqueRelease(ctx context.Context, ids []int64) error {
	if _, err := uniqueRelease.exec(ctx, e.db, e.q, ids); err != nil {
		return fmt.Errorf("release unique keys: %w", err)
	}
	return nil
}
