package droversqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"math"
	"sync"
	"time"

	"modernc.org/sqlite"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/jsonmatch"
)

// init prepares the search statements on the readers, and registers the
// SQL function drover_json_contains(doc, pattern): PostgreSQL's jsonb @>,
// which SQLite lacks, for the search filter on args and metadata
// (jsonmatch.JSONContains). A search tests one pattern against many
// documents, so the last pattern decoded is kept.
func init() {
	readQueries = append(readQueries, jobListDesc.name, jobIDNext.name, jobIDPrev.name, jobIDBounds.name, jobMatchCount.name,
		jobMatchCountByState.name, batchList.name, jobDeps.name)
	var mu sync.Mutex
	var lastText string
	var lastPattern any
	sqlite.MustRegisterDeterministicScalarFunction("drover_json_contains", 2,
		func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			doc, pattern := textOf(args[0]), textOf(args[1])
			if doc == nil || pattern == nil {
				return nil, nil
			}
			mu.Lock()
			p := lastPattern
			if string(pattern) != lastText || p == nil {
				var err error
				if p, err = jsonmatch.DecodeJSONValue(pattern); err != nil {
					mu.Unlock()
					return nil, errors.New("drover_json_contains: pattern: " + err.Error())
				}
				lastText, lastPattern = string(pattern), p
			}
			mu.Unlock()
			d, err := jsonmatch.DecodeJSONValue(doc)
			if err != nil {
				return nil, errors.New("drover_json_contains: document: " + err.Error())
			}
			if jsonmatch.ContainsJSONValue(d, p) {
				return int64(1), nil
			}
			return int64(0), nil
		})
}

// textOf returns an SQL function argument's text, nil for NULL.
func textOf(v driver.Value) []byte {
	switch v := v.(type) {
	case string:
		return []byte(v)
	case []byte:
		return v
	}
	return nil
}

// search turns a filter into the parameters of the search statements
// (searchParams), with the window and limit of p.
func search(p *droverdriver.ListParams) searchParams {
	states := jsonStrings(p.States)
	tags := jsonStrings(p.Tags)
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	lo, hi := p.Bounds()
	waiting, finished := p.Parts()
	return searchParams{
		States: states, Queue: p.Queue, Kind: p.Kind, Tags: tags, Args: jsonOrNil(p.Args), Metadata: jsonOrNil(p.Metadata),
		CreatedFrom: microsOrNil(p.Created.From), CreatedTo: microsOrNil(p.Created.To),
		ScheduledFrom: microsOrNil(p.Scheduled.From), ScheduledTo: microsOrNil(p.Scheduled.To),
		AttemptedFrom: microsOrNil(p.Attempted.From), AttemptedTo: microsOrNil(p.Attempted.To),
		FinishedFrom: microsOrNil(p.Finished.From), FinishedTo: microsOrNil(p.Finished.To),
		Now: micros(now), Lo: lo, Hi: hi, Limit: p.Limit, Waiting: waiting, Finished: finished,
	}
}

func jsonOrNil(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

func microsOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return micros(t)
}

func (e *executor) JobList(ctx context.Context, p droverdriver.ListParams) ([]*drovertype.JobRow, error) {
	st := jobList
	if p.Desc {
		st = jobListDesc
	}
	sc := newScanner(min(max(p.Limit, 1), 1000))
	if err := st.query(ctx, e, nil, e.reader, sc.scan, search(&p)); err != nil {
		return nil, e.wrap("list jobs", err)
	}
	return sc.jobs, nil
}

// idNext turns a filter into the parameters of JobIDNext and JobIDPrev.
func idNext(p *droverdriver.ListParams) idNextParams {
	lo, hi := p.Bounds()
	ip := idNextParams{Lo: lo, Hi: hi, Queue: p.Queue, Kind: p.Kind, Now: micros(p.Now)}
	ip.Waiting, ip.Finished = p.Parts()
	var others, fin []drovertype.JobState
	ip.Due, ip.Scheduled, ip.Retried, others = p.WaitingStates()
	fin, ip.Failed = p.FinishedStates()
	ip.Others, ip.FinishedStates = jsonStrings(others), jsonStrings(fin)
	if p.Now.IsZero() {
		ip.Now = micros(time.Now())
	}
	return ip
}

func (e *executor) JobIDNext(ctx context.Context, p droverdriver.ListParams) (int64, error) {
	st := jobIDNext
	if p.Desc {
		st = jobIDPrev
	}
	var id int64
	err := st.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error { return rows.Scan(&id) }, idNext(&p))
	return id, e.wrap("find the next job id", err)
}

func (e *executor) JobIDBounds(ctx context.Context) (droverdriver.IDBounds, error) {
	var b droverdriver.IDBounds
	err := jobIDBounds.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		return rows.Scan(&b.WaitingMin, &b.WaitingMax, &b.FinishedMin, &b.FinishedMax)
	}, struct{}{})
	return b, e.wrap("read job id bounds", err)
}

func (e *executor) JobMatchCount(ctx context.Context, p droverdriver.MatchCountParams) (droverdriver.MatchCount, error) {
	sp := search(&p.Filter)
	sp.Limit = p.Examine
	sp.Waiting, sp.Finished = p.Parts()
	var out droverdriver.MatchCount
	err := jobMatchCount.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var finished bool
		var c droverdriver.TableCount
		if err := rows.Scan(&finished, &c.Matched, &c.Examined, &c.LastID); err != nil {
			return err
		}
		if finished {
			out.Finished = c
		} else {
			out.Waiting = c
		}
		return nil
	}, sp)
	return out, e.wrap("count matching jobs", err)
}

func (e *executor) JobMatchCountByState(ctx context.Context, p droverdriver.MatchCountParams) (droverdriver.StateMatchCount, error) {
	sp := search(&p.Filter)
	sp.Limit = p.Examine
	sp.Waiting, sp.Finished = p.Parts()
	out := droverdriver.NewStateMatchCount()
	err := jobMatchCountByState.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var finished bool
		var state string
		var matched, examined int64
		if err := rows.Scan(&finished, &state, &matched, &examined); err != nil {
			return err
		}
		out.Add(finished, drovertype.JobState(state), matched, examined)
		return nil
	}, sp)
	return out, e.wrap("count matching jobs by state", err)
}

func (e *executor) BatchList(ctx context.Context, p droverdriver.BatchListParams) ([]*drovertype.Batch, error) {
	before := p.BeforeID
	if before <= 0 {
		before = math.MaxInt64
	}
	var out []*drovertype.Batch
	err := batchList.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		b, err := scanBatch(rows)
		if err != nil {
			return err
		}
		out = append(out, b)
		return nil
	}, batchListParams{before, p.Limit})
	return out, e.wrap("list batches", err)
}

func (e *executor) JobDeps(ctx context.Context, ids []int64) ([]droverdriver.Dep, error) {
	var out []droverdriver.Dep
	err := jobDeps.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var d droverdriver.Dep
		if err := rows.Scan(&d.Parent, &d.Child); err != nil {
			return err
		}
		out = append(out, d)
		return nil
	}, string(appendIDs(nil, ids)))
	return out, e.wrap("read workflow edges", err)
}
