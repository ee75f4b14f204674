// Package droverdriver is the contract between Drover and a store: the
// Driver and Executor interfaces, the parameter types they take (the values
// they return are drovertype's), and the enums that Go and SQL share. A
// driver's type offers the Driver methods and reaches its statements
// through Executor; how the bundled drivers load their SQL and shape their
// rows is internal to this module (internal/sqlfile, internal/driverrows,
// internal/jsonmatch), so that the contract carries only what a caller or a
// third driver needs. droverpg (PostgreSQL) and droversqlite (SQLite)
// implement it; a third store implements the same interfaces and passes the
// same suite (droverdriver/droverdrivertest).
//
// A driver speaks its dialect and nothing else: which statements to run,
// and what to do with the columns they return, is decided by Drover's
// engine, so every store follows one algorithm. Users name this package to
// wrap or mock a store, or to write one; applications normally only pass a
// driver to drover.NewClient.
package droverdriver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/droverhq/drover/drovertype"
)

// ErrNotFound is returned by single-job calls when no job has the given ID.
var ErrNotFound = errors.New("job not found")

// ErrSchemaMissing is returned when the store has not been migrated (or is
// behind the binary's migrations). Its message tells the user what to run.
var ErrSchemaMissing = errors.New("schema not migrated")

// ErrSchemaNewer is returned when the store's schema is at a version newer
// than any migration this binary knows: a newer Drover migrated it, and
// this binary's statements may no longer match what is stored, so it
// refuses to work rather than guess. Its message says to upgrade.
var ErrSchemaNewer = errors.New("schema newer than this binary")

// Driver is a store that Drover can run on. It is safe for concurrent use.
type Driver interface {
	// Executor returns the executor whose statements run on the driver's
	// own connections, outside any caller's transaction (TxDriver's
	// UnwrapExecutor runs them inside one). The optional executor interfaces
	// (TopicExecutor, PeriodicExecutor, RefusalReporter, …) are found on
	// it by type assertion. The driver's type offers only this contract,
	// so its exported methods are the ones a user configures and closes,
	// not the statements the engine runs.
	Executor() Executor

	// Name is the store's short name ("postgres", "sqlite"), used in logs
	// and bench reports.
	Name() string

	// Schema is the validated schema (PostgreSQL) or table prefix (SQLite)
	// that every query of this driver uses.
	Schema() string

	// Migrations returns the driver's numbered migrations, lowest first.
	Migrations() []drovertype.Migration

	// MigrateTx runs fn inside one transaction holding the store's
	// migration lock, so that two processes migrating at once apply each
	// migration exactly once.
	MigrateTx(ctx context.Context, fn func(ctx context.Context, m Migrator) error) error

	// SchemaVersion reports the highest applied migration, or 0 when the
	// schema (or its version table) does not exist yet.
	SchemaVersion(ctx context.Context) (int, error)

	// NewListener returns a listener for insert notifications, or nil when
	// the store cannot push them (the client then relies on polling).
	NewListener() Listener

	// PollInterval is the fallback fetch interval that suits the store when
	// no notification arrives: long where notifications are reliable,
	// short where they cannot cross processes.
	PollInterval() time.Duration

	// Close releases what the driver opened itself. A pool or database
	// handle passed in by the caller stays open.
	Close() error
}

// TxDriver is a Driver that can also run inside a transaction owned by the
// caller, whose type depends on the store (pgx.Tx, *sql.Tx).
type TxDriver[TTx any] interface {
	Driver

	// UnwrapExecutor returns an Executor whose statements run in tx.
	UnwrapExecutor(tx TTx) Executor
}

// Migrator applies migrations inside MigrateTx.
type Migrator interface {
	// Version is the highest applied migration in this transaction.
	Version(ctx context.Context) (int, error)
	// Apply runs m and records it as applied.
	Apply(ctx context.Context, m drovertype.Migration) error
}

