package droversqlite

import (
	"context"
	"database/sql"

	"github.com/droverhq/drover/droverdriver"
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
var statements []statement

// statement is what the statements test needs of a stmt of any P.
type statement interface {
	stmtName() string
	// zeroArgs are the parameters of P's zero value.
	zeroArgs() []any
	resultCols() int
}

func (s *stmt[P]) stmtName() string { return s.name }
func (s *stmt[P]) zeroArgs() []any  { var p P; return s.args(&p) }
func (s *stmt[P]) resultCols() int  { return s.cols }

// def declares a statement.
func def[P any](s stmt[P]) *stmt[P] {
	statements = append(statements, &s)
	return &s
}

// noArgs are the parameters of a statement that takes none.
func noArgs(*struct{}) []any { return nil }

// oneArg are the parameters of a statement that takes one, of type T.
func oneArg[T any](p *T) []any { return []any{*p} }

// bound is a statement with its arguments, for code that picks one of
// several statements and runs it later.
type bound struct {
	name string
	args []any
}

// bind returns s with the arguments p.
func (s *stmt[P]) bind(p P) bound { return bound{s.name, s.args(&p)} }

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

// settingsSetParams are QueueSettingsSet's: a nil Paused keeps the
// stored pause; SetLimits says whether the three limits replace the
// stored ones.
type settingsSetParams struct {
	Queue      string
	Paused     any
	SetLimits  bool
	MaxRunning int
	Rate       int
	PeriodMS   int64
	Now        int64
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

type claimKindsParams struct {
	claimParams
	Kinds string // a JSON array
}

type claimKindsAfterParams struct {
	claimAfterParams
	Kinds string // a JSON array
}

type claimAfterParams struct {
	claimParams
	Priority int
	RunAt    int64
	ID       int64
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

type listParams struct {
	Queue   string
	Kind    string
	AfterID int64
	States  string // JSON array
	Now     int64
	Limit   int
}

type queueAt struct {
	Queue string
	Now   int64
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
}

type topicLeaseParams struct {
	Candidates string // JSON array of [topic, subscription, lane, cursor id]
	Owner      string
	Token      []byte
	Expires    int64
	Now        int64
}

type topicReadParams struct {
	Ranges string // JSON: [topic, lane, cursor xid, cursor id]
	Limit  int
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
	jobInsertHead = def(stmt[struct{}]{name: "JobInsertHead", args: noArgs})
	jobInsertRow  = def(stmt[insertRow]{name: "JobInsertRow",
		args: func(p *insertRow) []any { return appendInsertArgs(nil, &p.Job, p.Now) }})
	jobInsertKeyed = def(stmt[keyedInsertParams]{name: "JobInsertKeyed",
		args: func(p *keyedInsertParams) []any {
			return append(appendInsertArgs(make([]any, 0, insertColumns+4), &p.Job, p.Now), p.Key, p.KeyLimit, p.Unique, p.UniqueQueue)
		}})
	uniqueClaim = def(stmt[uniqueClaimParams]{name: "UniqueClaim",
		args: func(p *uniqueClaimParams) []any { return []any{p.ID, p.Key, p.Final, p.Kind, p.UniqueQueue} }})
	uniqueRelease = def(stmt[string]{name: "UniqueRelease", args: oneArg[string]})
	uniqueHolder  = def(stmt[int64]{name: "UniqueHolder", cols: 1, args: oneArg[int64]})
	uniqueRetake  = def(stmt[int64]{name: "UniqueRetake", args: oneArg[int64]})
	uniquePrune   = def(stmt[string]{name: "UniquePrune", args: oneArg[string]})
	keyPromote    = def(stmt[keyPromoteParams]{name: "KeyPromote",
		args: func(p *keyPromoteParams) []any { return []any{p.Queue, p.Key, p.Now, p.Retried} }})
	keyRateSpend = def(stmt[keyRateSpendParams]{name: "KeyRateSpend",
		args: func(p *keyRateSpendParams) []any { return []any{p.Queue, p.Key, p.Now, p.N} }})
	keyRateSet = def(stmt[keyRateSetParams]{name: "KeyRateSet",
		args: func(p *keyRateSetParams) []any { return []any{p.Queue, p.Key, p.Rate, p.PeriodMS, p.Now} }})
	keyRatePrune = def(stmt[limitAt]{name: "KeyRatePrune",
		args: func(p *limitAt) []any { return []any{p.Now, p.Limit} }})
	queueLimitTake = def(stmt[queueLimitTakeParams]{name: "QueueLimitTake", cols: 2,
		args: func(p *queueLimitTakeParams) []any { return []any{p.Queue, p.Now, p.Max} }})
	queueSettingsGet  = def(stmt[string]{name: "QueueSettingsGet", cols: 6, args: oneArg[string]})
	queueSettingsList = def(stmt[struct{}]{name: "QueueSettingsList", cols: 6, args: noArgs})
	queueSettingsSet  = def(stmt[settingsSetParams]{name: "QueueSettingsSet", cols: 6,
		args: func(p *settingsSetParams) []any {
			return []any{p.Queue, p.Paused, p.SetLimits, p.MaxRunning, p.Rate, p.PeriodMS, p.Now}
		}})
	queueLimitSpend = def(stmt[queueCount]{name: "QueueLimitSpend",
		args: func(p *queueCount) []any { return []any{p.Queue, p.N} }})
	keyBlocked        = def(stmt[int]{name: "KeyBlocked", cols: 2, args: oneArg[int]})
	jobSequenceRaise  = def(stmt[int64]{name: "JobSequenceRaise", args: oneArg[int64]})
	jobSequenceCreate = def(stmt[int64]{name: "JobSequenceCreate", args: oneArg[int64]})
	jobClaimable      = def(stmt[queueAt]{name: "JobClaimable", cols: 1, args: func(p *queueAt) []any { return []any{p.Queue, p.Now} }})
	jobClaim          = def(stmt[claimParams]{name: "JobClaim", cols: 16, args: (*claimParams).args})
	// jobClaimKinds and jobClaimKindsAfter are JobClaim and JobClaimAfter
	// for the kinds the claimer can run (droverdriver.WithClaimKinds,
	// ClaimParams.Kinds).
	jobClaimKinds = def(stmt[claimKindsParams]{name: "JobClaimKinds", cols: 16,
		args: func(p *claimKindsParams) []any { return append(p.claimParams.args(), p.Kinds) }})
	jobClaimKindsAfter = def(stmt[claimKindsAfterParams]{name: "JobClaimKindsAfter", cols: 16,
		args: func(p *claimKindsAfterParams) []any {
			return append(p.claimParams.args(), p.Priority, p.RunAt, p.ID, p.Kinds)
		}})
	// jobClaimAfter is JobClaim with the claim position it starts after
	// (droverdriver.WithClaimAfter).
	jobClaimAfter = def(stmt[claimAfterParams]{name: "JobClaimAfter", cols: 16,
		args: func(p *claimAfterParams) []any { return append(p.claimParams.args(), p.Priority, p.RunAt, p.ID) }})
	jobFinishMove   = def(stmt[finishBatch]{name: "JobFinishMove", args: finishBatchArgs})
	jobFinishForget = def(stmt[batchRefuse]{name: "JobFinishForget",
		args: func(p *batchRefuse) []any { return []any{p.Batch, p.Refuse} }})
	jobFinishDelete = def(stmt[string]{name: "JobFinishDelete", args: oneArg[string]})
	jobFinishWait   = def(stmt[finishBatch]{name: "JobFinishWait", args: finishBatchArgs})
	// JobFinishFenced reads id, flow & FlowEnd, queue and ordering key;
	// JobFinishApplied, JobRescueMark, JobCancelMove and JobDiscardMove
	// return the state too (finishedCols).
	jobFinishFenced  = def(stmt[string]{name: "JobFinishFenced", cols: finishedCols - 1, args: oneArg[string]})
	jobFinishApplied = def(stmt[string]{name: "JobFinishApplied", cols: finishedCols, args: oneArg[string]})
	finishSavepoint  = def(stmt[struct{}]{name: "FinishSavepoint", args: noArgs})
	finishRollback   = def(stmt[struct{}]{name: "FinishRollback", args: noArgs})
	finishRelease    = def(stmt[struct{}]{name: "FinishRelease", args: noArgs})
	jobHeartbeat     = def(stmt[batchAt]{name: "JobHeartbeat", cols: 2, args: batchAtArgs})
	jobRescueMark    = def(stmt[rescueMarkParams]{name: "JobRescueMark", cols: finishedCols + 1,
		args: func(p *rescueMarkParams) []any { return []any{p.Now, p.Limit, p.At, p.AtText} }})
	jobRescueMove   = def(stmt[batchAt]{name: "JobRescueMove", args: batchAtArgs})
	jobRescueDelete = def(stmt[string]{name: "JobRescueDelete", args: oneArg[string]})
	jobPrune        = def(stmt[pruneParams]{name: "JobPrune", cols: 2,
		args: func(p *pruneParams) []any { return []any{p.Completed, p.Cancelled, p.Discarded, p.Limit} }})
	jobGet  = def(stmt[jobAt]{name: "JobGet", cols: 22, args: jobAtArgs})
	jobList = def(stmt[listParams]{name: "JobList", cols: 22,
		args: func(p *listParams) []any { return []any{p.Queue, p.Kind, p.AfterID, p.States, p.Now, p.Limit} }})
	jobCancelMove      = def(stmt[jobAt]{name: "JobCancelMove", cols: finishedCols, args: jobAtArgs})
	jobCancelDelete    = def(stmt[int64]{name: "JobCancelDelete", args: oneArg[int64]})
	jobCancelFlag      = def(stmt[int64]{name: "JobCancelFlag", args: oneArg[int64]})
	jobDiscardMove     = def(stmt[jobAt]{name: "JobDiscardMove", cols: finishedCols, args: jobAtArgs})
	jobRetryReschedule = def(stmt[jobAt]{name: "JobRetryReschedule", cols: 1, args: jobAtArgs})
	jobRetryRevive     = def(stmt[jobAt]{name: "JobRetryRevive", cols: 2, args: jobAtArgs})
	jobRetryRefused    = def(stmt[int64]{name: "JobRetryRefused", cols: 2, args: oneArg[int64]})
	jobRetryDelete     = def(stmt[int64]{name: "JobRetryDelete", args: oneArg[int64]})
	jobCountByState    = def(stmt[queueAt]{name: "JobCountByState", cols: 2,
		args: func(p *queueAt) []any { return []any{p.Queue, p.Now} }})
	queueStats    = def(stmt[int64]{name: "QueueStats", cols: 6, args: oneArg[int64]})
	finishedStats = def(stmt[timeRange]{name: "FinishedStats", cols: 7,
		args: func(p *timeRange) []any { return []any{p.Since, p.Until} }})
	leaseOwners = def(stmt[struct{}]{name: "LeaseOwners", cols: 3, args: noArgs})
	leaderElect = def(stmt[leaderElectParams]{name: "LeaderElect", cols: 1,
		args: func(p *leaderElectParams) []any { return []any{p.Name, p.ID, p.Expires, p.Now} }})
	leaderResign = def(stmt[leaderResignParams]{name: "LeaderResign",
		args: func(p *leaderResignParams) []any { return []any{p.Name, p.ID} }})
	schemaVersion   = def(stmt[struct{}]{name: "SchemaVersion", cols: 1, args: noArgs})
	migrationsTable = def(stmt[struct{}]{name: "MigrationsTable", args: noArgs})
	migrationRecord = def(stmt[migrationRecordParams]{name: "MigrationRecord",
		args: func(p *migrationRecordParams) []any { return []any{p.Version, p.Name, p.Now} }})

	// Workflows and batches (flow.go).
	jobFlowMark         = def(stmt[flowMarkParams]{name: "JobFlowMark", args: func(p *flowMarkParams) []any { return []any{p.Marks, p.BatchID} }})
	jobFlowMarkParents  = def(stmt[string]{name: "JobFlowMarkParents", cols: 1, args: oneArg[string]})
	jobFlowEndedParents = def(stmt[string]{name: "JobFlowEndedParents", cols: 2, args: oneArg[string]})
	jobFlowInsertDeps   = def(stmt[string]{name: "JobFlowInsertDeps", args: oneArg[string]})
	jobFlowBlockKeyed   = def(stmt[string]{name: "JobFlowBlockKeyed", args: oneArg[string]})
	batchCreate         = def(stmt[batchCreateParams]{name: "BatchCreate",
		args: func(p *batchCreateParams) []any { return []any{p.Total, p.Now} }})
	batchSetCallback = def(stmt[batchCallbackParams]{name: "BatchSetCallback",
		args: func(p *batchCallbackParams) []any { return []any{p.BatchID, p.CallbackID} }})
	jobFlowDoomed     = def(stmt[string]{name: "JobFlowDoomed", cols: 5, args: oneArg[string]})
	jobFlowCancelMove = def(stmt[flowCancelParams]{name: "JobFlowCancelMove",
		args: func(p *flowCancelParams) []any { return []any{p.Messages, p.Now, p.NowText} }})
	jobFlowCancelDelete = def(stmt[string]{name: "JobFlowCancelDelete", args: oneArg[string]})
	jobFlowRelease      = def(stmt[batchAt]{name: "JobFlowRelease", cols: 3, args: batchAtArgs})
	jobFlowCount        = def(stmt[batchAt]{name: "JobFlowCount", cols: 2, args: batchAtArgs})
	jobFlowCallback     = def(stmt[batchAt]{name: "JobFlowCallback", cols: 3, args: batchAtArgs})
	batchGet            = def(stmt[int64]{name: "BatchGet", cols: 10, args: oneArg[int64]})
	batchResults        = def(stmt[batchResultsParams]{name: "BatchResults", cols: 4,
		args: func(p *batchResultsParams) []any { return []any{p.BatchID, p.AfterID, p.Limit} }})
	jobResults        = def(stmt[string]{name: "JobResults", cols: 4, args: oneArg[string]})
	jobParentResults  = def(stmt[int64]{name: "JobParentResults", cols: 4, args: oneArg[int64]})
	jobsParentResults = def(stmt[string]{name: "JobsParentResults", cols: 5, args: oneArg[string]})

	// Topics (topics.go).
	topicCreate = def(stmt[topicCreateParams]{name: "TopicCreate",
		args: func(p *topicCreateParams) []any { return []any{p.Name, p.Lanes, p.RetentionMS, p.Now} }})
	topicList    = def(stmt[struct{}]{name: "TopicList", cols: 5, args: noArgs})
	topicPublish = def(stmt[topicPublishParams]{name: "TopicPublish",
		args: func(p *topicPublishParams) []any { return []any{p.Now, p.Messages} }})
	subscriptionCreate = def(stmt[subscriptionCreateParams]{name: "SubscriptionCreate",
		args: func(p *subscriptionCreateParams) []any { return []any{p.Topic, p.Name, p.MaxAttempts, p.Now} }})
	subscriptionLanes = def(stmt[subscriptionLanesParams]{name: "SubscriptionLanes",
		args: func(p *subscriptionLanesParams) []any { return []any{p.Topic, p.Name, p.Start} }})
	topicExists             = def(stmt[string]{name: "TopicExists", cols: 1, args: oneArg[string]})
	subscriptionDelete      = def(stmt[topicName]{name: "SubscriptionDelete", args: topicNameArgs})
	subscriptionDeleteLanes = def(stmt[topicName]{name: "SubscriptionDeleteLanes", args: topicNameArgs})
	topicLastID             = def(stmt[struct{}]{name: "TopicLastID", cols: 1, args: noArgs})
	topicLeaseCandidates    = def(stmt[topicCandidatesParams]{name: "TopicLeaseCandidates", cols: 4,
		args: func(p *topicCandidatesParams) []any { return []any{p.Topics, p.Subscriptions, p.Now, p.Max} }})
	topicLease = def(stmt[topicLeaseParams]{name: "TopicLease", cols: 6,
		args: func(p *topicLeaseParams) []any { return []any{p.Candidates, p.Owner, p.Token, p.Expires, p.Now} }})
	topicMaxAttempts = def(stmt[string]{name: "TopicMaxAttempts", cols: 3, args: oneArg[string]})
	topicRead        = def(stmt[topicReadParams]{name: "TopicRead", cols: 8,
		args: func(p *topicReadParams) []any { return []any{p.Ranges, p.Limit} }})
	topicAck = def(stmt[topicAckParams]{name: "TopicAck", cols: 3,
		args: func(p *topicAckParams) []any { return []any{p.Lanes, p.Now, p.Expires} }})
	topicExtend           = def(stmt[laneUpdateParams]{name: "TopicExtend", cols: 3, args: laneUpdateArgs})
	topicLag              = def(stmt[sql.NullString]{name: "TopicLag", cols: 5, args: oneArg[sql.NullString]})
	topicGenerations      = def(stmt[struct{}]{name: "TopicGenerations", cols: 5, args: noArgs})
	topicGenerationTopics = def(stmt[idRange]{name: "TopicGenerationTopics", cols: 3, args: idRangeArgs})
	topicGenerationCreate = def(stmt[genAt]{name: "TopicGenerationCreate", args: genAtArgs})
	topicSeal             = def(stmt[genAt]{name: "TopicSeal", args: genAtArgs})
	topicSequenceMove     = def(stmt[int64]{name: "TopicSequenceMove", args: oneArg[int64]})
	topicSequenceCreate   = def(stmt[int64]{name: "TopicSequenceCreate", args: oneArg[int64]})
	topicDropCount        = def(stmt[idRange]{name: "TopicDropCount", cols: 1, args: idRangeArgs})
	topicDropMark         = def(stmt[idRange]{name: "TopicDropMark", args: idRangeArgs})
	topicGenerationDrop   = def(stmt[idRange]{name: "TopicGenerationDrop", args: idRangeArgs})
	topicGenerationForget = def(stmt[int64]{name: "TopicGenerationForget", args: oneArg[int64]})

	// Periodic jobs (periodic.go).
	periodicTicks       = def(stmt[string]{name: "PeriodicTicks", cols: 2, args: oneArg[string]})
	periodicTicksRecord = def(stmt[string]{name: "PeriodicTicksRecord", args: oneArg[string]})
	periodicCreate      = def(stmt[periodicParams]{name: "PeriodicCreate", cols: periodicCols, args: periodicArgs})
	periodicUpdate      = def(stmt[periodicParams]{name: "PeriodicUpdate", cols: periodicCols, args: periodicArgs})
	periodicRegister    = def(stmt[periodicRegisterParams]{name: "PeriodicRegister",
		args: func(p *periodicRegisterParams) []any { return []any{p.Defs, p.Now} }})
	periodicList      = def(stmt[struct{}]{name: "PeriodicList", cols: periodicCols, args: noArgs})
	periodicSetPaused = def(stmt[periodicPausedParams]{name: "PeriodicSetPaused", cols: periodicCols,
		args: func(p *periodicPausedParams) []any { return []any{p.Name, p.Paused, p.Now} }})
	periodicDelete = def(stmt[string]{name: "PeriodicDelete", args: oneArg[string]})
)

func batchAtArgs(p *batchAt) []any { return []any{p.Batch, p.Now} }

func finishBatchArgs(p *finishBatch) []any { return []any{p.Batch, p.Now, p.Refuse} }

func jobAtArgs(p *jobAt) []any { return []any{p.ID, p.Now} }

func topicNameArgs(p *topicName) []any { return []any{p.Topic, p.Name} }

func laneUpdateArgs(p *laneUpdateParams) []any { return []any{p.Lanes, p.At} }

func idRangeArgs(p *idRange) []any { return []any{p.From, p.To} }

func genAtArgs(p *genAt) []any { return []any{p.Gen, p.Now} }
