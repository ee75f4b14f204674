package droverdriver

import "github.com/droverhq/drover/drovertype"

// The values Go and SQL share: attempt outcomes, flow bits and unique
// keys' final-state bits (job states are drovertype.JobState, which SQL
// writes as their names). Both stores' queries.sql write them as
// tagged literals, "IN (1 /*OutcomeCompleted*/, 3 /*OutcomeDiscarded*/)" or
// "flow & 27 /*FlowEnd*/", which every SQL parser reads as plain numbers;
// the drivers' statement tests (internal/testkit/sqlcheck) check each tag against
// SQLConstants and report a number left untagged where one of these is
// meant. Change a value here and those tests name every statement that
// spells it.

// Outcome is what became of one attempt.
type Outcome uint8

// Outcomes an attempt can have.
const (
	// OutcomeCompleted finishes the job as completed.
	OutcomeCompleted Outcome = iota + 1
	// OutcomeRetry is a failed attempt: it returns the job to available at
	// Result.RunAt, unless a cancel was requested meanwhile (then it is
	// cancelled) or the attempt was the last its stored max_attempts
	// allows (then it is discarded). The store makes that last decision
	// itself, so a remote worker cannot discard a job early by claiming it
	// had fewer attempts.
	OutcomeRetry
	// OutcomeDiscarded finishes the job as discarded. Only the engine's own
	// runner sends it, for a failed attempt it saw was the last from the
	// claimed row; remote results are always OutcomeRetry.
	OutcomeDiscarded
	// OutcomeCancelled finishes the job as cancelled.
	OutcomeCancelled
	// OutcomeReleased returns the job to available and undoes the attempt,
	// for jobs that a stopping client claimed but never finished (another
	// process may take them without waiting for the lease) and for remote
	// workers' releases and snoozes. The job is due at Result.RunAt when
	// set (a snooze), at once otherwise.
	OutcomeReleased
)

// Flow bits of a job (the flow column). Only jobs with FlowSettle bits make
// finishing do more than move the row: plain jobs pay nothing for
// workflows and batches.
const (
	// FlowBatchMember counts the job's end on its batch row.
	FlowBatchMember = 1
	// FlowHasDependants releases or cancels the job's dependants when it
	// ends.
	FlowHasDependants = 2
	// FlowReleaseOnParentFailure makes a dependant run when a parent ends
	// without completing, instead of being cancelled with it.
	FlowReleaseOnParentFailure = 4
	// FlowSettle are the bits whose jobs must be settled when they end.
	FlowSettle = FlowBatchMember | FlowHasDependants
	// FlowUnique marks a job holding a unique key (InsertParams.UniqueKey):
	// when it ends, the key is freed unless its final state keeps it. Not
	// a workflow bit, but it rides on the same column so that the claim
	// already returns it and plain jobs pay nothing.
	FlowUnique = 8
	// FlowKeyed marks a job with an ordering key (InsertParams.Key): its
	// end, or its retry, changes its key's room, so the next job of the key
	// is promoted in the same transaction. The keyed and flow inserts set
	// it from the stored ordering_key (migration 010), so a result that
	// does not say the job is keyed (a remote worker's) still promotes.
	FlowKeyed = 16
	// FlowHasParents marks a job inserted to wait for other jobs (stored
	// ones or earlier jobs of its workflow): it has rows in job_deps as a
	// child, so a claim knows which jobs to read parents' results for
	// without a statement for the jobs that have none. It changes nothing
	// when the job ends: it is in neither FlowEnd nor FlowKeep, so a
	// forgotten completion (Result.Forget) of a job with parents and no
	// other bit deletes it, as before migration 012.
	FlowHasParents = 32
	// FlowEnd are the bits whose jobs must do more than move their row when
	// they end: the plain finish (JobFinishMany with Refuse FlowEnd) turns
	// such jobs away ("flow & $3" in the stores' JobFinish), and the engine
	// finishes them on its side path. The finish returns each job's
	// "flow & 27 /*FlowEnd*/".
	FlowEnd = FlowSettle | FlowUnique | FlowKeyed
	// FlowEndTx are the FlowEnd bits whose end needs a transaction of the
	// engine's own (settle, free a unique key). A batch whose only such bit
	// is FlowKeyed takes JobFinishKeyedMany instead, one round trip.
	FlowEndTx = FlowSettle | FlowUnique
	// FlowKeep are the bits that keep a finished job's row even when its
	// completion asks to be forgotten (Result.Forget): its dependants, its
	// batch or its unique key need the row after it ends. FlowKeyed and
	// FlowHasParents are not among them: nothing reads such a row after
	// its end.
	FlowKeep = FlowSettle | FlowReleaseOnParentFailure | FlowUnique
)

// Final-state bits: see FinalBit.
const (
	FinalCompleted = 1
	FinalCancelled = 2
	FinalDiscarded = 4
)

// FinalBit is a final state's bit in InsertParams.UniqueFinal, and in the
// stores' unique_keys.final_states column; 0 for a state that is not
// final.
func FinalBit(s drovertype.JobState) int {
	switch s {
	case drovertype.JobStateCompleted:
		return FinalCompleted
	case drovertype.JobStateCancelled:
		return FinalCancelled
	case drovertype.JobStateDiscarded:
		return FinalDiscarded
	}
	return 0
}

// SQLConstants are the constants above by name, as queries.sql tags them:
// "1 /*OutcomeCompleted*/". States are not here: SQL writes them as their
// names ('completed'), which internal/testkit/sqlcheck checks against States.
var SQLConstants = map[string]int{
	"OutcomeCompleted": int(OutcomeCompleted),
	"OutcomeRetry":     int(OutcomeRetry),
	"OutcomeDiscarded": int(OutcomeDiscarded),
	"OutcomeCancelled": int(OutcomeCancelled),
	"OutcomeReleased":  int(OutcomeReleased),

	"FlowBatchMember":            FlowBatchMember,
	"FlowHasDependants":          FlowHasDependants,
	"FlowReleaseOnParentFailure": FlowReleaseOnParentFailure,
	"FlowSettle":                 FlowSettle,
	"FlowUnique":                 FlowUnique,
	"FlowKeyed":                  FlowKeyed,
	"FlowHasParents":             FlowHasParents,
	"FlowEnd":                    FlowEnd,
	"FlowEndTx":                  FlowEndTx,
	"FlowKeep":                   FlowKeep,

	"FinalCompleted": FinalCompleted,
	"FinalCancelled": FinalCancelled,
	"FinalDiscarded": FinalDiscarded,
}
