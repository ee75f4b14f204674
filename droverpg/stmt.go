package droverpg

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverdriver/sqlstmt"
)

// stmt is one statement of queries.sql with typed parameters: P holds
// them and args lists them in the statement's $n order, so that a call
// site names each argument instead of counting positions, and the compiler
// checks their types. cols is the number of result columns the code that
// reads its rows scans. TestStatementTypes checks, against PostgreSQL's
// description of every prepared statement, that args gives as many
// parameters as the statement has, of types pgx can send as the declared
// ones, and that it returns cols columns; and that queries.sql and this
// table name the same statements, each once.
//
// This is the guarantee sqlc's generated code would give (docs/design/
// engine.md, "Typed statements"), with the SQL and the batched,
// replanned execution left as they are.
type stmt[P any] struct {
	name string
	args func(*P) []any
	cols int
	// replan runs the statement unnamed, planned afresh each time (see
	// replan in executor.go). Queued in a pgx.Batch it runs as the
	// connection's default mode says.
	replan bool
}

// statements are all the typed statements, in declaration order: def adds
// each one.
var statements sqlstmt.Set

// def declares a statement.
func def[P any](s stmt[P]) *stmt[P] {
	sqlstmt.Add(&statements, s.name, s.cols, s.args)
	return &s
}

// bound is a statement with its arguments (sqlstmt.Bound), which a
// batch queues or a pool queries.
type bound sqlstmt.Bound

// bind returns s with the arguments p.
func (s *stmt[P]) bind(p P) bound {
	args := s.args(&p)
	if s.replan {
		args = append([]any{replan}, args...)
	}
	return bound{s.name, args}
}

// queue adds b to batch, without the replan mode a replanned statement's
// arguments start with: a batch plans its statements as the connection's
// default mode says.
func (b bound) queue(batch *pgx.Batch, q map[string]string) {
	args := b.Args
	if len(args) > 0 && args[0] == any(replan) {
		args = args[1:]
	}
	batch.Queue(q[b.Name], args...)
}

func (b bound) query(ctx context.Context, db dbtx, q map[string]string) (pgx.Rows, error) {
	return db.Query(ctx, q[b.Name], b.Args...)
}

func (s *stmt[P]) query(ctx context.Context, db dbtx, q map[string]string, p P) (pgx.Rows, error) {
	return s.bind(p).query(ctx, db, q)
}

func (s *stmt[P]) queryRow(ctx context.Context, db dbtx, q map[string]string, p P) pgx.Row {
	b := s.bind(p)
	return db.QueryRow(ctx, q[b.Name], b.Args...)
}

func (s *stmt[P]) exec(ctx context.Context, db dbtx, q map[string]string, p P) (pgconn.CommandTag, error) {
	b := s.bind(p)
	return db.Exec(ctx, q[b.Name], b.Args...)
}

// queue adds s with the arguments p to b.
func (s *stmt[P]) queue(b *pgx.Batch, q map[string]string, p P) {
	b.Queue(q[s.name], s.args(&p)...)
}

// Parameters of the statements that take more than one. Field order is
// $n order.

type notifyParams struct {
	Channel  string
	Payloads []string
}

type claimParams struct {
	Queue   string
	Max     int
	Owner   string
	LeaseMS float64
	Limited bool
	Token   [16]byte
	// Now is the claimer's clock, nil for the store's.
	Now *time.Time
	// slots, not a parameter, makes the claim one for several claimers
	// (JobClaimSlots), whose statements take them.
	slots []droverdriver.ClaimSlot
}

func (p *claimParams) args() []any {
	return []any{p.Queue, p.Max, p.Owner, p.LeaseMS, p.Limited, p.Token, p.Now}
}

type claimAfterParams struct {
	claimParams
	Priority int16
	RunAt    time.Time
	ID       int64
}

// claimKindsParams are the parameters of JobClaimKinds and
// JobClaimExcept: Kinds are the kinds to claim, or to leave.
type claimKindsParams struct {
	claimParams
	Kinds []string
}

func (p *claimKindsParams) args() []any { return append(p.claimParams.args(), p.Kinds) }

type claimKindsAfterParams struct {
	claimAfterParams
	Kinds []string
}

func (p *claimKindsAfterParams) args() []any {
	return append(p.claimParams.args(), p.Priority, p.RunAt, p.ID, p.Kinds)
}

// claimRoutedParams are JobClaimRouted's and JobClaimStrict's, after
// JobClaim's: the kinds (nil: every kind), the kinds paused in the queue
// (never nil: empty for none), the worker's type, name and
// labels (nil: none; Labels nil for a worker that said nothing of itself,
// which matches plain jobs only), and, for JobClaimRouted only, the claim
// position to start past (nil: the head) and the route keys it reads.
type claimRoutedParams struct {
	claimParams
	Kinds    []string
	Except   []string
	Type     *string
	Name     *string
	Labels   *string
	Priority *int16
	RunAt    *time.Time
	ID       *int64
	Keys     []string
}

