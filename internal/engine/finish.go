package engine

import (
	"context"
	"fmt"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// Finish applies the results of attempts and does what the end of each
// job asks for, and returns the IDs of the results it accepted (those
// whose fence held). The decision follows the stored flow of each job,
// and a batch costs one round trip whenever it can:
//
//  1. A batch in which no claimed row has a FlowEnd bit takes the plain
//     statement (JobFinishMany refusing FlowEnd): one statement per batch,
//     the fast path. Its fence turns away the jobs whose stored flow says
//     more must happen (a dependant added while the job ran; a result from
//     a remote worker, which does not echo the flow bits), and stale ones.
//  2. A batch whose only FlowEnd bit is FlowKeyed, with the keys given by
//     the claimed rows (Result.Key), takes JobFinishKeyedMany: finish,
//     KeyLock and KeyPromote in one round trip.
//  3. Any other batch, and the results the first two turned away, go to
//     the side path (finishSide): one transaction that finishes them with
//     no flow refused and then, from the rows the store returns, settles
//     workflows and batches, promotes keys and frees unique keys. Stale
//     results match nothing there and are not accepted.
//
// A batch is not split by its results' flow: its plain results ride along
// on the path its flagged ones need, which keeps it one transaction.
func Finish(ctx context.Context, ex droverdriver.Executor, results []droverdriver.Result) ([]int64, error) {
	if len(results) == 0 {
		return nil, nil
	}
	var accepted []int64
	var rest []droverdriver.Result
	switch flags := flagsOf(results); {
	case flags == 0:
		res, err := ex.JobFinishMany(ctx, droverdriver.FinishParams{Results: results, Refuse: droverdriver.FlowEnd})
		if err != nil {
			return nil, fmt.Errorf("finish jobs: %w", err)
		}
		accepted, rest = sortOut(results, res)
	case flags == droverdriver.FlowKeyed:
		keys, ok := knownKeys(results)
		if !ok {
			rest = results
			break
		}
		res, err := ex.JobFinishKeyedMany(ctx, droverdriver.FinishParams{Results: results, Refuse: droverdriver.FlowEndTx}, keys)
		if err != nil {
			return nil, fmt.Errorf("finish jobs: %w", err)
		}
		accepted, rest = sortOut(results, res)
		if err := promoteStray(ctx, ex, res.Applied, keys); err != nil {
			return nil, err
		}
	default:
		rest = results
	}
	if len(rest) == 0 {
		return accepted, nil
	}
	more, err := finishSide(ctx, ex, rest)
	if err != nil {
		return nil, err
	}
	return append(accepted, more...), nil
}

// flagsOf returns the FlowEnd bits of the results' claimed rows, together.
func flagsOf(results []droverdriver.Result) int {
	flags := 0
	for i := range results {
		flags |= results[i].Flow & droverdriver.FlowEnd
	}
	return flags
}

// sortOut returns the IDs of the results res applied, and the other
// results.
func sortOut(results []droverdriver.Result, res droverdriver.FinishResult) (accepted []int64, rest []droverdriver.Result) {
	accepted = make([]int64, 0, len(results))
	if res.All {
		for i := range results {
			accepted = append(accepted, results[i].ID)
		}
		return accepted, nil
	}
	applied := make(map[int64]bool, len(res.Applied))
	for i := range res.Applied {
		applied[res.Applied[i].ID] = true
		accepted = append(accepted, res.Applied[i].ID)
	}
	for _, r := range results {
		if !applied[r.ID] {
			rest = append(rest, r)
		}
	}
	return accepted, rest
}

// knownKeys returns the keys of the keyed results, with the jobs a failed
// attempt retries; ok is false when a result's claimed row is keyed
// (FlowKeyed) but names no key.
func knownKeys(results []droverdriver.Result) (keys droverdriver.KeyParams, ok bool) {
	var ks keySet
	for i := range results {
		r := &results[i]
		if r.Flow&droverdriver.FlowKeyed == 0 {
			continue
		}
		if r.Key == "" {
			return keys, false
		}
		ks.add(r.Queue, r.Key)
		if r.Outcome == droverdriver.OutcomeRetry {
			ks.p.Retried = append(ks.p.Retried, r.ID)
		}
	}
	return ks.p, true
}

// promoteStray promotes, in a transaction of its own, the keys of applied
// rows that JobFinishKeyedMany did not lock: none, unless a row's stored
// key differs from its claimed one. KeyPromote may run at any time under
// KeyLock (the leader's sweep does), so promoting after the finish
// committed is safe.
func promoteStray(ctx context.Context, ex droverdriver.Executor, applied []droverdriver.FinishedRow, locked droverdriver.KeyParams) error {
	if len(applied) == 0 {
		return nil
	}
	var known keySet
	for i := range locked.Keys {
		known.add(locked.Queues[i], locked.Keys[i])
	}
	var stray keySet
	for i := range applied {
		if r := &applied[i]; r.Key != "" && !known.has(r.Queue, r.Key) {
			stray.add(r.Queue, r.Key)
		}
	}
	if len(stray.p.Keys) == 0 {
		return nil
	}
	return ex.Tx(ctx, func(ctx context.Context, tx droverdriver.Executor) error {
		return promote(ctx, tx, stray.p)
	})
}

// finishSide finishes results in one transaction with no flow refused and
// then, from the rows the store returns, does what their ends ask for
// (Ended). Only the results it accepts are returned.
func finishSide(ctx context.Context, ex droverdriver.Executor, results []droverdriver.Result) ([]int64, error) {
	var accepted []int64
	err := ex.Tx(ctx, func(ctx context.Context, tx droverdriver.Executor) error {
		res, err := tx.JobFinishMany(ctx, droverdriver.FinishParams{Results: results})
		if err != nil {
			return err
		}
		accepted = accepted[:0]
		for i := range res.Applied {
			accepted = append(accepted, res.Applied[i].ID)
		}
		return Ended(ctx, tx, res.Applied, retries(results))
	})
	if err != nil {
		return nil, fmt.Errorf("finish jobs: %w", err)
	}
	return accepted, nil
}

// retries returns the IDs of results that are failed attempts.
func retries(results []droverdriver.Result) map[int64]bool {
	var ids map[int64]bool
	for i := range results {
		if results[i].Outcome == droverdriver.OutcomeRetry {
			if ids == nil {
				ids = map[int64]bool{}
			}
			ids[results[i].ID] = true
		}
	}
	return ids
}

// Ended does, in tx, what the end of rows asks for, from their stored
// columns, in the lock order of droverdriver.FinishExecutor: it settles
// the workflows and batches of those that ended (JobFlowSettle), promotes
// the keys of the keyed ones and of the dependants the settle released or
// cancelled (KeyLock, KeyPromote), then frees the unique keys of those that
// ended (UniqueRelease). retried holds the IDs whose attempt failed: a
// keyed one waiting again spends a token of its key's rate. tx must run in
// the transaction that moved the rows.
func Ended(ctx context.Context, tx droverdriver.Executor, rows []droverdriver.FinishedRow, retried map[int64]bool) error {
	var settle droverdriver.SettleParams
	var unique []int64
	var keys keySet
	for i := range rows {
		r := &rows[i]
		final := r.State.Finished()
		if final && r.Flow&droverdriver.FlowSettle != 0 {
			settle.IDs = append(settle.IDs, r.ID)
			settle.Failed = settle.Failed || r.State != drovertype.JobStateCompleted
		}
		if r.Key != "" {
			// Ended, retried or released: each changes the key's room or
			// its rate's tokens.
			keys.add(r.Queue, r.Key)
			if r.State == drovertype.JobStateAvailable && retried[r.ID] {
				keys.p.Retried = append(keys.p.Retried, r.ID)
			}
		}
		if final && r.Flow&droverdriver.FlowUnique != 0 {
			unique = append(unique, r.ID)
		}
	}
	if len(settle.IDs) > 0 {
		more, err := tx.JobFlowSettle(ctx, settle)
		if err != nil {
			return fmt.Errorf("settle: %w", err)
		}
		for i := range more.Keys {
			keys.add(more.Queues[i], more.Keys[i])
		}
	}
	if len(keys.p.Keys) > 0 {
		if err := promote(ctx, tx, keys.p); err != nil {
			return err
		}
	}
	if len(unique) > 0 {
		if err := tx.UniqueRelease(ctx, unique); err != nil {
			return fmt.Errorf("release unique keys: %w", err)
		}
	}
	return nil
}

// promote runs KeyLock then KeyPromote for keys in tx.
func promote(ctx context.Context, tx droverdriver.Executor, keys droverdriver.KeyParams) error {
	if err := tx.KeyLock(ctx, keys); err != nil {
		return fmt.Errorf("lock keys: %w", err)
	}
	if _, err := tx.KeyPromote(ctx, keys); err != nil {
		return fmt.Errorf("promote keyed jobs: %w", err)
	}
	return nil
}

// keySet gathers distinct (queue, key) pairs as KeyParams.
type keySet struct {
	p    droverdriver.KeyParams
	seen map[[2]string]bool
}

func (s *keySet) add(queue, key string) {
	if s.seen == nil {
		s.seen = map[[2]string]bool{}
	}
	if k := [2]string{queue, key}; !s.seen[k] {
		s.seen[k] = true
		s.p.Queues, s.p.Keys = append(s.p.Queues, queue), append(s.p.Keys, key)
	}
}

func (s *keySet) has(queue, key string) bool { return s.seen[[2]string{queue, key}] }
