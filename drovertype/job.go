package drovertype

import (
	"encoding/json"
	"time"
)

// JobRow is a job as stored, without decoded args: what a store's claim,
// get and list return, and what a worker's Job embeds. Some fields are set
// only by some reads, as each says.
type JobRow struct {
	ID          int64
	State       JobState
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
	// Flow holds the job's flow bits as the stores keep them
	// (droverdriver.FlowFlag): whether it waits for parents, belongs to a
	// batch, holds a unique key, and so on. HasParents reads the one
	// users ask about.
	Flow int
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
	// JobList never return it: anyone allowed to read jobs may call them.
	LeaseToken LeaseToken
	// Routing is where the job may run (InsertOpts.WorkerType,
	// WorkerNames, WorkerLabels); nil for a plain job. Set by JobGet and
	// JobList, not by a claim.
	Routing *Routing
	// Unroutable is set by JobGet and JobList on a waiting routed job that
	// no live worker can take: none that works its queue matches its
	// routing and runs its kind. Plain jobs of a kind no live worker runs
	// are reported by Client.Unroutable.
	Unroutable bool
}

// flowHasParents is droverdriver.FlowHasParents, the flow bit of a job
// inserted to wait for others; droverdriver's tests hold the two equal.
// The flow bits are the stores' encoding, so only this one is named here.
const flowHasParents = 32

// HasParents reports that the job was inserted to wait for other jobs
// (InsertOpts.DependsOn, or a step of a Workflow after other steps),
// whose results ParentResults and Client.JobParentResults read.
func (r *JobRow) HasParents() bool { return r.Flow&flowHasParents != 0 }

// ErrorsKept is how many attempt errors a job keeps (JobRow.Errors): each
// new error drops the oldest beyond this many, while JobRow.ErrorCount
// keeps counting. An attempt's error and trace may be up to 128 KiB and a
// job may allow a million attempts, so an unbounded history would make
// every claim and read of a much-failed job carry megabytes, and every
// append rewrite them. The stores' statements splice this number in, so
// Go and SQL cannot disagree on it.
const ErrorsKept = 20

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
