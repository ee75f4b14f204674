package drover

import (
	"encoding/json"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// mapAll returns f applied to each element of s, in order: the store's
// rows turned into the public types.
func mapAll[S, D any](s []S, f func(S) D) []D {
	out := make([]D, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out
}

// JobRow is a job as stored, without decoded args.
type JobRow struct {
	ID          int64
	State       drovertype.JobState
	Queue       string
	Kind        string
	Priority    int
	EncodedArgs json.RawMessage
	Metadata    json.RawMessage
	Tags        []string
	// Attempt counts the attempts started so far, this one included.
	Attempt     int
	MaxAttempts int
	// Errors holds the last ErrorsKept attempt errors, oldest first.
	Errors []AttemptError
	// ErrorCount is how many attempt errors the job recorded in all; the
	// ones before the last ErrorsKept are no longer stored.
	ErrorCount  int
	Timeout     time.Duration
	CreatedAt   time.Time
	RunAt       time.Time
	AttemptedAt *time.Time
	FinalizedAt *time.Time
	// LeaseOwner and LeaseExpiresAt are set while the job runs: the client
	// that holds it and until when, unless it heartbeats again.
	LeaseOwner      string
	LeaseExpiresAt  *time.Time
	CancelRequested bool
	// BatchID is the batch the job belongs to, or the batch a callback
	// reports on; 0 for none. Set on jobs handed to workers and on jobs
	// read with JobGet and JobList.
	BatchID int64
	// Key is the job's InsertOpts.Key, set on the jobs workers receive and
	// on waiting and running jobs read with JobGet and JobList (a finished
	// job no longer stores its key).
	Key string
	// UniqueSkippedAsDuplicate is set on the row Insert returns when the
	// job was not stored because another job holds its unique key
	// (InsertOpts.UniqueKey, UniqueStates); ID is 0 then.
	UniqueSkippedAsDuplicate bool
	// LeaseToken is the secret of the claim that handed the job out, set
	// only on jobs a claim returns (Claim, and the jobs a Client's workers
	// receive). A remote worker echoes it in Finish and ExtendLeases:
	// without it, no result or lease extension is accepted. JobGet and
	// JobList never return it.
	LeaseToken drovertype.LeaseToken
	// HasParents reports that the job was inserted to wait for other jobs
	// (InsertOpts.DependsOn, or a step of a Workflow after other steps),
	// whose results ParentResults and Client.JobParentResults read.
	HasParents bool
	// Routing is where the job may run (InsertOpts.WorkerType,
	// WorkerNames, WorkerLabels); nil for a plain job. Set by JobGet and
	// JobList.
	Routing *drovertype.Routing
	// Unroutable is set by JobGet and JobList on a waiting routed job that
	// no live worker can take (routing.go): none that works its queue
	// matches its routing and runs its kind. Plain jobs of a kind no live
	// worker runs are reported by Client.Unroutable.
	Unroutable bool
}

// ErrorsKept is how many attempt errors a job keeps (JobRow.Errors): each
// new error drops the oldest beyond this many, while JobRow.ErrorCount
// keeps counting. An attempt's error and trace may be up to 128 KiB and a
// job may allow a million attempts, so an unbounded history would make
// every claim and read of a much-failed job carry megabytes.
const ErrorsKept = droverdriver.ErrorsKept

// Job is a job with its args decoded, as a Worker receives it.
type Job[T Args] struct {
	*JobRow
	Args T
	// attempt is the running attempt's link to its client (result.go);
	// nil in a Job built outside a client.
	attempt *attemptState
}

// AttemptError records why one attempt failed.
type AttemptError struct {
	Attempt int       `json:"attempt"`
	At      time.Time `json:"at"`
	Error   string    `json:"error"`
	// Trace is the stack of a panic, or the detailed (%+v) form of an error
	// when it differs from its message.
	Trace string `json:"trace,omitempty"`
	// Released is set when the attempt was interrupted because its client
	// stopped and the job was given back: a released attempt does not
	// count against MaxAttempts, so the job's Attempt went back to the
	// number before it, while this error keeps the number the attempt
	// ran as.
	Released bool `json:"released,omitempty"`
}

// JobRowFromDriver converts a job as a driver returns it into a JobRow,
// for code that reads jobs through a driver's Executor itself:
// drovertest's assertions read inside the test's transaction that way.
func JobRowFromDriver(r *droverdriver.JobRow) *JobRow {
	row := &JobRow{}
	row.fill(r)
	return row
}

// fill sets row from the store's r.
func (row *JobRow) fill(r *droverdriver.JobRow) {
	*row = JobRow{
		ID:              r.ID,
		State:           r.State,
		Queue:           r.Queue,
		Kind:            r.Kind,
		Priority:        r.Priority,
		EncodedArgs:     r.Args,
		Metadata:        r.Metadata,
		Tags:            r.Tags,
		Attempt:         r.Attempt,
		MaxAttempts:     r.MaxAttempts,
		Timeout:         r.Timeout,
		CreatedAt:       r.CreatedAt,
		RunAt:           r.RunAt,
		AttemptedAt:     r.AttemptedAt,
		FinalizedAt:     r.FinalizedAt,
		LeaseOwner:      r.LeaseOwner,
		LeaseExpiresAt:  r.LeaseExpiresAt,
		CancelRequested: r.CancelRequested,
		BatchID:         r.BatchID,
		Key:             r.Key,
		ErrorCount:      r.ErrorCount,
		LeaseToken:      r.LeaseToken,
		HasParents:      r.Flow&droverdriver.FlowHasParents != 0,
		Routing:         r.Routing,
	}
	if len(r.Errors) > 0 {
		// A row whose errors do not decode still shows everything else;
		// the raw errors stay in the store.
		_ = json.Unmarshal(r.Errors, &row.Errors)
	}
}
