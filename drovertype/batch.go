package drovertype

import (
	"encoding/json"
	"time"
)

// Batch is a batch's progress, as the store counts it. Every member is in
// exactly one of Pending, Running, Failed, Completed, Cancelled and
// Discarded.
type Batch struct {
	ID    int64
	Total int64
	// Running counts members running now.
	Running int64
	// Failed members failed an attempt and wait for their retry; they have
	// not ended.
	Failed    int64
	Completed int64
	Cancelled int64
	Discarded int64
	// CallbackJobID is the callback job's ID, 0 without one.
	CallbackJobID int64
	CreatedAt     time.Time
	// FinishedAt is when the last member ended, nil until then.
	FinishedAt *time.Time
}

// Pending counts the members that wait to run: available, scheduled,
// pending on jobs they depend on, or blocked behind earlier jobs of their
// key. The store keeps no counter of them: they are what the others leave
// of Total.
func (b *Batch) Pending() int64 {
	return max(0, b.Total-b.Running-b.Failed-b.Completed-b.Cancelled-b.Discarded)
}

// Finished reports whether every member has ended.
func (b *Batch) Finished() bool { return b.FinishedAt != nil }

// JobResult is a job's state and the result its worker set.
type JobResult struct {
	ID    int64
	State JobState
	Kind  string
	// Result is what the worker passed to Job.SetResult, nil unless the
	// job completed with one.
	Result json.RawMessage
}
