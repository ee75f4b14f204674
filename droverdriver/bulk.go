package droverdriver

import (
	"context"
	"time"
)

// BulkTaskExecutor stores the bulk actions of drover serve (POST /v1/bulk,
// the dashboard's bulk buttons): one row per task, written as it starts,
// as it goes and as it ends, so that its progress, and the fact that it
// stopped half way, outlive the server that ran it.
type BulkTaskExecutor interface {
	// BulkTaskInsert stores a new task from t (its ID and UpdatedAt
	// ignored: UpdatedAt is StartedAt), deletes every task but the last
	// keep, and returns the new task's ID.
	BulkTaskInsert(ctx context.Context, t *BulkTaskRow, keep int) (int64, error)
	// BulkTaskUpdate writes a task's progress and status.
	BulkTaskUpdate(ctx context.Context, p BulkTaskUpdateParams) error
	// BulkTaskGet returns a task, or nil when none has that ID.
	BulkTaskGet(ctx context.Context, id int64) (*BulkTaskRow, error)
}

// BulkTaskRow is one stored bulk task.
type BulkTaskRow struct {
	ID     int64
	Action string
	// Queue, Kind and State are the filter of a task over a filter, each
	// empty when not filtered on.
	Queue, Kind, State string
	// Selected is how many job IDs a task by ID was given; 0 for a task
	// over a filter.
	Selected int
	// Status is "running", "done", "failed" or "interrupted".
	Status           string
	Matched, Changed int64
	Error            string
	StartedAt        time.Time
	// UpdatedAt is when the server running the task last wrote it: a
	// running task's row is written at least every few seconds, so one
	// that stopped moving was cut short.
	UpdatedAt time.Time
}

// BulkTaskUpdateParams are a task's progress and status at Now.
type BulkTaskUpdateParams struct {
	ID               int64
	Status           string
	Matched, Changed int64
	Error            string
	Now              time.Time
}
