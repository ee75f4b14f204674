package droversqlite

import (
	"context"
	"database/sql"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverdriver/sqlstmt"
)

// stmt is one statement of queries.sql with typed parameters: P holds
// them and args lists them in the statement's ?N order, so that a call
// site names each argument instead of counting positions, and the compiler
// checks their types. cols is the number of result columns the code that
// reads its rows scans. TestStatementsPrepare checks that args gives as
// many values as the statement's highest ?N, that SQLite compiles it to
// rows of cols columns, and that queries.sql and this table name the same
// statements, each once.
//
// Times are unix microseconds (micros) and JSON arrays or objects strings,
// as the statements read them.
type stmt[P any] struct {
	name string
	args func(*P) []any
	cols int
}

// statements are all the typed statements, in declaration order: def adds
// each one.
var statements sqlstmt.Set

// def declares a statement.
func def[P any](s stmt[P]) *stmt[P] {
	sqlstmt.Add(&statements, s.name, s.cols, s.args)
	return &s
}

// bound is a statement with its arguments, for code that picks one of
// several statements and runs it later.
type bound = sqlstmt.Bound

// bind returns s with the arguments p.
func (s *stmt[P]) bind(p P) bound { return bound{Name: s.name, Args: s.args(&p)} }

// exec runs s in tx (nil: on its own, on the writer); see executor.exec.
func (s *stmt[P]) exec(ctx context.Context, e *executor, tx *sql.Tx, p P) (sql.Result, error) {
	return e.exec(ctx, tx, s.name, s.args(&p)...)
}

// query runs s and hands each row to scan; see executor.query.
func (s *stmt[P]) query(ctx context.Context, e *executor, tx *sql.Tx, db *sql.DB, scan func(*sql.Rows) error, p P) error {
	return e.query(ctx, tx, db, s.name, scan, s.args(&p)...)
}

// prep returns s prepared for several calls in tx, on the writer; see
// executor.prep. Run it with s.args.
func (s *stmt[P]) prep(ctx context.Context, e *executor, tx *sql.Tx) (*sql.Stmt, error) {
	return e.prep(ctx, tx, e.writer, s.name)
}

// Parameters of the statements that take more than one. Field order is
// ?N order.

// finishedCols are the columns of the statements that return the jobs
// they end (ended, finishApplied): id, state, flow & FlowEnd, queue,
// ordering key.
const finishedCols = 5

// periodicCols are the columns of a stored periodic definition
// (scanPeriodic).
const periodicCols = 13

// periodicParams are PeriodicCreate's and PeriodicUpdate's: Args and Tags
// JSON text, Now micros.
type periodicParams struct {
	Name        string
	Schedule    string
	Kind        string
	Args        string
	Queue       string
	Priority    int64
	MaxAttempts int64
	Tags        string
	Now         int64
}

func periodicArgs(p *periodicParams) []any {
	return []any{p.Name, p.Schedule, p.Kind, p.Args, p.Queue, p.Priority, p.MaxAttempts, p.Tags, p.Now}
}

// periodicRegisterParams are PeriodicRegister's: the definitions as a JSON
// array of objects (registeredJSON), and now in micros.
type periodicRegisterParams struct {
	Defs string
	Now  int64
}

type periodicPausedParams struct {
	Name   string
	Paused bool
	Now    int64
}

// insertRow is one job of JobInsertRow (appendInsertArgs).
type insertRow struct {
	Job droverdriver.InsertParams
	Now any // micros, boxed once per batch
}

type keyedInsertParams struct {
	insertRow
	Key         any // string, or nil for none
	KeyLimit    int64
	Unique      any // string, or nil for none
	UniqueQueue string
	Route       any // string, or nil for a plain job
	Routing     any // JSON text, or nil for a plain job
}

type uniqueClaimParams struct {
	ID          int64
	Key         string
	Final       int64
	Kind        string
	UniqueQueue string
}

type keyRateSetParams struct {
	Queue    string
	Key      string
	Rate     int
	PeriodMS int64
	Now      any
}

type keyWaitingParams struct {
	Keys    string // JSON array of [queue, ordering key] pairs
	Retried string // JSON array of job IDs
}

type keyPromoteParams struct {
	Queue   string
	Key     string
	Now     int64
	Retried string // JSON array of job IDs
}

type keyRateSpendParams struct {
	Queue string
	Key   string
	Now   int64
	N     int64
}

// limitAt is a number of rows and the time a sweep runs at.
type limitAt struct {
	Now   int64
	Limit int
}

type queueLimitTakeParams struct {
	Queue string
	Now   int64
	Max   int
}

// settingsSetParams are QueueSettingsSet's: a nil Paused or Strict keeps
// the stored value; SetLimits says whether the three limits replace the
// stored ones.
type settingsSetParams struct {
	Queue      string
	Paused     any
	SetLimits  bool
	MaxRunning int
	Rate       int
	PeriodMS   int64
	Now        int64
	// PauseKinds and ResumeKinds are JSON arrays of kinds to add to and
	// take out of the paused kinds.
	PauseKinds, ResumeKinds string
	Strict                  any
}

// queueCount is a queue and a number of its jobs.
type queueCount struct {
	Queue string
	N     int
}

type claimParams struct {
	Queue   string
	Max     int
	Owner   string
	Now     int64
	Lease   int64
	Limited int
	Token   []byte
}

