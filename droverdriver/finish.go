package droverdriver

import (
	"context"

	"github.com/droverhq/drover/drovertype"
)

// FinishExecutor holds the statements the engine composes to finish
// attempts (internal/engine, finish.go): the finish itself, and what the
// end of a job asks for — settling its workflow or batch, promoting the
// next jobs of its key, freeing its unique key. Each method runs one
// statement, or the fixed sequence its doc names; what to run next is
// decided by the engine from the rows these methods return.
//
// Lock order: every transaction that takes more than one of these locks
// takes job rows first (the finish, the settle), then keys (KeyLock), then
// unique keys (UniqueRelease), so that two never wait on each other in a
// cycle.
type FinishExecutor interface {
	// Tx runs fn in a transaction, or in a savepoint when the executor
	// already runs in one (the caller's, or an outer Tx). Queues that
	// statements in fn make jobs available in are woken once the outermost
	// transaction commits. fn's error rolls back and is returned.
	Tx(ctx context.Context, fn func(ctx context.Context, tx Executor) error) error

	// JobFinishMany applies results in one statement (SQLite: one
	// sequence in a savepoint; see FinishResult), each fenced by (ID,
	// Attempt, LeaseToken) as Result says, and turns away every job whose
	// stored flow has a bit of Refuse. A failed attempt (OutcomeRetry) of
	// a job with no attempt left by its stored max_attempts is discarded:
	// the store decides, whatever the caller believed.
	JobFinishMany(ctx context.Context, p FinishParams) (FinishResult, error)

	// JobFinishKeyedMany runs JobFinishMany, KeyLock and KeyPromote for
	// keys, as one fixed sequence in one transaction: one round trip on
	// PostgreSQL. The engine sends it batches of keyed jobs whose keys it
	// knows from their claimed rows; the promotion is idempotent under the
	// key's lock, so running it when some results were turned away costs
	// nothing but the statement.
	JobFinishKeyedMany(ctx context.Context, p FinishParams, keys KeyParams) (FinishResult, error)

	// JobFlowSettle settles jobs that ended in this transaction (moved to
	// finished jobs; other IDs are ignored): it cancels the pending
	// dependants of jobs that did not complete, recursively, releases every
	// other dependant whose last parent ended, counts batch members and
	// releases the callbacks of batches now complete. Jobs it makes
	// available wake their queues. It returns the keys whose places it
	// freed (cancelled keyed dependants) or filled (keyed dependants and
	// callbacks released as blocked), for the caller to promote.
	JobFlowSettle(ctx context.Context, p SettleParams) (KeyParams, error)

	// KeyLock serialises, until the transaction ends, the transactions that
	// count the active jobs of keys: keyed inserts and promotions. A store
	// whose writers are serialised already (SQLite) does nothing.
	KeyLock(ctx context.Context, keys KeyParams) error

	// KeyPromote makes the oldest blocked jobs of keys available while
	// each key has room (and, for a key with a rate, tokens), stopping at a
	// pending job of the key, and spends a token of each rated key per job
	// it promotes and per job of keys.Retried still available. It runs
	// under KeyLock, wakes the queues that got jobs and returns how many
	// jobs it promoted.
	KeyPromote(ctx context.Context, keys KeyParams) (int, error)

	// UniqueRelease frees the unique keys of the jobs in ids that ended
	// (are finished) in a final state their key does not keep. IDs of jobs
	// that did not end, or hold no key, match nothing.
	UniqueRelease(ctx context.Context, ids []int64) error
}

// FinishParams is one JobFinishMany call.
type FinishParams struct {
	Results []Result
	// Refuse are the stored flow bits that turn a job away unfinished:
	// FlowEnd on the plain path, FlowEndTx for a batch of keyed jobs, 0 on
	// the engine's side path, which does what every job's end asks for.
	Refuse int
}

// FinishedRow is a job one finish applied a result to, with its columns as
// stored after the statement.
type FinishedRow struct {
	ID int64
	// State is the job's state after the finish: final, or available for a
	// job retried or released.
	State drovertype.JobState
	// Flow is the job's stored flow & FlowEnd.
	Flow int
	// Queue and Key are the job's queue and ordering key ("" for none).
	Queue, Key string
}

// FinishResult reports which results a finish applied.
type FinishResult struct {
	// All says every result was applied; Applied may then be nil.
	All bool
	// Applied lists the jobs whose results were applied, when not All. A
	// store that cannot tell which results would pass a fence that turned
	// some away (SQLite's plain path, which counts the rows it changed
	// rather than return them) applies none and leaves it empty; the
	// engine then sends every result to its side path.
	Applied []FinishedRow
}

// KeyParams names (queue, ordering key) pairs, as parallel slices.
type KeyParams struct {
	Queues, Keys []string
	// Retried are keyed jobs that the transaction returned to available
	// after a failed attempt: for a key with a rate (InsertParams.KeyRate),
	// KeyPromote counts their next start against its tokens.
	Retried []int64
}

// SettleParams is one JobFlowSettle call.
type SettleParams struct {
	// IDs are the jobs to settle.
	IDs []int64
	// Failed says some of them ended without completing; false lets a
	// store skip looking for dependants to cancel.
	Failed bool
}