func (p *claimRoutedParams) args() []any {
	return append(p.claimParams.args(), p.Kinds, p.Except, p.Type, p.Name, p.Labels, p.Priority, p.RunAt, p.ID, p.Keys)
}

// claimSlotsParams are the parameters of the claims for several
// claimers (JobClaimRoutedSlots, JobClaimStrictSlots): those of the claim
// they combine, the worker's name among them replaced by the slots'
// names, and then the slots' owners and tokens.
type claimSlotsParams struct {
	claimRoutedParams
	Names  []string
	Owners []string
	Tokens [][16]byte
}

// claimStrictSlotsParams are JobClaimStrictSlots': the claim's, and each
// slot's owner, token, type, name and labels (a JSON array of objects).
type claimStrictSlotsParams struct {
	Queue        string
	Max          int
	Owners       []string
	LeaseMS      float64
	Limited      bool
	Tokens       [][16]byte
	Now          *time.Time
	Kinds        []string
	Except       []string
	Types, Names []*string
	Labels       string
}

func (p *claimSlotsParams) args(routed []any) []any {
	routed[10] = p.Names // $11, the worker's name in the claim of one
	return append(routed, p.Owners, p.Tokens)
}

// settingsSetParams are QueueSettingsSet's: a nil Paused or Strict keeps
// the stored value; SetLimits says whether the three limits replace the
// stored ones.
type settingsSetParams struct {
	Queue      string
	Paused     *bool
	SetLimits  bool
	MaxRunning int
	Rate       int
	PeriodMS   int64
	Strict     *int
	// PauseKinds and ResumeKinds are added to and taken out of the
	// paused kinds.
	PauseKinds, ResumeKinds []string
}

// workerSeenParams are WorkerSeen's parallel arrays, one worker each:
// labels, queues and kinds as JSON, kinds nil for a worker that named
// none.
type workerSeenParams struct {
	Names, Types, Labels, Queues, Owners, Sources []string
	Plains                                        []bool
	Kinds                                         []*string
}

// kindsWaitingParams are KindsWaiting's: the queue and how many of its
// jobs to read.
type kindsWaitingParams struct {
	Queue string
	Limit int
}

// workerOwner is a worker's name and the owner that registered it.
type workerOwner struct {
	Name, Owner string
}

type routeAbsentParams struct {
	Now   time.Time
	Limit int
}

// queueCount is a queue and a number of its jobs (QueueLimitRoom's most,
// QueueLimitSpend's claimed).
type queueCount struct {
	Queue string
	N     int
}

// spendParams are QueueLimitSpend's: the queue, the jobs its claim took
// and the start it gave them, nil for a claimer's own clock.
type spendParams struct {
	Queue string
	N     int
	At    *time.Time
}

type finishParams struct {
	IDs     []int64
	Results string // JSON: each result as an array, by job ID (finishArgs)
	Refuse  int32  // the stored flow bits that turn a job away
}

type completeParams struct {
	IDs     []int64
	Keys    []string // "id:attempt"
	Outputs *string  // JSON by job ID, or NULL
	Refuse  int32    // as finishParams.Refuse
	Forget  bool
	Tokens  []pgtype.UUID
}

type heartbeatParams struct {
	IDs     []int64
	Keys    []string // "id:attempt"
	LeaseMS float64
	Tokens  []pgtype.UUID
}

type rescueParams struct {
	Now   time.Time
	Limit int
}

type pruneParams struct {
	Completed, Cancelled, Discarded *time.Time
	Limit                           int
	Latest                          *time.Time
}

