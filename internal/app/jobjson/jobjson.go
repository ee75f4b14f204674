// Package jobjson is the JSON form of a job shared by the CLI's --json
// output and the HTTP API, so that a script moving from one to the other
// reads the same fields. The field names are spelled out here rather than
// derived from drovertype.JobRow, because this form is a stable interface of
// its own, in the snake_case that shell tools and other languages expect.
package jobjson

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
)

// Job is one job as JSON.
type Job struct {
	ID          int64               `json:"id"`
	State       drovertype.JobState `json:"state"`
	Queue       string              `json:"queue"`
	Kind        string              `json:"kind"`
	Priority    int                 `json:"priority"`
	Args        json.RawMessage     `json:"args"`
	Metadata    json.RawMessage     `json:"metadata,omitempty"`
	Tags        []string            `json:"tags"`
	Attempt     int                 `json:"attempt"`
	MaxAttempts int                 `json:"max_attempts"`
	// Errors holds the last drovertype.ErrorsKept attempt errors, oldest first;
	// ErrorCount counts every error the job recorded.
	Errors          []drovertype.AttemptError `json:"errors"`
	ErrorCount      int                       `json:"error_count"`
	TimeoutMS       int64                     `json:"timeout_ms,omitempty"`
	CreatedAt       time.Time                 `json:"created_at"`
	RunAt           time.Time                 `json:"run_at"`
	AttemptedAt     *time.Time                `json:"attempted_at,omitempty"`
	FinalizedAt     *time.Time                `json:"finalized_at,omitempty"`
	LeaseOwner      string                    `json:"lease_owner,omitempty"`
	LeaseExpiresAt  *time.Time                `json:"lease_expires_at,omitempty"`
	CancelRequested bool                      `json:"cancel_requested"`
	// BatchID is the batch the job belongs to (or calls back for), 0 for none.
	BatchID int64 `json:"batch_id,omitempty"`
	// Key is the ordering key the job was inserted with.
	Key string `json:"key,omitempty"`
	// LeaseToken is set on jobs a claim returns, and only there: the
	// worker echoes it when it finishes the job or extends its lease.
	LeaseToken string `json:"lease_token,omitempty"`
	// Routing is where the job may run; absent for a plain job.
	Routing *Routing `json:"routing,omitempty"`
	// Unroutable is true for a waiting routed job that no live worker can
	// take (drovertype.JobRow.Unroutable).
	Unroutable bool `json:"unroutable,omitempty"`
}

// Routing is a job's routing as JSON (drovertype.Routing), with the names the
// enqueue request uses.
type Routing struct {
	WorkerType          string            `json:"worker_type,omitempty"`
	WorkerNames         []string          `json:"worker_names,omitempty"`
	WorkerLabels        map[string]string `json:"worker_labels,omitempty"`
	OnWorkerAbsent      string            `json:"on_worker_absent,omitempty"`
	WorkerAbsentAfterMS int64             `json:"worker_absent_after_ms,omitempty"`
	// FellBackFrom are the names the job was aimed at before the leader
	// let any worker of its type take it.
	FellBackFrom []string `json:"fell_back_from,omitempty"`
}

// FromRouting converts a job's routing; nil for a plain job.
func FromRouting(r *drovertype.Routing) *Routing {
	if r == nil {
		return nil
	}
	return &Routing{WorkerType: r.Type, WorkerNames: r.Names, WorkerLabels: r.Labels, OnWorkerAbsent: string(r.OnAbsent),
		WorkerAbsentAfterMS: int64(r.AbsentAfter), FellBackFrom: r.FellBackFrom}
}

// Worker is one worker of the registry as JSON (drovertype.WorkerInfo), for
// `drover workers list` and GET /v1/workers.
type Worker struct {
	Name      string            `json:"name"`
	Plain     bool              `json:"plain"`
	Type      string            `json:"type"`
	Labels    map[string]string `json:"labels"`
	Queues    []string          `json:"queues"`
	Kinds     []string          `json:"kinds"`
	Owner     string            `json:"owner"`
	Source    string            `json:"source"`
	StartedAt time.Time         `json:"started_at"`
	LastSeen  time.Time         `json:"last_seen"`
	JobsHeld  int64             `json:"jobs_held"`
	Live      bool              `json:"live"`
}

// FromWorkers converts the registry; an empty one encodes as [].
func FromWorkers(ws []*drovertype.WorkerInfo) []Worker {
	out := make([]Worker, len(ws))
	for i, w := range ws {
		out[i] = Worker{Name: w.Name, Plain: w.Plain, Type: w.Type, Labels: w.Labels, Queues: w.Queues, Kinds: w.Kinds, Owner: w.Owner,
			Source: w.Source, StartedAt: w.StartedAt, LastSeen: w.LastSeen, JobsHeld: w.JobsHeld, Live: w.Live}
		if out[i].Labels == nil {
			out[i].Labels = map[string]string{}
		}
		if out[i].Queues == nil {
			out[i].Queues = []string{}
		}
	}
	return out
}

// Unroutable is one group of waiting jobs that no live worker can take
// (drover.UnroutableJobs), for `drover jobs list --unroutable` and
// GET /v1/unroutable.
type Unroutable struct {
	Queue       string    `json:"queue"`
	Kind        string    `json:"kind"`
	Routing     *Routing  `json:"routing"`
	Jobs        int64     `json:"jobs"`
	OldestRunAt time.Time `json:"oldest_run_at"`
	FirstID     int64     `json:"first_id"`
}