// Executor holds every query the engine runs. Each method is one statement
// (or one round trip) whatever the number of jobs it covers: the hot path
// stays batched because the interface offers nothing per job.
type Executor interface {
	// JobInsertMany inserts jobs and returns their IDs in input order. Jobs
	// that are claimable now wake listeners of their queues (one
	// notification per queue, delivered when the enclosing transaction
	// commits). A job whose UniqueKey another job already holds (or an
	// earlier job of the same call) is skipped and reported with ID 0.
	JobInsertMany(ctx context.Context, jobs []InsertParams) ([]int64, error)

	// JobInsert inserts one job as JobInsertMany does and returns it as
	// stored once the insert's statements have run, read in the same round
	// trip and transaction: its state (blocked behind its key, scheduled),
	// created_at and run_at are the store's. A unique job skipped as a
	// duplicate returns a nil row and no error. Bulk inserts keep
	// JobInsertMany, which reads nothing back.
	JobInsert(ctx context.Context, job InsertParams) (*drovertype.JobRow, error)

	// JobClaim moves up to Max claimable jobs of one queue to running under
	// a lease held by Owner, highest priority (lowest number) first, then
	// oldest run_at, then lowest ID, skipping rows other claimers hold. It
	// returns them in that order (the claim order of ClaimPosition), each with the LeaseToken
	// the claim drew (one NewLeaseToken per call, stored on every row).
	JobClaim(ctx context.Context, p ClaimParams) ([]*drovertype.JobRow, error)

	// JobHeartbeat extends the leases of running attempts, fenced like
	// JobFinishMany by (ID, Attempt, LeaseToken), and reports which of them
	// have been asked to cancel.
	JobHeartbeat(ctx context.Context, p HeartbeatParams) (HeartbeatResult, error)

	// JobRescue returns running jobs whose lease expired before Now to
	// available (or to discarded, or cancelled when asked to, when out of
	// attempts), recording a lease error on them, and returns the jobs it
	// moved with their stored columns, for the engine to do what their
	// ends ask for in the same transaction (engine.Rescue). A keyed job
	// returned to available spends a token of its key's rate, like a
	// retry.
	JobRescue(ctx context.Context, p RescueParams) ([]FinishedRow, error)

	// JobPrune deletes finished jobs that are past retention, at most
	// Limit per call so that one call never holds locks for long.
	JobPrune(ctx context.Context, p PruneParams) (int, error)

	// JobGet returns one job, running or finished.
	JobGet(ctx context.Context, id int64) (*drovertype.JobRow, error)

	// JobList returns up to p.Limit jobs matching p's filter in p's
	// window, in ID order (descending with p.Desc), keyset paginated.
	JobList(ctx context.Context, p ListParams) ([]*drovertype.JobRow, error)

	// JobCancel cancels the jobs of p.IDs that have not finished. Waiting
	// jobs (available, pending on other jobs, blocked behind their key)
	// are finished as cancelled at once and returned as ended, with their
	// stored columns, for the engine to do what their ends ask for in the
	// same transaction (engine.Cancel); running ones not asked yet are
	// flagged, unless p.LeaveRunning, so that their workers are told at
	// the next heartbeat and their results become cancelled, and returned
	// as flagged. Finished jobs and unknown IDs are left alone. One
	// statement (or one round trip) whatever the number of IDs: bulk
	// actions cancel a page of jobs at once (engine.Bulk).
	JobCancel(ctx context.Context, p CancelParams) (ended []FinishedRow, flagged []int64, err error)

	// JobDiscard finishes the waiting jobs of ids (available, scheduled or
	// retryable) as discarded at once, for work that should never run, and
	// returns them like JobCancel (engine.Discard). Running and finished
	// jobs are left alone. A finished row keeps only the unique and keyed
	// bits of its flow: a discarded job is not settled.
	JobDiscard(ctx context.Context, ids []int64, now time.Time) ([]FinishedRow, error)

	// JobRetry makes the jobs of ids claimable now, as the first statement
	// of the engine's retry (engine.Retry): a finished job returns to the
	// hot table with one more attempt allowed if it had none left, a
	// scheduled or retryable one has its run_at moved to now. Available
	// jobs (claimable already: they keep their place in the claim order)
	// and running ones are left alone. A finished keyed job returns to its key as blocked, for the
	// engine to promote; a finished batch member or job with dependants
	// stays finished and is reported with its flow (RetriedRow.Refused).
	// Jobs it makes available wake their queues. It returns a row for
	// each job it retried or refused, none for the jobs it left alone or
	// does not know: every row but a refused one is a change.
	JobRetry(ctx context.Context, ids []int64, now time.Time) ([]RetriedRow, error)

	// UniqueRetake makes the jobs of ids, which JobRetry revived, take
	// their unique keys again where they gave them up. A job whose key
	// another job holds now, or an earlier job of ids takes in the same
	// call, takes nothing and is returned with that job's ID: the caller
	// then rolls the retry back, and may retry the others again. When the
	// store learns of a holder only from its unique index (a holder that
	// had not committed yet) it returns an error wrapping
	// ErrUniqueConflict instead. Jobs that hold their keys, or have none,
	// are not returned.
	UniqueRetake(ctx context.Context, ids []int64) ([]UniqueConflict, error)

	// JobDelete deletes the finished jobs of ids, with their unique keys
	// (as the pruner does), and returns the IDs it deleted. Jobs that have
	// not finished are left alone: engine.Delete cancels the waiting ones
	// first in the same transaction, so that what their end asks for is
	// done, and refuses running ones.
	JobDelete(ctx context.Context, ids []int64) ([]int64, error)

	// JobCountByState counts jobs per state, for inspection and benches.
	JobCountByState(ctx context.Context, queue string) (map[drovertype.JobState]int64, error)

	// QueueStats summarises the hot table per queue: jobs waiting (by
	// kind of wait) and running, and the run_at of the oldest claimable
	// job. It reads only the hot table, so its cost follows the work that
	// waits, never the history kept in finished jobs; callers still sample
	// it on an interval rather than per request.
	QueueStats(ctx context.Context, now time.Time) ([]drovertype.QueueStats, error)

	// FinishedStats summarises jobs finished in (since, until] per queue: how
	// many completed, were cancelled or discarded, and the percentiles of
	// the pickup latency (run_at to the start of the last attempt) of the
	// completed ones. It reads only the recent end of finished jobs
	// through the index on finalized_at, for charts sampled on an
	// interval.
	FinishedStats(ctx context.Context, since, until time.Time) ([]drovertype.FinishedStats, error)

	// LeaseOwners lists every process (lease owner) that holds running
	// jobs, with how many and until when its leases run, from one pass
	// over the hot table: the workers that are alive and working, Go
	// clients and HTTP workers alike.
	LeaseOwners(ctx context.Context) ([]drovertype.LeaseOwner, error)

	// KeyBlocked returns up to limit keys that have blocked jobs, for the
	// engine's promotion sweep (engine.Promote), which promotes them under
	// KeyLock. The engine's finish promotes behind the keyed jobs it ends;
	// the sweep covers what frees a key's place without a result, and
	// keys whose rate held their jobs back.
	KeyBlocked(ctx context.Context, limit int) (KeyParams, error)

	// KeyRatePrune deletes the rate buckets of up to limit keys that have
	// no unfinished job and a full bucket, which an insert with KeyRate
	// would create anew, so that the stored rates follow the keys in use.
	// It checks them under the keys' lock (PostgreSQL: KeyRateIdle, then
	// KeyLock and KeyRatePrune in one transaction, skipped when none is
	// idle).
	KeyRatePrune(ctx context.Context, limit int) error

	// PeriodicTicks returns the last tick recorded for each of names that
	// has one (PeriodicTicksRecord), for a new leader to catch up ticks
	// missed while no leader ran.
	PeriodicTicks(ctx context.Context, names []string) (map[string]time.Time, error)

	// PeriodicTicksRecord records ticks[i] as the last tick inserted for
	// the periodic job names[i], unless a later one is stored. Names are
	// distinct.
	PeriodicTicksRecord(ctx context.Context, names []string, ticks []time.Time) error

	// QueueSettingsGet returns the settings stored for queue, or nil when
	// none are: the queue then runs unpaused and unlimited.
	QueueSettingsGet(ctx context.Context, queue string) (*drovertype.QueueSettings, error)

	// QueueSettingsList returns every queue's stored settings, by name.
	QueueSettingsList(ctx context.Context) ([]*drovertype.QueueSettings, error)

	// QueueKnown reports whether queue has ever been in use: it has
	// stored settings, jobs in the hot table or among the finished jobs
	// still kept, or a worker of the registry that works it. Each is an
	// index lookup, so a typo costs no scan. The HTTP API refuses to
	// change the settings of a queue it does not know (a typo).
	QueueKnown(ctx context.Context, queue string) (bool, error)

	// QueueSettingsSet writes the settings p sets, keeping the others
	// (a queue without stored settings starts from the zero value), and
	// returns the row as stored. Once the write commits, every listener
	// of the store hears SettingsNotice(p.Queue), so that processes drop
	// what they cached of the queue's settings.
	QueueSettingsSet(ctx context.Context, p QueueSettingsSetParams) (*drovertype.QueueSettings, error)

	// LeaderElect takes or keeps the named leadership for ID until TTL
	// from now and reports whether ID holds it.
	LeaderElect(ctx context.Context, p LeaderParams) (bool, error)

	// LeaderResign gives up the named leadership if ID holds it.
	LeaderResign(ctx context.Context, name, id string) error

	// Workflows and batches (flow.go). JobRescue and JobCancel settle the
	// jobs they end in the same transaction: dependants are released or
	// cancelled, batch counters counted and a batch's callback released
	// when its last member ends.
	FlowExecutor

	// Finishing attempts and what the end of a job asks for (finish.go):
	// the statements the engine composes.
	FinishExecutor

	// Job search (search.go): where the next window of IDs starts, and
	// the counts behind estimates.
	SearchExecutor
	// Routing and the worker registry (routing.go).
	RoutingExecutor
	// The stored history of queue figures and subscription lag
	// (history.go).
	HistoryExecutor
	// The bulk actions of drover serve (bulk.go).
	BulkTaskExecutor
}

