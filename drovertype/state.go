package drovertype

// JobState is where a job is in its life. The stores keep it as its name
// ('completed'), so the values below are also the SQL's.
type JobState string

// Job states. A job waits as pending (for jobs it depends on, a workflow's
// or a batch callback's), blocked (behind earlier jobs of its key),
// scheduled (its time has not come), available or retryable (it failed and
// waits for its backoff), runs as running, and ends as completed,
// cancelled or discarded (out of attempts).
//
// The hot table only ever holds pending, available, blocked and running
// rows; scheduled and retryable are available rows whose run_at is in the
// future (attempt zero or not), so no loop has to move them when their
// time comes.
const (
	JobStatePending   JobState = "pending"
	JobStateBlocked   JobState = "blocked"
	JobStateScheduled JobState = "scheduled"
	JobStateAvailable JobState = "available"
	JobStateRetryable JobState = "retryable"
	JobStateRunning   JobState = "running"
	JobStateCompleted JobState = "completed"
	JobStateCancelled JobState = "cancelled"
	JobStateDiscarded JobState = "discarded"
)

// JobStates returns every job state in the order of a job's life, for
// filters and per-state counts.
func JobStates() []JobState {
	return []JobState{JobStatePending, JobStateBlocked, JobStateScheduled, JobStateAvailable, JobStateRetryable,
		JobStateRunning, JobStateCompleted, JobStateCancelled, JobStateDiscarded}
}

// UnfinishedStates returns the states of a job that has not finished, in
// the order of a job's life: the states every unique job holds its key in
// (InsertOpts.UniqueStates).
func UnfinishedStates() []JobState {
	return []JobState{JobStatePending, JobStateBlocked, JobStateScheduled, JobStateAvailable, JobStateRetryable,
		JobStateRunning}
}

// Finished reports whether the state is final.
func (s JobState) Finished() bool {
	return s == JobStateCompleted || s == JobStateCancelled || s == JobStateDiscarded
}

// Waiting reports whether a job in state s waits to be claimed: available,
// scheduled or retryable.
func (s JobState) Waiting() bool {
	return s == JobStateAvailable || s == JobStateScheduled || s == JobStateRetryable
}

// Valid reports whether s is a known state.
func (s JobState) Valid() bool {
	switch s {
	case JobStatePending, JobStateBlocked, JobStateScheduled, JobStateAvailable, JobStateRetryable,
		JobStateRunning, JobStateCompleted, JobStateCancelled, JobStateDiscarded:
		return true
	}
	return false
}
