package droverdriver

import (
	"context"

	"github.com/droverhq/drover/drovertype"
)

// SearchExecutor holds the statements of job search: JobList's filter
// (ListParams) read a window of IDs at a time, and the counts behind its
// estimates. The window statements walk the primary key of the hot table
// and of finished jobs between two IDs, so their cost is bounded by the
// width of the window, whatever the filter and however deep into the
// tables it starts. JobIDNext finds where the next window starts from the
// filter's states, queue and kind, from indexes where the store has them,
// so that a filter few jobs match skips the IDs between its jobs instead
// of reading them. internal/engine's Search and Count choose the windows.
type SearchExecutor interface {
	// JobIDNext returns the first job ID after p.AfterID in p's order
	// (greater; smaller with p.Desc, where an AfterID of 0 starts from
	// the newest), up to p.UntilID when set, of a job that matches p's
	// States, Queue and Kind, among the tables p.Parts names, or 0 when
	// there is none: where the next window of a search starts. The other
	// filters are the window's to test (JobList, JobMatchCount). A store
	// answers it from indexes on those three where it has them (the claim
	// indexes for a queue's available jobs, indexes of finished jobs by
	// queue, kind and failed state), and otherwise by walking the primary
	// key, which only the hot table needs: it holds the jobs that wait or
	// run, never the history.
	JobIDNext(ctx context.Context, p ListParams) (int64, error)

	// JobIDBounds returns the lowest and highest job ID of each table,
	// zeros for an empty one: the range a count estimate samples.
	JobIDBounds(ctx context.Context) (IDBounds, error)

	// JobMatchCount reads, in each table p.Waiting and p.Finished name,
	// the first p.Examine jobs in ID order inside p.Filter's window
	// (AfterID, UntilID], and counts how many of them match p.Filter's
	// filter (p.Filter.Desc and Limit are ignored). A table that holds
	// fewer than p.Examine jobs in the window was counted exactly.
	JobMatchCount(ctx context.Context, p MatchCountParams) (MatchCount, error)

	// JobMatchCountByState is JobMatchCount with the matches counted per
	// state (p.Filter.States must be empty): the counts of a search's
	// state tabs, from the same single read of each table's window that
	// one count takes.
	JobMatchCountByState(ctx context.Context, p MatchCountParams) (StateMatchCount, error)
}

// Parts reports which tables can hold jobs matching p: the hot table
// (waiting and running jobs) unless every state p names is final or p
// asks for a finish time, and the finished jobs unless every state p
// names is one of waiting or running. A search reads only those.
func (p *ListParams) Parts() (waiting, finished bool) {
	if len(p.States) == 0 {
		return p.Finished.IsZero(), true
	}
	for _, s := range p.States {
		if s.Finished() {
			finished = true
		} else {
			waiting = true
		}
	}
	return waiting && p.Finished.IsZero(), finished
}

// WaitingStates splits p's States for the hot table, whose available rows
// show as available (due), scheduled (ahead, never attempted) or retryable
// (ahead, attempted before): which of those three p takes, and the hot
// table's other states it takes (running, pending, blocked). No States
// takes them all.
func (p *ListParams) WaitingStates() (due, scheduled, retryable bool, others []drovertype.JobState) {
	if len(p.States) == 0 {
		return true, true, true, []drovertype.JobState{drovertype.JobStateRunning, drovertype.JobStatePending, drovertype.JobStateBlocked}
	}
	others = []drovertype.JobState{}
	for _, s := range p.States {
		switch s {
		case drovertype.JobStateAvailable:
			due = true
		case drovertype.JobStateScheduled:
			scheduled = true
		case drovertype.JobStateRetryable:
			retryable = true
		case drovertype.JobStateRunning, drovertype.JobStatePending, drovertype.JobStateBlocked:
			others = append(others, s)
		}
	}
	return due, scheduled, retryable, others
}

// FinishedStates returns p's States of finished jobs (nil: any), and
// whether each of them is cancelled or discarded: the failures, which
// stores may index on their own since they are few beside the completed
// jobs (an index of every finished job would cost every completion).
func (p *ListParams) FinishedStates() (states []drovertype.JobState, failed bool) {
	if len(p.States) == 0 {
		return nil, false
	}
	states, failed = []drovertype.JobState{}, true
	for _, s := range p.States {
		if s.Finished() {
			states = append(states, s)
			failed = failed && s != drovertype.JobStateCompleted
		}
	}
	return states, failed && len(states) > 0
}

// Bounds returns the IDs a list between p.AfterID and p.UntilID may
// return, as exclusive bounds lo < id < hi, whichever its order.
func (p *ListParams) Bounds() (lo, hi int64) {
	const top = 1<<63 - 1
	after, until := p.AfterID, p.UntilID
	if !p.Desc {
		hi = top
		if until > 0 {
			hi = until + 1
		}
		return after, hi
	}
	hi = top
	if after > 0 {
		hi = after
	}
	if until > 0 {
		lo = until - 1
	}
	return lo, hi
}

// IDBounds are the lowest and highest IDs of the hot table (Waiting) and
// of finished jobs, zero for an empty table.
type IDBounds struct {
	WaitingMin, WaitingMax, FinishedMin, FinishedMax int64
}

// MatchCountParams is one JobMatchCount.
type MatchCountParams struct {
	Filter ListParams
	// Examine caps the jobs read in each table.
	Examine int
	// Waiting and Finished name the tables to read; the other's count is
	// zero.
	Waiting, Finished bool
}

// Parts reports which tables the count reads: those the filter can match
// in (ListParams.Parts), of the ones asked for.
func (p *MatchCountParams) Parts() (waiting, finished bool) {
	waiting, finished = p.Filter.Parts()
	return waiting && p.Waiting, finished && p.Finished
}

// MatchCount is JobMatchCount's answer, per table.
type MatchCount struct {
	Waiting, Finished TableCount
}

// TableCount is what one JobMatchCount read in one table: Examined jobs
// in ID order, the last of them LastID (0 for none), Matched of them
// matching the filter.
type TableCount struct {
	Matched, Examined, LastID int64
}

// StateMatchCount is JobMatchCountByState's answer, per table.
type StateMatchCount struct {
	Waiting, Finished TableStateCount
}

// TableStateCount is what one JobMatchCountByState read in one table:
// Examined jobs in ID order, Matched of them matching the filter, by state
// (states with no match are absent).
type TableStateCount struct {
	Matched  map[drovertype.JobState]int64
	Examined int64
}

// NewStateMatchCount returns an empty count, for a driver to Add its rows
// to.
func NewStateMatchCount() StateMatchCount {
	return StateMatchCount{Waiting: TableStateCount{Matched: map[drovertype.JobState]int64{}}, Finished: TableStateCount{Matched: map[drovertype.JobState]int64{}}}
}

// Add counts one row of a driver's answer: matched jobs of state, among
// examined jobs of that state read in finished jobs or in the hot table.
func (c *StateMatchCount) Add(finished bool, state drovertype.JobState, matched, examined int64) {
	t := &c.Waiting
	if finished {
		t = &c.Finished
	}
	if matched > 0 {
		t.Matched[state] += matched
	}
	t.Examined += examined
}