// Listener delivers insert notifications from other connections and
// processes.
type Listener interface {
	// Listen blocks until ctx ends or the connection fails, calling
	// onInsert with the queue name of notifications. It calls onConnect
	// each time it is ready to receive, so the caller can fetch once to
	// cover the gap while it was not listening.
	//
	// onInsert reports how many jobs of the queue the listener's client
	// has room to start now. A store whose listeners in one process share
	// a connection may hand a notification about n jobs to its listeners in
	// turn until they had room for n, instead of to all of them.
	Listen(ctx context.Context, onConnect func(), onInsert func(queue string) (room int)) error
}

// InsertParams is one job to insert. Args and Metadata are encoded JSON.
type InsertParams struct {
	Queue       string
	Kind        string
	Args        []byte
	Metadata    []byte
	Tags        []string // each without commas (the root package checks them)
	Priority    int
	MaxAttempts int
	RunAt       time.Time // zero: now, by the store's clock
	Timeout     time.Duration

	// Key, when set, groups the job with others of its queue: at most
	// KeyLimit of them are available or running at once, and the rest wait
	// as blocked to start in insert order. KeyLimit is at least 1 then.
	Key      string
	KeyLimit int
	// KeyRate, when set (with a key), makes the key's jobs start at most
	// KeyRate times per KeyRatePeriod: the insert stores the rate for the
	// key, and every job of a key with a rate is made available by
	// KeyPromote, which spends the key's tokens.
	KeyRate       int
	KeyRatePeriod time.Duration
	// UniqueKey, when set, may be held by one job of the kind only (of
	// the kind and queue with UniqueByQueue): an insert of a second is
	// skipped (its ID is reported as 0). Every unfinished job
	// holds its key; UniqueFinal says in which final states it keeps it.
	UniqueKey string
	// UniqueFinal holds the FinalBit of each final state in which the job
	// keeps its unique key; 0 frees the key when the job finishes.
	UniqueFinal int
	// UniqueByQueue scopes UniqueKey to the job's queue as well as its
	// kind. A unique key is always held per kind: a caller allowed to
	// enqueue one kind must not be able to squat the keys of another.
	UniqueByQueue bool
	// Routing, when set, says which workers may run the job (routing.go).
	// Routed jobs take the keyed insert path, which stores their route
	// key and routing, and wake every listener of their queue: the next
	// listener in turn may be a worker that cannot take them.
	Routing *drovertype.Routing
}