// searchParams are the parameters every search statement takes (JobList,
// JobListDesc, JobMatchCount; see search_waiting in queries.sql): the
// filter, now, the window's exclusive bounds, a limit and the tables to
// read. Nil times and JSON are NULL, bounding or matching nothing; the
// lists are never nil, since a NULL list would match no job.
type searchParams struct {
	States                     []string
	Queue, Kind                string
	Tags                       []string
	Args, Metadata             []byte
	CreatedFrom, CreatedTo     *time.Time
	ScheduledFrom, ScheduledTo *time.Time
	AttemptedFrom, AttemptedTo *time.Time
	FinishedFrom, FinishedTo   *time.Time
	Now                        time.Time
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
// bounds, the tables to read, and the filter's queue, kind and states
// (droverdriver.ListParams.WaitingStates, FinishedStates).
type idNextParams struct {
	Lo, Hi                  int64
	Waiting, Finished       bool
	Queue, Kind             string
	Due, Scheduled, Retried bool
	Now                     time.Time
	Others, FinishedStates  []string
	// Narrow says the filter names a state, queue or kind.
	Narrow bool
	// End is the far end of (Lo, Hi) in the search's order: Hi
	// ascending, Lo descending.
	End int64
}

func idNextArgs(p *idNextParams) []any {
	return []any{p.Lo, p.Hi, p.Waiting, p.Finished, p.Queue, p.Kind, p.Due, p.Scheduled, p.Retried, p.Now,
		p.Others, p.FinishedStates, p.Narrow, p.End}
}

type batchListParams struct {
	BeforeID int64
	Limit    int
}

// jobsAt are the jobs a statement changes (JobDiscard, JobRetry) and the
// time it runs at.
type jobsAt struct {
	IDs []int64
	Now time.Time
}

// cancelParams are JobCancel's: Flag asks running jobs to stop.
type cancelParams struct {
	IDs  []int64
	Now  time.Time
	Flag bool
}

type timeRange struct {
	Since, Until time.Time
}

type leaderElectParams struct {
	Name  string
	ID    string
	TTLMS float64
}

type leaderResignParams struct {
	Name string
	ID   string
}

// keyList is pairs of a queue and an ordering key, as parallel arrays.
type keyList struct {
	Queues []string
	Keys   []string
}

type keyPromoteParams struct {
	keyList
	Retried []int64
}

type batchCallbackParams struct {
	BatchID    int64
	CallbackID int64
}

type flowDepsParams struct {
	Parents  []int64
	Children []int64
}

type flowInsertParams struct {
	jobColumns
	States  []string
	Waits   []int32
	Flows   []int16
	Batches []*int64
	Keys    []*string
	Limits  []int32
	Routes  routeColumns
}

type keyedInsertParams struct {
	jobColumns
	Keys    []*string
	Limits  []int32
	Uniques []*string
	Table   string
	Finals  []int16
	ByQueue []bool
	Routes  routeColumns
}

type batchResultsParams struct {
	BatchID int64
	AfterID int64
	Limit   int
}

// finishedCols are the columns of the statements that end jobs
// (readFinished): id, state, flow & FlowEnd, queue, ordering key;
// completedCols JobComplete's (readCompleted): flow & FlowEnd, queue,
// ordering key and the IDs of the jobs that share them.
const finishedCols, completedCols = 5, 4

// periodicCols are the columns of a stored periodic definition
// (scanPeriodic).
const periodicCols = 13

// periodicParams are PeriodicCreate's and PeriodicUpdate's; Tags are
// comma-joined (tags hold no commas) and Args JSON text.
type periodicParams struct {
	Name        string
	Schedule    string
	Kind        string
	Args        string
	Queue       string
	Priority    int
	MaxAttempts int
	Tags        string
	Now         time.Time
}

func periodicArgs(p *periodicParams) []any {
	return []any{p.Name, p.Schedule, p.Kind, p.Args, p.Queue, p.Priority, p.MaxAttempts, p.Tags, p.Now}
}

// periodicRegisterParams are PeriodicRegister's: periodicParams as
// parallel arrays, and one time for all.
type periodicRegisterParams struct {
	Names, Schedules, Kinds, Args, Queues []string
	Priorities                            []int16
	MaxAttempts                           []int32
	Tags                                  []string
	Now                                   time.Time
}

type periodicPausedParams struct {
	Name   string
	Paused bool
	Now    time.Time
}

type periodicTicksRecordParams struct {
	Names []string
	Ticks []time.Time
}

type migrationRecordParams struct {
	Version int
	Name    string
}

// idRange is the message IDs [From, To) of a generation.
type idRange struct {
	From, To int64
}

func idRangeArgs(p *idRange) []any { return []any{p.From, p.To} }

type topicPurgeParams struct {
	Topic    string
	From, To int64
	Lane     int
	Xid, ID  int64
	Limit    int
}

type topicCreateParams struct {
	Name        string
	Lanes       int
	RetentionMS int64
}

type subscriptionCreateParams struct {
	Topic, Name string
	MaxAttempts int
	Start       int
}

// topicName is a topic and a name within it (a subscription).
type topicName struct {
	Topic, Name string
}

type topicLeaseParams struct {
	Topics        []string
	Subscriptions []string
	Limits        []int32
	Owner         string
	Token         [16]byte
	LeaseMS       float64
	Max           int
	WaitMS        float64
}

type topicPublishParams struct {
	Topics   []string
	Lanes    []int32
	Keys     []*string
	Payloads [][]byte
	Metadata []string
}

// topicTailParams are TopicTail's: the topic, the position of each lane
// to read before, and how many messages of each.
type topicTailParams struct {
	Topic string
	Xids  []int64
	IDs   []int64
	Limit int
}

type topicReadParams struct {
	Topics   []string
	Lanes    []int32
	Xids     []int64
	IDs      []int64
	ToXids   []int64
	ToIDs    []int64
	Limits   []int32
	MaxBytes int64
}

// laneArrays are lanes of subscriptions as the parallel arrays TopicAck,
// TopicExtend and TopicRelease take (laneArgs).
type laneArrays struct {
	Topics []string
	Subs   []string
	Lanes  []int32
	Tokens [][16]byte
	Xids   []int64
	IDs    []int64
	Counts []int32
	Keeps  []bool
	Limits []int32
}

// topicRewindParams are TopicRewind's: the subscription and the publish
// time to rewind it to (nil: the earliest message kept).
type topicRewindParams struct {
	Topic, Name string
	Since       *time.Time
}

// topicLane names one lane of a subscription.
type topicLane struct {
	Topic, Name string
	Lane        int
}

type topicAckParams struct {
	laneArrays
	LeaseMS float64
}

type topicExtendParams struct {
	laneArrays
	LeaseMS float64
}

// The statements of queries.sql, in its order.
var (
	jobInsertMany = def(stmt[jobColumns]{name: "JobInsertMany", cols: 1,
		args: func(p *jobColumns) []any { return p.params() }})
	jobInsertKeyed = def(stmt[keyedInsertParams]{name: "JobInsertKeyed", cols: 1,
		args: func(p *keyedInsertParams) []any {
			return p.params(p.Keys, p.Limits, p.Uniques, p.Table, p.Finals, p.ByQueue, p.Routes.routes, p.Routes.routings)
		}})
	// KeyLock's and JobFlowLock's rows, and Notify's, are of no interest:
	// they run with Exec.
	keyLock = def(stmt[keyList]{name: "KeyLock", cols: 1,
		args: func(p *keyList) []any { return []any{p.Queues, p.Keys} }})
	keyPromote = def(stmt[keyPromoteParams]{name: "KeyPromote", cols: 2,
		args: func(p *keyPromoteParams) []any { return []any{p.Queues, p.Keys, p.Retried} }})
	keyRateSet = def(stmt[keyRates]{name: "KeyRateSet",
		args: func(p *keyRates) []any { return p.params() }})
	keyRateIdle  = def(stmt[int]{name: "KeyRateIdle", cols: 2, args: sqlstmt.OneArg[int]})
	keyRatePrune = def(stmt[keyList]{name: "KeyRatePrune",
		args: func(p *keyList) []any { return []any{p.Queues, p.Keys} }})
	keyBlocked    = def(stmt[int]{name: "KeyBlocked", cols: 2, args: sqlstmt.OneArg[int]})
	uniqueRelease = def(stmt[[]int64]{name: "UniqueRelease", args: sqlstmt.OneArg[[]int64]})
	uniqueRetake  = def(stmt[[]int64]{name: "UniqueRetake", cols: 2, args: sqlstmt.OneArg[[]int64]})
	notifyStmt    = def(stmt[notifyParams]{name: "Notify", cols: 1,
		args: func(p *notifyParams) []any { return []any{p.Channel, p.Payloads} }})
	queuesDue = def(stmt[queuesDueParams]{name: "QueuesDue", cols: 1,
		args: func(p *queuesDueParams) []any { return []any{p.Queues, p.Now} }})
	jobClaim = def(stmt[claimParams]{name: "JobClaim", cols: 19, replan: true,
		args: (*claimParams).args})
	// jobClaimAfter is JobClaim with the claim position it starts after
	// (sqlfile.WithClaimAfter).
	jobClaimAfter = def(stmt[claimAfterParams]{name: "JobClaimAfter", cols: 19, replan: true,
		args: func(p *claimAfterParams) []any { return append(p.claimParams.args(), p.Priority, p.RunAt, p.ID) }})
	// jobClaimKinds and jobClaimKindsAfter are JobClaim and
	// JobClaimAfter for the kinds the claimer can run
	// (sqlfile.WithClaimKinds, ClaimParams.Kinds).
	jobClaimKinds = def(stmt[claimKindsParams]{name: "JobClaimKinds", cols: 19, replan: true,
		args: (*claimKindsParams).args})
	jobClaimKindsAfter = def(stmt[claimKindsAfterParams]{name: "JobClaimKindsAfter", cols: 19, replan: true,
		args: (*claimKindsAfterParams).args})
	// jobClaimExcept and jobClaimExceptAfter are JobClaim and
	// JobClaimAfter leaving the kinds paused in the queue
	// (sqlfile.WithClaimExceptKinds, ClaimParams.ExceptKinds).
	jobClaimExcept = def(stmt[claimKindsParams]{name: "JobClaimExcept", cols: 19, replan: true,
		args: (*claimKindsParams).args})
	jobClaimExceptAfter = def(stmt[claimKindsAfterParams]{name: "JobClaimExceptAfter", cols: 19, replan: true,
		args: (*claimKindsAfterParams).args})
	// jobClaimRouted and jobClaimStrict are the claims of a worker that
	// says what it is and of a queue in strict order (routing.go).
	jobClaimRouted = def(stmt[claimRoutedParams]{name: "JobClaimRouted", cols: 19, replan: true,
		args: (*claimRoutedParams).args})
	// jobClaimStrict runs in a batch (routing.go), after
	// StrictClaimSettings, which has it planned afresh like a replanned
	// statement.
	strictClaimSettings = def(stmt[struct{}]{name: "StrictClaimSettings", cols: 2, args: sqlstmt.NoArgs})
	jobClaimStrict      = def(stmt[claimRoutedParams]{name: "JobClaimStrict", cols: 19, replan: true,
		args: func(p *claimRoutedParams) []any { return p.args()[:12] }})
	// jobClaimRoutedSlots and jobClaimStrictSlots are the two claims for
	// several claimers at once (routing.go, withClaimSlots): the columns
	// of JobClaim and the lease owner, lease token and routing of each
	// row.
	jobClaimRoutedSlots = def(stmt[claimSlotsParams]{name: "JobClaimRoutedSlots", cols: 22, replan: true,
		args: func(p *claimSlotsParams) []any { return p.args(p.claimRoutedParams.args()) }})
	jobClaimStrictSlots = def(stmt[claimStrictSlotsParams]{name: "JobClaimStrictSlots", cols: 22, replan: true,
		args: func(p *claimStrictSlotsParams) []any {
			return []any{p.Queue, p.Max, p.Owners, p.LeaseMS, p.Limited, p.Tokens, p.Now, p.Kinds, p.Except, p.Types, p.Names, p.Labels}
		}})
	queueLimitTake = def(stmt[string]{name: "QueueLimitTake", args: sqlstmt.OneArg[string]})
	queueLimitRoom = def(stmt[queueCount]{name: "QueueLimitRoom", cols: 3,
		args: func(p *queueCount) []any { return []any{p.Queue, p.N} }})
	queueLimitSpend = def(stmt[spendParams]{name: "QueueLimitSpend",
		args: func(p *spendParams) []any { return []any{p.Queue, p.N, p.At} }})
	queueSettingsGet  = def(stmt[string]{name: "QueueSettingsGet", cols: 8, args: sqlstmt.OneArg[string]})
	queueKnown        = def(stmt[string]{name: "QueueKnown", cols: 1, args: sqlstmt.OneArg[string]})
	queueSettingsList = def(stmt[struct{}]{name: "QueueSettingsList", cols: 8, args: sqlstmt.NoArgs})
	queueSettingsSet  = def(stmt[settingsSetParams]{name: "QueueSettingsSet", cols: 8,
		args: func(p *settingsSetParams) []any {
			return []any{p.Queue, p.Paused, p.SetLimits, p.MaxRunning, p.Rate, p.PeriodMS, p.Strict, p.PauseKinds, p.ResumeKinds}
		}})
	// JobFinish, JobComplete, JobRescue, JobCancel and JobDiscard return
	// the jobs they end or put back to wait (readFinished, readCompleted).
	jobFinish = def(stmt[finishParams]{name: "JobFinish", cols: finishedCols, replan: true,
		args: func(p *finishParams) []any { return []any{p.IDs, p.Results, p.Refuse} }})
	jobComplete = def(stmt[completeParams]{name: "JobComplete", cols: completedCols, replan: true,
		args: func(p *completeParams) []any { return []any{p.IDs, p.Keys, p.Outputs, p.Refuse, p.Forget, p.Tokens} }})
	jobHeartbeat = def(stmt[heartbeatParams]{name: "JobHeartbeat", cols: 2, replan: true,
		args: func(p *heartbeatParams) []any { return []any{p.IDs, p.Keys, p.LeaseMS, p.Tokens} }})
	jobRescue = def(stmt[rescueParams]{name: "JobRescue", cols: finishedCols,
		args: func(p *rescueParams) []any { return []any{p.Now, p.Limit} }})
	jobPrune = def(stmt[pruneParams]{name: "JobPrune", cols: 1,
		args: func(p *pruneParams) []any { return []any{p.Completed, p.Cancelled, p.Discarded, p.Limit, p.Latest} }})
	jobGet = def(stmt[int64]{name: "JobGet", cols: 23, args: sqlstmt.OneArg[int64]})
	// jobInserted's parameter is the quoted name of the jobs table.
	jobInserted          = def(stmt[string]{name: "JobInserted", cols: 23, args: sqlstmt.OneArg[string]})
	jobList              = def(stmt[searchParams]{name: "JobList", cols: 23, args: searchArgs})
	jobListDesc          = def(stmt[searchParams]{name: "JobListDesc", cols: 23, args: searchArgs})
	jobMatchCount        = def(stmt[searchParams]{name: "JobMatchCount", cols: 4, args: searchArgs})
	jobMatchCountByState = def(stmt[searchParams]{name: "JobMatchCountByState", cols: 4, args: searchArgs})
	// JobIDNext and JobIDPrev are planned with their values: which paths
	// are cheap depends on which filters are given and on how many jobs
	// they match.
	jobIDNext   = def(stmt[idNextParams]{name: "JobIDNext", cols: 1, replan: true, args: idNextArgs})
	jobIDPrev   = def(stmt[idNextParams]{name: "JobIDPrev", cols: 1, replan: true, args: idNextArgs})
	jobIDBounds = def(stmt[struct{}]{name: "JobIDBounds", cols: 4, args: sqlstmt.NoArgs})
	jobCancel   = def(stmt[cancelParams]{name: "JobCancel", cols: finishedCols,
		args: func(p *cancelParams) []any { return []any{p.IDs, p.Now, p.Flag} }})
	jobDiscard = def(stmt[jobsAt]{name: "JobDiscard", cols: finishedCols,
		args: func(p *jobsAt) []any { return []any{p.IDs, p.Now} }})
	jobRetry = def(stmt[jobsAt]{name: "JobRetry", cols: 4,
		args: func(p *jobsAt) []any { return []any{p.IDs, p.Now} }})
	jobDelete       = def(stmt[[]int64]{name: "JobDelete", cols: 1, args: sqlstmt.OneArg[[]int64]})
	jobCountByState = def(stmt[string]{name: "JobCountByState", cols: 2, args: sqlstmt.OneArg[string]})
	queueStats      = def(stmt[time.Time]{name: "QueueStats", cols: 6, args: sqlstmt.OneArg[time.Time]})
	finishedStats   = def(stmt[timeRange]{name: "FinishedStats", cols: 7,
		args: func(p *timeRange) []any { return []any{p.Since, p.Until} }})
	leaseOwners = def(stmt[struct{}]{name: "LeaseOwners", cols: 3, args: sqlstmt.NoArgs})
	leaderElect = def(stmt[leaderElectParams]{name: "LeaderElect", cols: 1,
		args: func(p *leaderElectParams) []any { return []any{p.Name, p.ID, p.TTLMS} }})
	leaderResign = def(stmt[leaderResignParams]{name: "LeaderResign",
		args: func(p *leaderResignParams) []any { return []any{p.Name, p.ID} }})
	schemaVersion   = def(stmt[struct{}]{name: "SchemaVersion", cols: 1, args: sqlstmt.NoArgs})
	migrationsTable = def(stmt[struct{}]{name: "MigrationsTable", args: sqlstmt.NoArgs})
	migrationRecord = def(stmt[migrationRecordParams]{name: "MigrationRecord",
		args: func(p *migrationRecordParams) []any { return []any{p.Version, p.Name} }})

	// Workflows and batches (flow.go).
	jobFlowMarkParents  = def(stmt[[]int64]{name: "JobFlowMarkParents", cols: 1, args: sqlstmt.OneArg[[]int64]})
	jobFlowEndedParents = def(stmt[[]int64]{name: "JobFlowEndedParents", cols: 2, args: sqlstmt.OneArg[[]int64]})
	jobFlowInsertDeps   = def(stmt[flowDepsParams]{name: "JobFlowInsertDeps",
		args: func(p *flowDepsParams) []any { return []any{p.Parents, p.Children} }})
	noJIT         = def(stmt[struct{}]{name: "NoJIT", cols: 1, args: sqlstmt.NoArgs})
	customPlans   = def(stmt[struct{}]{name: "CustomPlans", cols: 1, args: sqlstmt.NoArgs})
	jobFlowLock   = def(stmt[[]int64]{name: "JobFlowLock", cols: 2, args: sqlstmt.OneArg[[]int64]})
	jobFlowSettle = def(stmt[[]int64]{name: "JobFlowSettle", cols: 3, args: sqlstmt.OneArg[[]int64]})
	// jobInsertFlow is replanned: its keyed jobs look up their keys' jobs,
	// which a generic plan priced on an empty hot table reads by scanning
	// it whole (CustomPlans in queries.sql says more).
	jobInsertFlow = def(stmt[flowInsertParams]{name: "JobInsertFlow", cols: 1, replan: true,
		args: func(p *flowInsertParams) []any {
			return p.params(p.States, p.Waits, p.Flows, p.Batches, p.Keys, p.Limits, p.Routes.routes, p.Routes.routings)
		}})
	batchCreate      = def(stmt[int]{name: "BatchCreate", cols: 1, args: sqlstmt.OneArg[int]})
	batchSetCallback = def(stmt[batchCallbackParams]{name: "BatchSetCallback",
		args: func(p *batchCallbackParams) []any { return []any{p.BatchID, p.CallbackID} }})
	batchGet     = def(stmt[int64]{name: "BatchGet", cols: 10, args: sqlstmt.OneArg[int64]})
	batchResults = def(stmt[batchResultsParams]{name: "BatchResults", cols: 4,
		args: func(p *batchResultsParams) []any { return []any{p.BatchID, p.AfterID, p.Limit} }})
	jobResults       = def(stmt[[]int64]{name: "JobResults", cols: 4, args: sqlstmt.OneArg[[]int64]})
	jobParentResults = def(stmt[int64]{name: "JobParentResults", cols: 4, args: sqlstmt.OneArg[int64]})
	jobDeps          = def(stmt[[]int64]{name: "JobDeps", cols: 2, args: sqlstmt.OneArg[[]int64]})
	batchList        = def(stmt[batchListParams]{name: "BatchList", cols: 10,
		args: func(p *batchListParams) []any { return []any{p.BeforeID, p.Limit} }})
	jobsParentResults = def(stmt[[]int64]{name: "JobsParentResults", cols: 5, args: sqlstmt.OneArg[[]int64]})

	// Topics (topics.go).
	topicCreate = def(stmt[topicCreateParams]{name: "TopicCreate", cols: 5,
		args: func(p *topicCreateParams) []any { return []any{p.Name, p.Lanes, p.RetentionMS} }})
	topicList    = def(stmt[struct{}]{name: "TopicList", cols: 5, args: sqlstmt.NoArgs})
	topicPublish = def(stmt[topicPublishParams]{name: "TopicPublish", cols: 1,
		args: func(p *topicPublishParams) []any { return []any{p.Topics, p.Lanes, p.Keys, p.Payloads, p.Metadata} }})
	subscriptionCreate = def(stmt[subscriptionCreateParams]{name: "SubscriptionCreate", cols: 1,
		args: func(p *subscriptionCreateParams) []any { return []any{p.Topic, p.Name, p.MaxAttempts, p.Start} }})
	topicExists        = def(stmt[string]{name: "TopicExists", cols: 1, args: sqlstmt.OneArg[string]})
	topicDelete        = def(stmt[string]{name: "TopicDelete", cols: 1, args: sqlstmt.OneArg[string]})
	subscriptionDelete = def(stmt[topicName]{name: "SubscriptionDelete",
		args: func(p *topicName) []any { return []any{p.Topic, p.Name} }})
	topicLease = def(stmt[topicLeaseParams]{name: "TopicLease", cols: 11,
		args: func(p *topicLeaseParams) []any {
			return []any{p.Topics, p.Subscriptions, p.Limits, p.Owner, p.Token, p.LeaseMS, p.Max, p.WaitMS}
		}})
	topicTail = def(stmt[topicTailParams]{name: "TopicTail", cols: 8,
		args: func(p *topicTailParams) []any { return []any{p.Topic, p.Xids, p.IDs, p.Limit} }})
	topicRead = def(stmt[topicReadParams]{name: "TopicRead", cols: 8,
		args: func(p *topicReadParams) []any {
			return []any{p.Topics, p.Lanes, p.Xids, p.IDs, p.ToXids, p.ToIDs, p.Limits}
		}})
	topicReadBudget = def(stmt[topicReadParams]{name: "TopicReadBudget", cols: 8,
		args: func(p *topicReadParams) []any {
			return []any{p.Topics, p.Lanes, p.Xids, p.IDs, p.ToXids, p.ToIDs, p.Limits, p.MaxBytes}
		}})
	topicAck = def(stmt[topicAckParams]{name: "TopicAck", cols: 2,
		args: func(p *topicAckParams) []any {
			return []any{p.Topics, p.Subs, p.Lanes, p.Tokens, p.Xids, p.IDs, p.Counts, p.Keeps, p.Limits, p.LeaseMS}
		}})
	topicExtend = def(stmt[topicExtendParams]{name: "TopicExtend", cols: 1,
		args: func(p *topicExtendParams) []any { return []any{p.Topics, p.Subs, p.Lanes, p.Tokens, p.LeaseMS} }})
	topicRelease = def(stmt[laneArrays]{name: "TopicRelease", cols: 1,
		args: func(p *laneArrays) []any { return []any{p.Topics, p.Subs, p.Lanes, p.Tokens} }})
	topicLanes = def(stmt[topicName]{name: "TopicLanes", cols: 7,
		args: func(p *topicName) []any { return []any{p.Topic, p.Name} }})
	topicLaneExpire = def(stmt[topicLane]{name: "TopicLaneExpire", cols: 1,
		args: func(p *topicLane) []any { return []any{p.Topic, p.Name, p.Lane} }})
	topicRewind = def(stmt[topicRewindParams]{name: "TopicRewind", cols: 6,
		args: func(p *topicRewindParams) []any { return []any{p.Topic, p.Name, p.Since} }})
	subscriptionGet = def(stmt[topicName]{name: "SubscriptionGet", cols: 5,
		args: func(p *topicName) []any { return []any{p.Topic, p.Name} }})
	topicReceiptKey       = def(stmt[[]byte]{name: "TopicReceiptKey", cols: 1, args: sqlstmt.OneArg[[]byte]})
	topicLag              = def(stmt[[]string]{name: "TopicLag", cols: 5, args: sqlstmt.OneArg[[]string]})
	topicSequence         = def(stmt[int]{name: "TopicSequence", cols: 1, args: sqlstmt.OneArg[int]})
	topicPublishers       = def(stmt[struct{}]{name: "TopicPublishers", cols: 6, args: sqlstmt.NoArgs})
	topicGenerations      = def(stmt[struct{}]{name: "TopicGenerations", cols: 8, args: sqlstmt.NoArgs})
	topicGenerationTopics = def(stmt[idRange]{name: "TopicGenerationTopics", cols: 3, args: idRangeArgs})
	topicGenerationLock   = def(stmt[idRange]{name: "TopicGenerationLock", cols: 1, args: idRangeArgs})
	topicDropMark         = def(stmt[int64]{name: "TopicDropMark", args: sqlstmt.OneArg[int64]})
	topicGenerationCreate = def(stmt[int64]{name: "TopicGenerationCreate", cols: 1, args: sqlstmt.OneArg[int64]})
	topicSequenceMove     = def(stmt[int64]{name: "TopicSequenceMove", cols: 1, args: sqlstmt.OneArg[int64]})
	topicSeal             = def(stmt[int64]{name: "TopicSeal", args: sqlstmt.OneArg[int64]})
	topicPartitionState   = def(stmt[int64]{name: "TopicPartitionState", cols: 1, args: sqlstmt.OneArg[int64]})
	topicGenerationDrop   = def(stmt[int64]{name: "TopicGenerationDrop", cols: 1, args: sqlstmt.OneArg[int64]})
	topicPurge            = def(stmt[topicPurgeParams]{name: "TopicPurge", cols: 5,
		args: func(p *topicPurgeParams) []any {
			return []any{p.Topic, p.From, p.To, p.Lane, p.Xid, p.ID, p.Limit}
		}})

	// Periodic jobs (periodic.go).
	periodicTicks       = def(stmt[[]string]{name: "PeriodicTicks", cols: 2, args: sqlstmt.OneArg[[]string]})
	periodicTicksRecord = def(stmt[periodicTicksRecordParams]{name: "PeriodicTicksRecord",
		args: func(p *periodicTicksRecordParams) []any { return []any{p.Names, p.Ticks} }})
	periodicCreate   = def(stmt[periodicParams]{name: "PeriodicCreate", cols: periodicCols, args: periodicArgs})
	periodicUpdate   = def(stmt[periodicParams]{name: "PeriodicUpdate", cols: periodicCols, args: periodicArgs})
	periodicRegister = def(stmt[periodicRegisterParams]{name: "PeriodicRegister",
		args: func(p *periodicRegisterParams) []any {
			return []any{p.Names, p.Schedules, p.Kinds, p.Args, p.Queues, p.Priorities, p.MaxAttempts, p.Tags, p.Now}
		}})
	periodicList      = def(stmt[struct{}]{name: "PeriodicList", cols: periodicCols, args: sqlstmt.NoArgs})
	periodicSetPaused = def(stmt[periodicPausedParams]{name: "PeriodicSetPaused", cols: periodicCols,
		args: func(p *periodicPausedParams) []any { return []any{p.Name, p.Paused, p.Now} }})
	periodicDelete = def(stmt[string]{name: "PeriodicDelete", args: sqlstmt.OneArg[string]})

	// Routing and the worker registry (routing.go).
	workerSeen = def(stmt[workerSeenParams]{name: "WorkerSeen",
		args: func(p *workerSeenParams) []any {
			return []any{p.Names, p.Types, p.Labels, p.Queues, p.Owners, p.Sources, p.Plains, p.Kinds}
		}})
	workerGone = def(stmt[workerOwner]{name: "WorkerGone",
		args: func(p *workerOwner) []any { return []any{p.Name, p.Owner} }})
	workerList   = def(stmt[struct{}]{name: "WorkerList", cols: 10, args: sqlstmt.NoArgs})
	workerPrune  = def(stmt[time.Time]{name: "WorkerPrune", args: sqlstmt.OneArg[time.Time]})
	routeWaiting = def(stmt[int]{name: "RouteWaiting", cols: 6, args: sqlstmt.OneArg[int]})
	queueHead    = def(stmt[string]{name: "QueueHead", cols: 3, args: sqlstmt.OneArg[string]})
	kindsWaiting = def(stmt[kindsWaitingParams]{name: "KindsWaiting", cols: 4,
		args: func(p *kindsWaitingParams) []any { return []any{p.Queue, p.Limit} }})
	jobRouteAbsent = def(stmt[routeAbsentParams]{name: "JobRouteAbsent", cols: finishedCols,
		args: func(p *routeAbsentParams) []any { return []any{p.Now, p.Limit} }})
)