// FromUnroutable converts the groups; none encodes as [].
func FromUnroutable(groups []*drover.UnroutableJobs) []Unroutable {
	out := make([]Unroutable, len(groups))
	for i, g := range groups {
		out[i] = Unroutable{Queue: g.Queue, Kind: g.Kind, Routing: FromRouting(g.Routing), Jobs: g.Jobs, OldestRunAt: g.OldestRunAt,
			FirstID: g.FirstID}
	}
	return out
}

// From converts a stored job.
func From(j *drovertype.JobRow) Job {
	out := Job{
		ID:              j.ID,
		State:           j.State,
		Queue:           j.Queue,
		Kind:            j.Kind,
		Priority:        j.Priority,
		Args:            j.EncodedArgs,
		Metadata:        j.Metadata,
		Tags:            j.Tags,
		Attempt:         j.Attempt,
		MaxAttempts:     j.MaxAttempts,
		Errors:          j.Errors,
		TimeoutMS:       j.Timeout.Milliseconds(),
		CreatedAt:       j.CreatedAt,
		RunAt:           j.RunAt,
		AttemptedAt:     j.AttemptedAt,
		FinalizedAt:     j.FinalizedAt,
		LeaseOwner:      j.LeaseOwner,
		LeaseExpiresAt:  j.LeaseExpiresAt,
		CancelRequested: j.CancelRequested,
		BatchID:         j.BatchID,
		Key:             j.Key,
		ErrorCount:      j.ErrorCount,
		Routing:         FromRouting(j.Routing),
		Unroutable:      j.Unroutable,
	}
	if !j.LeaseToken.IsZero() {
		out.LeaseToken = j.LeaseToken.String()
	}
	// Empty lists encode as [] so that scripts can index them without a
	// null check.
	if out.Tags == nil {
		out.Tags = []string{}
	}
	if out.Errors == nil {
		out.Errors = []drovertype.AttemptError{}
	}
	if len(out.Args) == 0 {
		out.Args = json.RawMessage("null")
	}
	return out
}

// FromAll converts a list of stored jobs; an empty list encodes as [].
func FromAll(jobs []*drovertype.JobRow) []Job {
	out := make([]Job, len(jobs))
	for i, j := range jobs {
		out[i] = From(j)
	}
	return out
}

// Batch is a batch's progress as JSON, in the shape GET /v1/batches/{id}
// answers: the members' counts by state under "counts", so that a state
// added later is one more key rather than a new top-level field.
type Batch struct {
	ID            int64            `json:"id"`
	Total         int64            `json:"total"`
	Counts        map[string]int64 `json:"counts"`
	CallbackJobID int64            `json:"callback_job_id,omitempty"`
	CreatedAt     time.Time        `json:"created_at"`
	// FinishedAt is null until the batch's last member ends.
	FinishedAt *time.Time `json:"finished_at"`
}

// FromBatch converts a batch's progress.
func FromBatch(b *drovertype.Batch) Batch {
	return Batch{ID: b.ID, Total: b.Total, CallbackJobID: b.CallbackJobID, CreatedAt: b.CreatedAt, FinishedAt: b.FinishedAt,
		Counts: map[string]int64{"pending": b.Pending(), "running": b.Running, "failed": b.Failed,
			"completed": b.Completed, "cancelled": b.Cancelled, "discarded": b.Discarded}}
}

// Queue is a queue's stored settings as JSON (drovertype.QueueSettings), for
// `drover queues` and /v1/queues.
type Queue struct {
	Name   string `json:"name"`
	Paused bool   `json:"paused"`
	// PausedKinds are the kinds paused within the queue, sorted; never
	// null.
	PausedKinds      []string `json:"paused_kinds"`
	GlobalMaxWorkers int      `json:"global_max_workers"`
	RateLimit        int      `json:"rate_limit"`
	RatePeriodMS     int64    `json:"rate_period_ms"`
	// StrictOrder is how many of the queue's jobs may run at once in
	// strict order, 0 when it is not in strict order.
	StrictOrder int `json:"strict_order"`
	// UpdatedAt is null for a queue without stored settings.
	UpdatedAt *time.Time `json:"updated_at"`
}

// FromQueue converts a queue's settings.
func FromQueue(q *drovertype.QueueSettings) Queue {
	out := Queue{Name: q.Queue, Paused: q.Paused, PausedKinds: q.PausedKinds, GlobalMaxWorkers: q.Limit.MaxRunning,
		RateLimit: q.Limit.Rate, RatePeriodMS: q.Limit.Period.Milliseconds(), StrictOrder: q.Strict}
	if out.PausedKinds == nil {
		out.PausedKinds = []string{}
	}
	if !q.UpdatedAt.IsZero() {
		t := q.UpdatedAt
		out.UpdatedAt = &t
	}
	return out
}

// QueueList lists, by name, every queue that has stored settings or
// waiting or running jobs (stats, from Client.QueueStats): the queues an
// operator can see and pause, for `drover queues list` and GET /v1/queues.
// Never nil, so that an empty list encodes as [].
func QueueList(settings []*drovertype.QueueSettings, stats []drovertype.QueueStats) []Queue {
	byName := make(map[string]Queue, len(settings)+len(stats))
	for _, q := range settings {
		byName[q.Queue] = FromQueue(q)
	}
	for _, st := range stats {
		if _, ok := byName[st.Queue]; !ok {
			byName[st.Queue] = FromQueue(&drovertype.QueueSettings{Queue: st.Queue})
		}
	}
	out := slices.Collect(maps.Values(byName))
	slices.SortFunc(out, func(a, b Queue) int { return strings.Compare(a.Name, b.Name) })
	return out
}