// CancelParams says which jobs JobCancel cancels.
type CancelParams struct {
	IDs []int64
	Now time.Time
	// LeaveRunning leaves running jobs as they are instead of asking them
	// to stop: a bulk delete refuses running jobs.
	LeaveRunning bool
}

// JobsNamed names ids in an error message: "job 7" for one, "12 jobs
// (7, 8, …)" for more, so that a page of a bulk action does not print a
// thousand IDs.
func JobsNamed(ids []int64) string {
	if len(ids) == 1 {
		return fmt.Sprintf("job %d", ids[0])
	}
	if len(ids) <= 3 {
		return fmt.Sprintf("%d jobs %v", len(ids), ids)
	}
	return fmt.Sprintf("%d jobs (%d, %d, …)", len(ids), ids[0], ids[1])
}

// UniqueConflict is a revived job that cannot take its unique key again
// (UniqueRetake), and the job that holds it.
type UniqueConflict struct {
	ID, Holder int64
}

// RetriedRow is a job JobRetry matched, as the statement left it.
type RetriedRow struct {
	ID int64
	// Queue and Key are the job's queue and ordering key: a job revived
	// with a key waits blocked for its key to be promoted. A job
	// rescheduled in the hot table reports no key: it stays available.
	Queue, Key string
	// Refused is the stored flow of a finished job that must stay
	// finished (FlowSettle bits: a batch member, or a job with
	// dependants), 0 for a job retried.
	Refused int
}

