package drovertype

import "time"

// LeaseOwner is a process that holds running jobs.
type LeaseOwner struct {
	// Owner is the client's ID (Config.ID) or the HTTP worker's name.
	Owner   string
	Running int64
	// LeaseExpiresAt is the latest expiry of its leases; heartbeats push
	// it forward, so a date in the past means the process stopped
	// heartbeating and its jobs are about to be rescued.
	LeaseExpiresAt time.Time
}

// QueueSettings are a queue's settings stored in the database: they hold
// for every process that claims from the queue, Go clients and remote
// workers alike, whatever their own configuration says.
type QueueSettings struct {
	Queue string
	// Paused queues start no job: claims take nothing, while running jobs
	// finish and inserts still succeed.
	Paused bool
	// Limit holds the queue's cluster-wide limits (QueueConfig's
	// GlobalMaxWorkers, RateLimit and RatePeriod); zero fields mean none.
	Limit QueueLimit
	// PausedKinds are the kinds paused within the queue (QueuePauseKind),
	// sorted: their jobs wait while the queue's other kinds run.
	PausedKinds []string
	// Strict, when above 0, starts the queue's jobs strictly in claim
	// order (priority, run_at, id) across the fleet, at most Strict of
	// them running at once (QueueSetStrictOrder); 0 is off.
	Strict int
	// UpdatedAt is when the settings were last written, by the store's
	// clock; zero when the queue has none stored.
	UpdatedAt time.Time
}

// Limited reports whether the queue has a cluster-wide limit or strict
// order, which its claims must then take the limited path to respect.
func (s *QueueSettings) Limited() bool {
	return s != nil && (s.Limit.MaxRunning > 0 || s.Limit.Rate > 0 || s.Strict > 0)
}

// QueueLimit is a queue's cluster-wide limits; zero fields mean none.
type QueueLimit struct {
	// MaxRunning caps the queue's jobs running at once across every
	// client and remote worker.
	MaxRunning int
	// Rate jobs may start per Period, with bursts of up to Rate.
	Rate   int
	Period time.Duration
}

// QueueHead is what a queue waits on: the job at its head and how many of
// its jobs a limited claim started still run.
type QueueHead struct {
	// ID is the job at the head of the queue, 0 when none waits: the first
	// of its jobs a claim in strict order (or under the queue's limits)
	// started that wait again, in the order they started, or failing one
	// the first waiting job in claim order (priority, run_at, id).
	ID int64
	// Job is that job as stored, read by Client.QueueHeadOf; a store's
	// QueueHead leaves it nil.
	Job *JobRow
	// Returned says the head is a job that a claim in strict order (or
	// under the queue's limits) started and that waits again: a retry
	// after a failed attempt, a release, a rescue. In a queue in strict
	// order nothing else starts until it has started again, at its RunAt.
	Returned bool
	// Running counts the queue's jobs started in strict order or under
	// its limits that still run.
	Running int64
}

// QueueStats is the state of one queue's waiting and running work.
type QueueStats struct {
	Queue     string
	Available int64 // claimable now
	Scheduled int64 // waiting for run_at, never attempted
	Retryable int64 // waiting for run_at after a failed attempt
	Running   int64
	// OldestAvailable is the run_at of the oldest claimable job, nil when
	// none is: now minus it is how far behind the queue's workers are.
	OldestAvailable *time.Time
}

// FinishedStats summarises one queue's jobs finished in a window.
type FinishedStats struct {
	Queue                           string
	Completed, Cancelled, Discarded int64
	// PickupP50, PickupP95 and PickupP99 are nearest-rank percentiles of
	// how long completed jobs waited, from run_at to the start of their
	// last attempt; zero when none completed.
	PickupP50, PickupP95, PickupP99 time.Duration
}