func (p *claimParams) args() []any {
	return []any{p.Queue, p.Max, p.Owner, p.Now, p.Lease, p.Limited, p.Token}
}

// claimKindsParams are the parameters of JobClaimKinds and
// JobClaimExcept: Kinds is a JSON array of the kinds to claim, or to
// leave.
type claimKindsParams struct {
	claimParams
	Kinds string
}

func (p *claimKindsParams) args() []any { return append(p.claimParams.args(), p.Kinds) }

type claimKindsAfterParams struct {
	claimAfterParams
	Kinds string // a JSON array
}

func (p *claimKindsAfterParams) args() []any {
	return append(p.claimParams.args(), p.Priority, p.RunAt, p.ID, p.Kinds)
}

type claimAfterParams struct {
	claimParams
	Priority int
	RunAt    int64
	ID       int64
}

// claimRoutedParams are JobClaimRouted's and JobClaimStrict's, after
// JobClaim's: the kinds (a JSON array, nil for every kind), the worker's
// type, name and labels (nil for none; Labels nil for a worker that said
// nothing of itself, which matches plain jobs only), and the claim
// position to start past (nil: the head; JobClaimRouted only).
type claimRoutedParams struct {
	claimParams
	Kinds               any
	Type, Name, Labels  any
	Priority, RunAt, ID any
	// Except is a JSON array of the kinds paused in the queue ("[]" for
	// none), ?15 of both statements.
	Except string
}

func (p *claimRoutedParams) args() []any {
	return append(p.claimParams.args(), p.Kinds, p.Type, p.Name, p.Labels, p.Priority, p.RunAt, p.ID, p.Except)
}

// workerOwner is a worker's name and the owner that registered it.
type workerOwner struct {
	Name, Owner string
}

type routeFailParams struct {
	IDs     string // a JSON array
	Now     int64
	NowText string // RFC 3339, for the recorded error
}

// batchAt is a JSON batch the statement unpacks (results, IDs) and the
// time it runs at.
type batchAt struct {
	Batch string
	Now   int64
}

// finishBatch is a batch of packed results (appendResults), the time the
// finish runs at, and the stored flow bits that turn a job away
// (droverdriver.FinishParams.Refuse).
type finishBatch struct {
	Batch  string
	Now    int64
	Refuse int
}

// batchRefuse is finishBatch without the time.
type batchRefuse struct {
	Batch  string
	Refuse int
}

// jobAt is a job and the time a change to it is made at.
type jobAt struct {
	ID  int64
	Now int64
}

type rescueMarkParams struct {
	Now    int64 // the lease expiry the rescue looks for
	Limit  int
	At     int64 // when the rescue runs
	AtText string
}

type pruneParams struct {
	Completed, Cancelled, Discarded any // micros, or nil to keep
	Limit                           int
}

// searchParams are the parameters every search statement takes (JobList,
// JobListDesc, JobMatchCount; see search_waiting in queries.sql): the
// filter (states and tags JSON arrays, args and metadata JSON or nil,
// times in microseconds or nil), now, the window's exclusive bounds, a
// limit and the tables to read.
type searchParams struct {
	States, Queue, Kind, Tags  string
	Args, Metadata             any
	CreatedFrom, CreatedTo     any
	ScheduledFrom, ScheduledTo any
	AttemptedFrom, AttemptedTo any
	FinishedFrom, FinishedTo   any
	Now                        int64
	Lo, Hi                     int64
	Limit                      int
	Waiting, Finished          bool
}

func searchArgs(p *searchParams) []any {
	return []any{p.States, p.Queue, p.Kind, p.Tags, p.Args, p.Metadata, p.CreatedFrom, p.CreatedTo,
		p.ScheduledFrom, p.ScheduledTo, p.AttemptedFrom, p.AttemptedTo, p.FinishedFrom, p.FinishedTo,
		p.Now, p.Lo, p.Hi, p.Limit, p.Waiting, p.Finished}
}

// idNextParams are JobIDNext's and JobIDPrev's: the window's exclusive
// bounds and the tables to read.
// kindsWaitingParams are KindsWaiting's: the queue and how many of its
// jobs to read.
type kindsWaitingParams struct {
	Queue string
	Limit int
}

type idNextParams struct {
	Lo, Hi                  int64
	Waiting, Finished       bool
	Queue, Kind             string
	Due, Scheduled, Retried bool
	Now                     int64
	// Others and FinishedStates are JSON arrays of states.
	Others, FinishedStates string
	Failed                 bool
}

func idNextArgs(p *idNextParams) []any {
	return []any{p.Lo, p.Hi, p.Waiting, p.Finished, p.Queue, p.Kind, p.Due, p.Scheduled, p.Retried, p.Now,
		p.Others, p.FinishedStates, p.Failed}
}

type batchListParams struct {
	BeforeID int64
	Limit    int
}

type queueAt struct {
	Queue string
	Now   int64
}

// queuesAt is a list of queues, a JSON array, and a time.
type queuesAt struct {
	Queues string
	Now    int64
}

type timeRange struct {
	Since, Until int64
}

type leaderElectParams struct {
	Name    string
	ID      string
	Expires int64
	Now     int64
}

type leaderResignParams struct {
	Name string
	ID   string
}

type flowCancelParams struct {
	Messages string // JSON: the cancel cause of each job
	Now      int64
	NowText  string
}