// Due reports whether the job can run at now (it is not scheduled later),
// so that an insert wakes its queue.
func (p *InsertParams) Due(now time.Time) bool {
	return p.RunAt.IsZero() || !p.RunAt.After(now)
}

// ErrUniqueConflict is returned by JobRetry when the finished job gave up
// its unique key and another job holds that key now.
var ErrUniqueConflict = errors.New("unique key held by another job")

// Special reports whether the job needs the keyed insert path (a key, a
// unique key or routing). Plain jobs take the cheaper statement that never
// looks at other rows.
func (p *InsertParams) Special() bool { return p.Keyed() || p.Routing != nil }

// Keyed reports whether the job has a key or a unique key: routing alone
// stores two more columns and looks at no other row, which a driver may
// do without the keyed statements.
func (p *InsertParams) Keyed() bool { return p.Key != "" || p.UniqueKey != "" }

// ClaimParams selects jobs to claim.
type ClaimParams struct {
	Queue string
	Max   int
	Owner string
	Lease time.Duration
	// After, when set, claims only rows past this position of the claim
	// order. A producer passes the last row it claimed while full claims
	// are slow: when a long transaction elsewhere pins PostgreSQL's MVCC
	// horizon, the index entries of every job claimed since then stay in
	// the claim index (vacuum cannot remove them), and a claim from the
	// head walks all of them. Starting past them keeps claims cheap.
	After *ClaimPosition
	// Limited claims under the queue's stored settings (QueueSettings):
	// in one transaction, the claim locks the queue's settings row, takes
	// no more jobs than its limits leave room for (none while it is
	// paused), marks the rows it claims so that later limited claims
	// count them while they run, and spends a rate token per job. The
	// limits are read from the store under that lock, never from the
	// caller, so limited claims of every process and remote worker share
	// one limit. A queue whose locked row asks for strict order is
	// claimed from its head, in order, skipping nothing (JobClaimStrict).
	// Without Limited the claim is the plain statement alone.
	Limited bool
	// Variant names the statement the claim runs, chosen by the engine
	// (engine.ClaimVariant) from the other fields and the queue's cached
	// settings: a driver maps it to its statement and decides nothing
	// itself. The zero value is ClaimPlain. One choice stays with the
	// store: a limited claim whose settings row, read under its lock, says
	// strict order runs ClaimStrict whatever Variant names, as the row
	// decides the room too.
	Variant ClaimVariant
	// Kinds, when not nil, claims only jobs of these kinds: a client
	// passes the kinds it has workers for, so that jobs of other kinds
	// wait in the queue for a process that can run them instead of
	// spending attempts on one that cannot. Nil claims every kind (remote
	// workers that did not say); an empty list claims nothing.
	Kinds []string
	// ExceptKinds, when not empty, leaves jobs of these kinds in the
	// queue: the kinds paused there (QueueSettings.PausedKinds), which
	// the engine passes. The engine takes them out of Kinds when a
	// claimer names its kinds, so that a driver never sees both: it runs
	// the statement of Variant with the one it is given.
	ExceptKinds []string
	// Now, when not zero, is the time the claim takes for now: a job is
	// due when its run_at is not after it, and the attempt starts at it.
	// Zero reads the store's clock, as every claim of a client without a
	// Config.Clock does; a test clock (drovertest.Clock) passes its time,
	// so that scheduled jobs become due when the test advances it.
	Now time.Time
	// Worker, when set, is what the claimer says of itself (routing.go):
	// the claim takes plain jobs and the routed jobs it matches
	// (JobClaimRouted). Nil claims plain jobs only, with the plain
	// statement.
	Worker *Worker
	// Token, when not zero, is the lease token the claim stores on its
	// rows instead of one it draws: a claim made of several stores'
	// claims (droverfleet) hands out one token for all its rows, as one
	// store's claim does.
	Token drovertype.LeaseToken
}

