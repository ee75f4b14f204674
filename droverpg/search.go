package droverpg

import (
	"context"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// search turns a filter into the parameters of the search statements
// (searchParams), with the window and limit of p.
func search(p *droverdriver.ListParams) searchParams {
	states := stateStrings(p.States)
	tags := p.Tags
	if tags == nil {
		tags = []string{}
	}
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	lo, hi := p.Bounds()
	waiting, finished := p.Parts()
	return searchParams{
		States: states, Queue: p.Queue, Kind: p.Kind, Tags: tags, Args: p.Args, Metadata: p.Metadata,
		CreatedFrom: timeOrNil(p.Created.From), CreatedTo: timeOrNil(p.Created.To),
		ScheduledFrom: timeOrNil(p.Scheduled.From), ScheduledTo: timeOrNil(p.Scheduled.To),
		AttemptedFrom: timeOrNil(p.Attempted.From), AttemptedTo: timeOrNil(p.Attempted.To),
		FinishedFrom: timeOrNil(p.Finished.From), FinishedTo: timeOrNil(p.Finished.To),
		Now: now, Lo: lo, Hi: hi, Limit: p.Limit, Waiting: waiting, Finished: finished,
	}
}

// stateStrings are states as PostgreSQL's text[] takes them: never nil.
func stateStrings(states []drovertype.JobState) []string {
	out := make([]string, len(states))
	for i, s := range states {
		out[i] = string(s)
	}
	return out
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func (e *executor) JobList(ctx context.Context, p droverdriver.ListParams) ([]*drovertype.JobRow, error) {
	st := jobList
	if p.Desc {
		st = jobListDesc
	}
	rows, err := st.query(ctx, e.db, e.q, search(&p))
	if err != nil {
		return nil, e.wrap("list jobs", err)
	}
	defer rows.Close()
	var jobs []*drovertype.JobRow
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, e.wrap("list jobs", err)
		}
		jobs = append(jobs, j)
	}
	return jobs, e.wrap("list jobs", rows.Err())
}

// idNext turns a filter into the parameters of JobIDNext and JobIDPrev.
func idNext(p *droverdriver.ListParams) idNextParams {
	lo, hi := p.Bounds()
	ip := idNextParams{Lo: lo, Hi: hi, Queue: p.Queue, Kind: p.Kind, Now: p.Now,
		Narrow: len(p.States) > 0 || p.Queue != "" || p.Kind != "", End: hi}
	if p.Desc {
		ip.End = lo
	}
	ip.Waiting, ip.Finished = p.Parts()
	var others []drovertype.JobState
	ip.Due, ip.Scheduled, ip.Retried, others = p.WaitingStates()
	fin, _ := p.FinishedStates()
	ip.Others, ip.FinishedStates = stateStrings(others), stateStrings(fin)
	if ip.Now.IsZero() {
		ip.Now = time.Now()
	}
	return ip
}

func (e *executor) JobIDNext(ctx context.Context, p droverdriver.ListParams) (int64, error) {
	st := jobIDNext
	if p.Desc {
		st = jobIDPrev
	}
	var id int64
	if err := st.queryRow(ctx, e.db, e.q, idNext(&p)).Scan(&id); err != nil {
		return 0, e.wrap("find the next job id", err)
	}
	return id, nil
}

func (e *executor) JobIDBounds(ctx context.Context) (droverdriver.IDBounds, error) {
	var b droverdriver.IDBounds
	err := jobIDBounds.queryRow(ctx, e.db, e.q, struct{}{}).Scan(&b.WaitingMin, &b.WaitingMax, &b.FinishedMin, &b.FinishedMax)
	return b, e.wrap("read job id bounds", err)
}

func (e *executor) JobMatchCount(ctx context.Context, p droverdriver.MatchCountParams) (droverdriver.MatchCount, error) {
	sp := search(&p.Filter)
	sp.Limit = p.Examine
	sp.Waiting, sp.Finished = p.Parts()
	var out droverdriver.MatchCount
	rows, err := jobMatchCount.query(ctx, e.db, e.q, sp)
	if err != nil {
		return out, e.wrap("count matching jobs", err)
	}
	defer rows.Close()
	for rows.Next() {
		var finished bool
		var c droverdriver.TableCount
		if err := rows.Scan(&finished, &c.Matched, &c.Examined, &c.LastID); err != nil {
			return out, e.wrap("count matching jobs", err)
		}
		if finished {
			out.Finished = c
		} else {
			out.Waiting = c
		}
	}
	return out, e.wrap("count matching jobs", rows.Err())
}

func (e *executor) JobMatchCountByState(ctx context.Context, p droverdriver.MatchCountParams) (droverdriver.StateMatchCount, error) {
	sp := search(&p.Filter)
	sp.Limit = p.Examine
	sp.Waiting, sp.Finished = p.Parts()
	out := droverdriver.NewStateMatchCount()
	rows, err := jobMatchCountByState.query(ctx, e.db, e.q, sp)
	if err != nil {
		return out, e.wrap("count matching jobs by state", err)
	}
	defer rows.Close()
	for rows.Next() {
		var finished bool
		var state string
		var matched, examined int64
		if err := rows.Scan(&finished, &state, &matched, &examined); err != nil {
			return out, e.wrap("count matching jobs by state", err)
		}
		out.Add(finished, drovertype.JobState(state), matched, examined)
	}
	return out, e.wrap("count matching jobs by state", rows.Err())
}