type batchCallbackParams struct {
	BatchID    int64
	CallbackID int64
}

type flowMarkParams struct {
	Marks   string // JSON
	BatchID any    // int64, or nil for none
}

type batchCreateParams struct {
	Total int
	Now   int64
}

type batchResultsParams struct {
	BatchID int64
	AfterID int64
	Limit   int
}

type migrationRecordParams struct {
	Version int
	Name    string
	Now     int64
}

// idRange is the message IDs [From, To) of a generation.
type idRange struct {
	From, To int64
}

// topicLane is a lane of a topic.
type topicLane struct {
	Topic string
	Lane  int
}

// purgeNextParams find the next chunk of a topic's lane in a generation.
type purgeNextParams struct {
	topicLane
	After, End int64
	Limit      int
}

// purgeChunk is the IDs (After, Last] of a topic's lane.
type purgeChunk struct {
	topicLane
	After, Last int64
}

func purgeChunkArgs(p *purgeChunk) []any { return []any{p.Topic, p.Lane, p.After, p.Last} }

// genAt is a generation and the time a change to it is made at.
type genAt struct {
	Gen int64
	Now int64
}

type topicCreateParams struct {
	Name        string
	Lanes       int
	RetentionMS int64
	Now         int64
}

type topicPublishParams struct {
	Now      int64
	Messages string // JSON: [topic, lane, key or null, payload in hex, metadata]
}

type subscriptionCreateParams struct {
	Topic, Name string
	MaxAttempts int
	Now         int64
}

type subscriptionLanesParams struct {
	Topic, Name string
	Start       int
}

// topicName is a topic and a name within it (a subscription).
type topicName struct {
	Topic, Name string
}

type topicCandidatesParams struct {
	Topics        string // JSON array
	Subscriptions string // JSON array of "topic\x1fsubscription"
	Now           int64
	Max           int
	Owner         string
}

type topicLeaseParams struct {
	Candidates string // JSON array of [topic, subscription, lane, cursor id, head id, limit]
	Owner      string
	Token      []byte
	Expires    int64
	Now        int64
}

// topicTailParams are TopicTail's: the topic, the ids of the positions
// of its lanes to read before as a JSON array, and how many messages of
// each.
type topicTailParams struct {
	Topic  string
	Before string
	Limit  int
}

type topicWaitParams struct {
	Lanes string // JSON array of [topic, subscription, lane]
	Owner string
	Until int64
}

type topicReadParams struct {
	Ranges   string // JSON: [topic, lane, cursor xid, cursor id, bound xid, bound id, limit]
	MaxLimit int    // the largest limit of Ranges
}

// topicReadLaneParams are TopicReadLane's: one range of a read.
type topicReadLaneParams struct {
	Topic  string
	Lane   int
	Cursor int64
	Bound  int64
	Limit  int
}

// topicRewindParams are TopicRewind's: the subscription, the publish
// time to rewind it to in microseconds (nil: the earliest message kept)
// and the time.
type topicRewindParams struct {
	Topic, Name string
	Since       *int64
	Now         int64
}

// topicLaneAt names one lane of a subscription, and the time.
type topicLaneAt struct {
	Topic, Name string
	Lane        int
	Now         int64
}

type topicReceiptKeyParams struct {
	Secret []byte
	Now    int64
}

// laneUpdateParams are the lanes TopicAck and TopicExtend update (JSON,
// appendLanes) and the time they set (the ack's now, or the new expiry).
type laneUpdateParams struct {
	Lanes string
	At    int64
}

type topicAckParams struct {
	Lanes   string
	Now     int64
	Expires int64 // of kept lanes
}