// ClaimVariant names one of the claim statements (ClaimParams.Variant).
// Each takes the fields of ClaimParams it is named after as parameters
// and ignores the others.
type ClaimVariant uint8

const (
	// ClaimPlain claims plain jobs of every kind from the head of the
	// queue (JobClaim).
	ClaimPlain ClaimVariant = iota
	// ClaimAfter claims plain jobs past ClaimParams.After
	// (JobClaimAfter).
	ClaimAfter
	// ClaimKinds claims plain jobs of ClaimParams.Kinds (JobClaimKinds).
	ClaimKinds
	// ClaimKindsAfter claims plain jobs of ClaimParams.Kinds past
	// ClaimParams.After (JobClaimKindsAfter).
	ClaimKindsAfter
	// ClaimExcept claims plain jobs of every kind but
	// ClaimParams.ExceptKinds (JobClaimExcept).
	ClaimExcept
	// ClaimExceptAfter claims plain jobs of every kind but
	// ClaimParams.ExceptKinds past ClaimParams.After
	// (JobClaimExceptAfter).
	ClaimExceptAfter
	// ClaimRouted claims plain jobs and the routed jobs
	// ClaimParams.Worker matches, taking Kinds, ExceptKinds and After as
	// parameters (JobClaimRouted).
	ClaimRouted
	// ClaimStrict claims the head of a queue in strict order, in order,
	// skipping nothing, under the settings row's lock (JobClaimStrict);
	// it takes every other field as parameters, and only a Limited claim
	// runs it.
	ClaimStrict
)

// ClaimPosition is a row's place in the claim order (priority, run_at,
// id).
type ClaimPosition struct {
	Priority int
	RunAt    time.Time
	ID       int64
}

// PositionOf returns r's place in the claim order.
func PositionOf(r *drovertype.JobRow) ClaimPosition {
	return ClaimPosition{Priority: r.Priority, RunAt: r.RunAt, ID: r.ID}
}