// The statements of queries.sql, in its order.
var (
	// JobInsertHead and JobInsertRow are fragments: insertQueries joins
	// the head and insertSizes rows into the JobInsertN statements, which
	// insertChunks runs with appendInsertArgs for each row.
	jobInsertHead = def(stmt[struct{}]{name: "JobInsertHead", args: sqlstmt.NoArgs})
	jobInsertRow  = def(stmt[insertRow]{name: "JobInsertRow",
		args: func(p *insertRow) []any { return appendInsertArgs(nil, &p.Job, p.Now) }})
	// JobInsertRoutedHead and JobInsertRoutedRow are the same for routed
	// jobs with neither key nor unique key (JobInsertRoutedN).
	jobInsertRoutedHead = def(stmt[struct{}]{name: "JobInsertRoutedHead", args: sqlstmt.NoArgs})
	jobInsertRoutedRow  = def(stmt[insertRow]{name: "JobInsertRoutedRow",
		args: func(p *insertRow) []any { return appendRoutedArgs(nil, &p.Job, p.Now) }})
	jobInsertKeyed = def(stmt[keyedInsertParams]{name: "JobInsertKeyed",
		args: func(p *keyedInsertParams) []any {
			return append(appendInsertArgs(make([]any, 0, insertColumns+6), &p.Job, p.Now), p.Key, p.KeyLimit, p.Unique, p.UniqueQueue,
				p.Route, p.Routing)
		}})
	uniqueClaim = def(stmt[uniqueClaimParams]{name: "UniqueClaim",
		args: func(p *uniqueClaimParams) []any { return []any{p.ID, p.Key, p.Final, p.Kind, p.UniqueQueue} }})
	uniqueRelease = def(stmt[string]{name: "UniqueRelease", args: sqlstmt.OneArg[string]})
	uniqueHolder  = def(stmt[string]{name: "UniqueHolder", cols: 2, args: sqlstmt.OneArg[string]})
	uniqueRetake  = def(stmt[string]{name: "UniqueRetake", args: sqlstmt.OneArg[string]})
	uniquePrune   = def(stmt[string]{name: "UniquePrune", args: sqlstmt.OneArg[string]})
	keyWaiting    = def(stmt[keyWaitingParams]{name: "KeyWaiting", cols: 2,
		args: func(p *keyWaitingParams) []any { return []any{p.Keys, p.Retried} }})
	keyPromote = def(stmt[keyPromoteParams]{name: "KeyPromote",
		args: func(p *keyPromoteParams) []any { return []any{p.Queue, p.Key, p.Now, p.Retried} }})
	keyRateSpend = def(stmt[keyRateSpendParams]{name: "KeyRateSpend",
		args: func(p *keyRateSpendParams) []any { return []any{p.Queue, p.Key, p.Now, p.N} }})
	keyRateSet = def(stmt[keyRateSetParams]{name: "KeyRateSet",
		args: func(p *keyRateSetParams) []any { return []any{p.Queue, p.Key, p.Rate, p.PeriodMS, p.Now} }})
	keyRatePrune = def(stmt[limitAt]{name: "KeyRatePrune",
		args: func(p *limitAt) []any { return []any{p.Now, p.Limit} }})
	queueLimitTake = def(stmt[queueLimitTakeParams]{name: "QueueLimitTake", cols: 3,
		args: func(p *queueLimitTakeParams) []any { return []any{p.Queue, p.Now, p.Max} }})
	queueSettingsGet  = def(stmt[string]{name: "QueueSettingsGet", cols: 8, args: sqlstmt.OneArg[string]})
	queueKnown        = def(stmt[string]{name: "QueueKnown", cols: 1, args: sqlstmt.OneArg[string]})
	queueSettingsList = def(stmt[struct{}]{name: "QueueSettingsList", cols: 8, args: sqlstmt.NoArgs})
	queueSettingsSet  = def(stmt[settingsSetParams]{name: "QueueSettingsSet", cols: 8,
		args: func(p *settingsSetParams) []any {
			return []any{p.Queue, p.Paused, p.SetLimits, p.MaxRunning, p.Rate, p.PeriodMS, p.Now, p.PauseKinds, p.ResumeKinds, p.Strict}
		}})
	queueLimitSpend = def(stmt[queueCount]{name: "QueueLimitSpend",
		args: func(p *queueCount) []any { return []any{p.Queue, p.N} }})
	keyBlocked        = def(stmt[int]{name: "KeyBlocked", cols: 2, args: sqlstmt.OneArg[int]})
	jobSequenceRaise  = def(stmt[int64]{name: "JobSequenceRaise", args: sqlstmt.OneArg[int64]})
	jobSequenceCreate = def(stmt[int64]{name: "JobSequenceCreate", args: sqlstmt.OneArg[int64]})
	jobClaimable      = def(stmt[queueAt]{name: "JobClaimable", cols: 1, args: func(p *queueAt) []any { return []any{p.Queue, p.Now} }})
	queuesDue         = def(stmt[queuesAt]{name: "QueuesDue", cols: 1, args: func(p *queuesAt) []any { return []any{p.Queues, p.Now} }})
	jobClaim          = def(stmt[claimParams]{name: "JobClaim", cols: 16, args: (*claimParams).args})
	// jobClaimKinds and jobClaimKindsAfter are JobClaim and JobClaimAfter
	// for the kinds the claimer can run (sqlfile.WithClaimKinds,
	// ClaimParams.Kinds).
	jobClaimKinds = def(stmt[claimKindsParams]{name: "JobClaimKinds", cols: 16,
		args: (*claimKindsParams).args})
	jobClaimKindsAfter = def(stmt[claimKindsAfterParams]{name: "JobClaimKindsAfter", cols: 16,
		args: (*claimKindsAfterParams).args})
	// jobClaimExcept and jobClaimExceptAfter are JobClaim and
	// JobClaimAfter leaving the kinds paused in the queue
	// (sqlfile.WithClaimExceptKinds, ClaimParams.ExceptKinds).
	jobClaimExcept = def(stmt[claimKindsParams]{name: "JobClaimExcept", cols: 16,
		args: (*claimKindsParams).args})
	jobClaimExceptAfter = def(stmt[claimKindsAfterParams]{name: "JobClaimExceptAfter", cols: 16,
		args: (*claimKindsAfterParams).args})
	// jobClaimShared, jobClaimKindsShared and jobClaimExceptShared are
	// JobClaim, JobClaimKinds and JobClaimExcept for several claimers of
	// one round, each row under its claimer's owner and token, which it
	// returns (withClaimShared, shared.go): Owner is the slots.
	jobClaimShared       = def(stmt[claimParams]{name: "JobClaimSlots", cols: claimColumns + 2, args: (*claimParams).args})
	jobClaimKindsShared  = def(stmt[claimKindsParams]{name: "JobClaimKindsSlots", cols: claimColumns + 2, args: (*claimKindsParams).args})
	jobClaimExceptShared = def(stmt[claimKindsParams]{name: "JobClaimExceptSlots", cols: claimColumns + 2, args: (*claimKindsParams).args})
	// jobClaimAfter is JobClaim with the claim position it starts after
	// (sqlfile.WithClaimAfter).
	jobClaimAfter = def(stmt[claimAfterParams]{name: "JobClaimAfter", cols: 16,
		args: func(p *claimAfterParams) []any { return append(p.claimParams.args(), p.Priority, p.RunAt, p.ID) }})
	// jobClaimRouted and jobClaimStrict are the claims of a worker that
	// says what it is and of a queue in strict order (routing.go).
	jobClaimRouted  = def(stmt[claimRoutedParams]{name: "JobClaimRouted", cols: claimColumns, args: (*claimRoutedParams).args})
	jobClaimStrict  = def(stmt[claimRoutedParams]{name: "JobClaimStrict", cols: claimColumns, args: (*claimRoutedParams).args})
	jobFinishMove   = def(stmt[finishBatch]{name: "JobFinishMove", args: finishBatchArgs})
	jobFinishForget = def(stmt[batchRefuse]{name: "JobFinishForget",
		args: func(p *batchRefuse) []any { return []any{p.Batch, p.Refuse} }})
	jobFinishDelete = def(stmt[string]{name: "JobFinishDelete", args: sqlstmt.OneArg[string]})
	jobFinishWait   = def(stmt[finishBatch]{name: "JobFinishWait", args: finishBatchArgs})
	// JobFinishFenced reads id, flow & FlowEnd, queue and ordering key;
	// JobFinishApplied, JobRescueMark, JobCancelMove and JobDiscardMove
	// return the state too (finishedCols).
	jobFinishFenced   = def(stmt[string]{name: "JobFinishFenced", cols: finishedCols - 1, args: sqlstmt.OneArg[string]})
	jobFinishApplied  = def(stmt[string]{name: "JobFinishApplied", cols: finishedCols, args: sqlstmt.OneArg[string]})
	savepointBegin    = def(stmt[struct{}]{name: "Savepoint", args: sqlstmt.NoArgs})
	savepointRollback = def(stmt[struct{}]{name: "SavepointRollback", args: sqlstmt.NoArgs})
	savepointRelease  = def(stmt[struct{}]{name: "SavepointRelease", args: sqlstmt.NoArgs})
	jobHeartbeat      = def(stmt[batchAt]{name: "JobHeartbeat", cols: 2, args: batchAtArgs})
	jobRescueMark     = def(stmt[rescueMarkParams]{name: "JobRescueMark", cols: finishedCols + 1,
		args: func(p *rescueMarkParams) []any { return []any{p.Now, p.Limit, p.At, p.AtText} }})
	jobRescueMove   = def(stmt[batchAt]{name: "JobRescueMove", args: batchAtArgs})
	jobRescueDelete = def(stmt[string]{name: "JobRescueDelete", args: sqlstmt.OneArg[string]})
	jobPrune        = def(stmt[pruneParams]{name: "JobPrune", cols: 2,
		args: func(p *pruneParams) []any { return []any{p.Completed, p.Cancelled, p.Discarded, p.Limit} }})
	jobGet               = def(stmt[jobAt]{name: "JobGet", cols: jobColumns, args: jobAtArgs})
	jobList              = def(stmt[searchParams]{name: "JobList", cols: jobColumns, args: searchArgs})
	jobListDesc          = def(stmt[searchParams]{name: "JobListDesc", cols: jobColumns, args: searchArgs})
	jobMatchCount        = def(stmt[searchParams]{name: "JobMatchCount", cols: 4, args: searchArgs})
	jobMatchCountByState = def(stmt[searchParams]{name: "JobMatchCountByState", cols: 4, args: searchArgs})
	jobIDNext            = def(stmt[idNextParams]{name: "JobIDNext", cols: 1, args: idNextArgs})
	jobIDPrev            = def(stmt[idNextParams]{name: "JobIDPrev", cols: 1, args: idNextArgs})
	jobIDBounds          = def(stmt[struct{}]{name: "JobIDBounds", cols: 4, args: sqlstmt.NoArgs})
	// The statements of the operators' actions take the IDs of a page of
	// jobs as a JSON array (batchAt, string), so that a bulk action
	// changes a page in a few statements.
	jobCancelMove      = def(stmt[batchAt]{name: "JobCancelMove", cols: finishedCols, args: batchAtArgs})
	jobCancelDelete    = def(stmt[string]{name: "JobCancelDelete", args: sqlstmt.OneArg[string]})
	jobCancelFlag      = def(stmt[string]{name: "JobCancelFlag", cols: 1, args: sqlstmt.OneArg[string]})
	jobDiscardMove     = def(stmt[batchAt]{name: "JobDiscardMove", cols: finishedCols, args: batchAtArgs})
	jobDiscardDelete   = def(stmt[string]{name: "JobDiscardDelete", args: sqlstmt.OneArg[string]})
	jobRetryReschedule = def(stmt[batchAt]{name: "JobRetryReschedule", cols: 2, args: batchAtArgs})
	jobRetryRevive     = def(stmt[batchAt]{name: "JobRetryRevive", cols: 3, args: batchAtArgs})
	jobRetryRefused    = def(stmt[string]{name: "JobRetryRefused", cols: 3, args: sqlstmt.OneArg[string]})
	jobRetryDelete     = def(stmt[string]{name: "JobRetryDelete", args: sqlstmt.OneArg[string]})
	jobDelete          = def(stmt[string]{name: "JobDelete", cols: 2, args: sqlstmt.OneArg[string]})
	jobCountByState    = def(stmt[queueAt]{name: "JobCountByState", cols: 2,
		args: func(p *queueAt) []any { return []any{p.Queue, p.Now} }})
	queueStats    = def(stmt[int64]{name: "QueueStats", cols: 6, args: sqlstmt.OneArg[int64]})
	finishedStats = def(stmt[timeRange]{name: "FinishedStats", cols: 7,
		args: func(p *timeRange) []any { return []any{p.Since, p.Until} }})
	leaseOwners = def(stmt[struct{}]{name: "LeaseOwners", cols: 3, args: sqlstmt.NoArgs})
	leaderElect = def(stmt[leaderElectParams]{name: "LeaderElect", cols: 1,
		args: func(p *leaderElectParams) []any { return []any{p.Name, p.ID, p.Expires, p.Now} }})
	leaderResign = def(stmt[leaderResignParams]{name: "LeaderResign",
		args: func(p *leaderResignParams) []any { return []any{p.Name, p.ID} }})
	schemaVersion   = def(stmt[struct{}]{name: "SchemaVersion", cols: 1, args: sqlstmt.NoArgs})
	migrationsTable = def(stmt[struct{}]{name: "MigrationsTable", args: sqlstmt.NoArgs})
	migrationRecord = def(stmt[migrationRecordParams]{name: "MigrationRecord",
		args: func(p *migrationRecordParams) []any { return []any{p.Version, p.Name, p.Now} }})

	// Workflows and batches (flow.go).
	jobFlowMark         = def(stmt[flowMarkParams]{name: "JobFlowMark", args: func(p *flowMarkParams) []any { return []any{p.Marks, p.BatchID} }})
	jobFlowMarkParents  = def(stmt[string]{name: "JobFlowMarkParents", cols: 1, args: sqlstmt.OneArg[string]})
	jobFlowEndedParents = def(stmt[string]{name: "JobFlowEndedParents", cols: 2, args: sqlstmt.OneArg[string]})
	jobFlowInsertDeps   = def(stmt[string]{name: "JobFlowInsertDeps", args: sqlstmt.OneArg[string]})
	jobFlowBlockKeyed   = def(stmt[string]{name: "JobFlowBlockKeyed", args: sqlstmt.OneArg[string]})
	batchCreate         = def(stmt[batchCreateParams]{name: "BatchCreate",
		args: func(p *batchCreateParams) []any { return []any{p.Total, p.Now} }})
	batchSetCallback = def(stmt[batchCallbackParams]{name: "BatchSetCallback",
		args: func(p *batchCallbackParams) []any { return []any{p.BatchID, p.CallbackID} }})
	jobFlowDoomed     = def(stmt[string]{name: "JobFlowDoomed", cols: 5, args: sqlstmt.OneArg[string]})
	jobFlowCancelMove = def(stmt[flowCancelParams]{name: "JobFlowCancelMove",
		args: func(p *flowCancelParams) []any { return []any{p.Messages, p.Now, p.NowText} }})
	jobFlowCancelDelete = def(stmt[string]{name: "JobFlowCancelDelete", args: sqlstmt.OneArg[string]})
	jobFlowRelease      = def(stmt[batchAt]{name: "JobFlowRelease", cols: 3, args: batchAtArgs})
	jobFlowCount        = def(stmt[batchAt]{name: "JobFlowCount", cols: 2, args: batchAtArgs})
	jobFlowCallback     = def(stmt[batchAt]{name: "JobFlowCallback", cols: 3, args: batchAtArgs})
	batchGet            = def(stmt[int64]{name: "BatchGet", cols: 10, args: sqlstmt.OneArg[int64]})
	batchResults        = def(stmt[batchResultsParams]{name: "BatchResults", cols: 4,
		args: func(p *batchResultsParams) []any { return []any{p.BatchID, p.AfterID, p.Limit} }})
	jobResults       = def(stmt[string]{name: "JobResults", cols: 4, args: sqlstmt.OneArg[string]})
	jobParentResults = def(stmt[int64]{name: "JobParentResults", cols: 4, args: sqlstmt.OneArg[int64]})
	jobDeps          = def(stmt[string]{name: "JobDeps", cols: 2, args: sqlstmt.OneArg[string]})
	batchList        = def(stmt[batchListParams]{name: "BatchList", cols: 10,
		args: func(p *batchListParams) []any { return []any{p.BeforeID, p.Limit} }})
	jobsParentResults = def(stmt[string]{name: "JobsParentResults", cols: 5, args: sqlstmt.OneArg[string]})

	// Topics (topics.go).
	topicCreate = def(stmt[topicCreateParams]{name: "TopicCreate",
		args: func(p *topicCreateParams) []any { return []any{p.Name, p.Lanes, p.RetentionMS, p.Now} }})
	topicList    = def(stmt[struct{}]{name: "TopicList", cols: 5, args: sqlstmt.NoArgs})
	topicPublish = def(stmt[topicPublishParams]{name: "TopicPublish",
		args: func(p *topicPublishParams) []any { return []any{p.Now, p.Messages} }})
	subscriptionCreate = def(stmt[subscriptionCreateParams]{name: "SubscriptionCreate",
		args: func(p *subscriptionCreateParams) []any { return []any{p.Topic, p.Name, p.MaxAttempts, p.Now} }})
	subscriptionLanes = def(stmt[subscriptionLanesParams]{name: "SubscriptionLanes",
		args: func(p *subscriptionLanesParams) []any { return []any{p.Topic, p.Name, p.Start} }})
	topicExists              = def(stmt[string]{name: "TopicExists", cols: 1, args: sqlstmt.OneArg[string]})
	topicDelete              = def(stmt[string]{name: "TopicDelete", args: sqlstmt.OneArg[string]})
	topicDeleteMessages      = def(stmt[string]{name: "TopicDeleteMessages", args: sqlstmt.OneArg[string]})
	topicDeleteLanes         = def(stmt[string]{name: "TopicDeleteLanes", args: sqlstmt.OneArg[string]})
	topicDeleteSubscriptions = def(stmt[string]{name: "TopicDeleteSubscriptions", args: sqlstmt.OneArg[string]})
	subscriptionDelete       = def(stmt[topicName]{name: "SubscriptionDelete", args: topicNameArgs})
	subscriptionDeleteLanes  = def(stmt[topicName]{name: "SubscriptionDeleteLanes", args: topicNameArgs})
	topicLastID              = def(stmt[struct{}]{name: "TopicLastID", cols: 1, args: sqlstmt.NoArgs})
	topicLeaseCandidates     = def(stmt[topicCandidatesParams]{name: "TopicLeaseCandidates", cols: 6,
		args: func(p *topicCandidatesParams) []any { return []any{p.Topics, p.Subscriptions, p.Now, p.Max, p.Owner} }})
	topicLease = def(stmt[topicLeaseParams]{name: "TopicLease", cols: 10,
		args: func(p *topicLeaseParams) []any { return []any{p.Candidates, p.Owner, p.Token, p.Expires, p.Now} }})
	topicWait = def(stmt[topicWaitParams]{name: "TopicWait",
		args: func(p *topicWaitParams) []any { return []any{p.Lanes, p.Owner, p.Until} }})
	topicMaxAttempts = def(stmt[string]{name: "TopicMaxAttempts", cols: 3, args: sqlstmt.OneArg[string]})
	topicTail        = def(stmt[topicTailParams]{name: "TopicTail", cols: 8,
		args: func(p *topicTailParams) []any { return []any{p.Topic, p.Before, p.Limit} }})
	topicRead = def(stmt[topicReadParams]{name: "TopicRead", cols: 8,
		args: func(p *topicReadParams) []any { return []any{p.Ranges, p.MaxLimit} }})
	topicReadLane = def(stmt[topicReadLaneParams]{name: "TopicReadLane", cols: 8,
		args: func(p *topicReadLaneParams) []any { return []any{p.Topic, p.Lane, p.Cursor, p.Bound, p.Limit} }})
	topicAck = def(stmt[topicAckParams]{name: "TopicAck", cols: 4,
		args: func(p *topicAckParams) []any { return []any{p.Lanes, p.Now, p.Expires} }})
	topicExtend     = def(stmt[laneUpdateParams]{name: "TopicExtend", cols: 3, args: laneUpdateArgs})
	topicRelease    = def(stmt[laneUpdateParams]{name: "TopicRelease", cols: 3, args: laneUpdateArgs})
	topicLanes      = def(stmt[topicLaneAt]{name: "TopicLanes", cols: 7, args: func(p *topicLaneAt) []any { return []any{p.Topic, p.Name, p.Now} }})
	topicLaneExpire = def(stmt[topicLaneAt]{name: "TopicLaneExpire", cols: 1,
		args: func(p *topicLaneAt) []any { return []any{p.Topic, p.Name, p.Lane, p.Now} }})
	topicRewindLanes = def(stmt[topicName]{name: "TopicRewindLanes", cols: 4, args: topicNameArgs})
	topicRewind      = def(stmt[topicRewindParams]{name: "TopicRewind", cols: 3,
		args: func(p *topicRewindParams) []any { return []any{p.Topic, p.Name, p.Since, p.Now} }})
	subscriptionGet       = def(stmt[topicName]{name: "SubscriptionGet", cols: 5, args: topicNameArgs})
	topicReceiptKeyInsert = def(stmt[topicReceiptKeyParams]{name: "TopicReceiptKeyInsert",
		args: func(p *topicReceiptKeyParams) []any { return []any{p.Secret, p.Now} }})
	topicReceiptKey       = def(stmt[struct{}]{name: "TopicReceiptKey", cols: 1, args: sqlstmt.NoArgs})
	topicLag              = def(stmt[sql.NullString]{name: "TopicLag", cols: 5, args: sqlstmt.OneArg[sql.NullString]})
	topicGenerations      = def(stmt[struct{}]{name: "TopicGenerations", cols: 8, args: sqlstmt.NoArgs})
	topicGenerationTopics = def(stmt[idRange]{name: "TopicGenerationTopics", cols: 3, args: idRangeArgs})
	topicGenerationCreate = def(stmt[genAt]{name: "TopicGenerationCreate", args: genAtArgs})
	topicSeal             = def(stmt[genAt]{name: "TopicSeal", args: genAtArgs})
	topicSequenceMove     = def(stmt[int64]{name: "TopicSequenceMove", args: sqlstmt.OneArg[int64]})
	topicSequenceCreate   = def(stmt[int64]{name: "TopicSequenceCreate", args: sqlstmt.OneArg[int64]})
	topicDropMark         = def(stmt[int64]{name: "TopicDropMark", args: sqlstmt.OneArg[int64]})
	topicDropNext         = def(stmt[idRange]{name: "TopicDropNext", cols: 1, args: idRangeArgs})
	topicChunkLost        = def(stmt[idRange]{name: "TopicChunkLost", cols: 1, args: idRangeArgs})
	topicChunkLose        = def(stmt[idRange]{name: "TopicChunkLose", args: idRangeArgs})
	topicChunkDelete      = def(stmt[idRange]{name: "TopicChunkDelete", args: idRangeArgs})
	topicGenerationForget = def(stmt[int64]{name: "TopicGenerationForget", args: sqlstmt.OneArg[int64]})
	topicPurgeNext        = def(stmt[purgeNextParams]{name: "TopicPurgeNext", cols: 1,
		args: func(p *purgeNextParams) []any { return []any{p.Topic, p.Lane, p.After, p.End, p.Limit} }})
	topicPurgeLost   = def(stmt[purgeChunk]{name: "TopicPurgeLost", cols: 1, args: purgeChunkArgs})
	topicPurgeLose   = def(stmt[purgeChunk]{name: "TopicPurgeLose", args: purgeChunkArgs})
	topicPurgeDelete = def(stmt[purgeChunk]{name: "TopicPurgeDelete", args: purgeChunkArgs})
	topicPurgeLane   = def(stmt[topicLane]{name: "TopicPurgeLane", cols: 1,
		args: func(p *topicLane) []any { return []any{p.Topic, p.Lane} }})

	// Periodic jobs (periodic.go).
	periodicTicks       = def(stmt[string]{name: "PeriodicTicks", cols: 2, args: sqlstmt.OneArg[string]})
	periodicTicksRecord = def(stmt[string]{name: "PeriodicTicksRecord", args: sqlstmt.OneArg[string]})
	periodicCreate      = def(stmt[periodicParams]{name: "PeriodicCreate", cols: periodicCols, args: periodicArgs})
	periodicUpdate      = def(stmt[periodicParams]{name: "PeriodicUpdate", cols: periodicCols, args: periodicArgs})
	periodicRegister    = def(stmt[periodicRegisterParams]{name: "PeriodicRegister",
		args: func(p *periodicRegisterParams) []any { return []any{p.Defs, p.Now} }})
	periodicList      = def(stmt[struct{}]{name: "PeriodicList", cols: periodicCols, args: sqlstmt.NoArgs})
	periodicSetPaused = def(stmt[periodicPausedParams]{name: "PeriodicSetPaused", cols: periodicCols,
		args: func(p *periodicPausedParams) []any { return []any{p.Name, p.Paused, p.Now} }})
	periodicDelete = def(stmt[string]{name: "PeriodicDelete", args: sqlstmt.OneArg[string]})

	// Routing and the worker registry (routing.go).
	workerSeen = def(stmt[batchAt]{name: "WorkerSeen",
		args: func(p *batchAt) []any { return []any{p.Batch, p.Now} }})
	workerGone = def(stmt[workerOwner]{name: "WorkerGone",
		args: func(p *workerOwner) []any { return []any{p.Name, p.Owner} }})
	workerList   = def(stmt[struct{}]{name: "WorkerList", cols: 10, args: sqlstmt.NoArgs})
	workerPrune  = def(stmt[int64]{name: "WorkerPrune", args: sqlstmt.OneArg[int64]})
	routeWaiting = def(stmt[int]{name: "RouteWaiting", cols: 6, args: sqlstmt.OneArg[int]})
	queueHead    = def(stmt[string]{name: "QueueHead", cols: 3, args: sqlstmt.OneArg[string]})
	kindsWaiting = def(stmt[kindsWaitingParams]{name: "KindsWaiting", cols: 4,
		args: func(p *kindsWaitingParams) []any { return []any{p.Queue, p.Limit} }})
	jobRouteAbsentFind = def(stmt[limitAt]{name: "JobRouteAbsentFind", cols: 2,
		args: func(p *limitAt) []any { return []any{p.Now, p.Limit} }})
	jobRouteFallback = def(stmt[string]{name: "JobRouteFallback", cols: 1, args: sqlstmt.OneArg[string]})
	jobRouteFailMove = def(stmt[routeFailParams]{name: "JobRouteFailMove", cols: finishedCols,
		args: func(p *routeFailParams) []any { return []any{p.IDs, p.Now, p.NowText} }})
)

func batchAtArgs(p *batchAt) []any { return []any{p.Batch, p.Now} }

func finishBatchArgs(p *finishBatch) []any { return []any{p.Batch, p.Now, p.Refuse} }

func jobAtArgs(p *jobAt) []any { return []any{p.ID, p.Now} }

func topicNameArgs(p *topicName) []any { return []any{p.Topic, p.Name} }

func laneUpdateArgs(p *laneUpdateParams) []any { return []any{p.Lanes, p.At} }

func idRangeArgs(p *idRange) []any { return []any{p.From, p.To} }

func genAtArgs(p *genAt) []any { return []any{p.Gen, p.Now} }