// Compare returns -1, 0 or +1 as a sorts before, with or after b in the
// claim order.
func (a ClaimPosition) Compare(b ClaimPosition) int {
	if c := cmp.Compare(a.Priority, b.Priority); c != 0 {
		return c
	}
	if c := a.RunAt.Compare(b.RunAt); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// Before reports whether a sorts before b in the claim order.
func (a ClaimPosition) Before(b ClaimPosition) bool { return a.Compare(b) < 0 }

// QueueSettingsSetParams says which of a queue's settings to write; nil
// fields keep their stored values.
type QueueSettingsSetParams struct {
	Queue  string
	Paused *bool
	// Limit replaces all of the queue's limits at once.
	Limit *drovertype.QueueLimit
	// PauseKinds are added to the queue's paused kinds, ResumeKinds taken
	// out of them (a kind in both is resumed); the others stay as stored,
	// so that two operators pausing two kinds at once both get theirs.
	PauseKinds, ResumeKinds []string
	// Strict replaces the queue's strict order (0: off; N: at most N
	// running, started in order).
	Strict *int
}

// settingsNoticePrefix starts the payload of a settings change on the
// store's notification channel. Queue names start with a letter or digit,
// so no insert's wake-up can look like one.
const settingsNoticePrefix = "!settings:"

// SettingsNotice is what a store's listeners hear when the settings of
// queue change (QueueSettingsSet): it arrives through Listener.Listen's
// onInsert like a wake-up, with an unknown count, so it reaches every
// listener.
func SettingsNotice(queue string) string { return settingsNoticePrefix + queue }

// SettingsQueue reports whether a notification is a SettingsNotice, and
// of which queue.
func SettingsQueue(notice string) (queue string, ok bool) {
	return strings.CutPrefix(notice, settingsNoticePrefix)
}

// Result is the outcome of one attempt, fenced by (ID, Attempt,
// LeaseToken).
type Result struct {
	ID      int64
	Attempt int
	// LeaseToken is the token the attempt was claimed with.
	LeaseToken drovertype.LeaseToken
	Outcome    Outcome
	// Error is the encoded AttemptError of a failed attempt, or nil.
	Error []byte
	// RunAt is when a retried or released job becomes claimable again;
	// zero releases a job at once (a retry always sets it).
	RunAt time.Time
	// Flow is the claimed row's Flow (flow.go). The engine finishes results
	// whose claimed row has FlowEnd bits on its side path at once; without
	// them a result takes the plain statement, whose fence still turns the
	// job away when its stored flow has such bits (a dependant was added
	// while it ran, or the result came from a remote worker, which does not
	// echo them).
	Flow int
	// Output is the encoded result a completed job stores, or nil.
	Output []byte
	// Forget deletes the job, when this result completes it, instead of
	// keeping it among the finished jobs (Config.DeleteCompleted). The
	// store keeps it regardless when it stores a result, belongs to a batch
	// or a workflow, or holds a unique key (FlowKeep).
	Forget bool
	// Key and Queue are the claimed row's key and queue (JobRow.Key), so
	// that a batch of keyed results finishes and promotes its keys in one
	// round trip (JobFinishKeyedMany). Remote results leave them empty: the
	// engine then reads them from the store.
	Key, Queue string
}

// HeartbeatParams names running attempts whose leases to extend: IDs,
// Attempts and Tokens are parallel, one entry per attempt. A driver may
// test the tokens of a call as a set (an attempt matches when it runs
// under any of them), as JobFinishMany may: one claim issues one token for all
// its jobs, so a caller holding a token holds every attempt it matches.
type HeartbeatParams struct {
	IDs      []int64
	Attempts []int
	Tokens   []drovertype.LeaseToken
	Lease    time.Duration
}

// HeartbeatResult reports what the store thinks of the attempts in a
// heartbeat.
type HeartbeatResult struct {
	// Lost lists attempts the store no longer holds as running under that
	// attempt (rescued, cancelled before start, or finished elsewhere).
	Lost []int64
	// CancelRequested lists attempts whose job was asked to cancel.
	CancelRequested []int64
}

// RescueParams bounds one rescue pass.
type RescueParams struct {
	Now   time.Time
	Limit int
	// Error is the encoded AttemptError recorded on every rescued job.
	Error []byte
}

// PruneParams says how long finished jobs are kept, per final state. A
// negative retention keeps jobs forever; zero prunes at once.
type PruneParams struct {
	Now                time.Time
	CompletedRetention time.Duration
	CancelledRetention time.Duration
	DiscardedRetention time.Duration
	Limit              int
}

// ListParams filters JobList (and the other statements of
// SearchExecutor). Empty fields match everything.
type ListParams struct {
	States []drovertype.JobState
	Queue  string
	Kind   string
	// Tags keeps jobs that carry every one of them.
	Tags []string
	// Args and Metadata, when not nil, are encoded JSON objects that a
	// job's args and metadata must contain, as PostgreSQL's jsonb @>
	// defines it (internal/jsonmatch on stores without @>).
	Args, Metadata []byte
	// Created, Scheduled (run_at), Attempted and Finished bound the job's
	// times; a bound on a time the job has not set (never attempted, not
	// finished) excludes it.
	Created, Scheduled, Attempted, Finished drovertype.TimeRange
	// AfterID is the keyset cursor: only IDs after it in the list's
	// order (greater; with Desc, smaller, and 0 starts at the newest).
	AfterID int64
	// UntilID, when not 0, ends the list's window: only IDs up to and
	// including it in the list's order. Without it a list reads until it
	// has Limit jobs, however far that takes it.
	UntilID int64
	// Desc lists the newest (highest ID) first.
	Desc  bool
	Limit int
	Now   time.Time
}

// LeaderParams is one election attempt.
type LeaderParams struct {
	Name string
	ID   string
	TTL  time.Duration
}
