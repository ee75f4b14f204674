package drover

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/engine"
	"github.com/droverhq/drover/internal/validate"
)

// JobListParams filters JobList, JobSearch, JobCount and JobBulk. Empty
// fields match everything; set fields must all hold.
type JobListParams struct {
	States []drovertype.JobState
	Queue  string
	Kind   string
	// Tags keeps the jobs that carry every one of these tags.
	Tags []string
	// Args and Metadata, when set, are JSON objects that a job's args and
	// metadata must contain, as PostgreSQL's jsonb @> defines it on both
	// stores: {"to":"a@example.com"} matches every job whose args have
	// that key with that value, among others; nested objects match
	// likewise, and an array matches an array holding at least its
	// elements.
	Args, Metadata json.RawMessage
	// Created, Scheduled (run_at: when the job was, or is, due), Attempted
	// (the start of its last attempt) and Finished bound the job's times,
	// each [From, To); a bound on a time the job has not set (never
	// attempted, not finished) excludes it.
	Created, Scheduled, Attempted, Finished drovertype.TimeRange
	// NewestFirst lists jobs by descending ID (the newest first) instead
	// of ascending.
	NewestFirst bool
	// After is the keyset cursor: the Next of the previous page (or the
	// last ID it listed), in the list's order.
	After int64
	// Limit caps the page; default 100, at most 10,000.
	Limit int
	// Scan bounds the job IDs one JobSearch reads past After, in windows
	// that each start at the next job matching States, Queue and Kind:
	// the IDs between two such jobs are skipped from an index and do not
	// count. 0 takes JobSearchScanDefault, a negative value reads on until
	// the page is full. JobList and JobBulk always read on.
	Scan int64
	// ScanTime bounds the time one JobSearch reads: it starts no window
	// of IDs once ScanTime has passed, and sizes its windows to end near
	// it. 0 takes JobSearchTimeDefault while Scan is 0 too, and no time
	// bound when Scan is set (so that a page's end depends only on the
	// IDs); negative: no time bound.
	ScanTime time.Duration
}

// JobSearchScanDefault is how many job IDs one JobSearch reads at most in
// its windows: on PostgreSQL about 100 ms for a filter of args, metadata,
// tags or times that no job in them matches, on a table of any size.
const JobSearchScanDefault = 200_000

// JobSearchTimeDefault is how long one JobSearch reads at most (the
// window under way aside): the bound that counts on a store that tests a
// filter slowly, such as SQLite's JSON containment, a function in Go.
const JobSearchTimeDefault = 250 * time.Millisecond

// jobCountParams bound JobCount and JobStateCounts: a table of up to
// 50,000 jobs is counted exactly, a larger one by a walk bounded like a
// search page, and what the walk leaves estimated from 50 windows of IDs.
var jobCountParams = engine.CountParams{Exact: 50_000, Samples: 50, Scan: JobSearchScanDefault, Budget: JobSearchTimeDefault}

// JobPage is one page of JobSearch.
type JobPage struct {
	Jobs []*drovertype.JobRow
	// Next is the After of the next page, 0 when no job lies beyond this
	// one. A page can hold fewer jobs than its Limit and still have a
	// Next: its scan bound ended it first. It holds a job whenever one
	// beyond After matches a filter of States, Queue and Kind alone; with
	// args, metadata, tags or times it can come back empty, its windows
	// holding none that matched those.
	Next int64
	// Scanned is how many job IDs the page's windows read, at most its
	// Scan.
	Scanned int64
}

// JobCount is how many jobs match a filter.
type JobCount struct {
	Count int64
	// Exact is false when Count is an estimate: a table of more than
	// 50,000 jobs is counted by a walk as long as a search page's (its
	// windows start at the jobs matching States, Queue and Kind, so a
	// filter few jobs match is counted exactly), and the rest of its ID
	// range estimated from 50 samples, so that a count costs the same on
	// ten million jobs as on fifty thousand. An estimate is never below
	// the jobs the walk found.
	Exact bool
}

// listParams checks p and turns it into the driver's filter.
func listParams(p JobListParams) (droverdriver.ListParams, error) {
	if p.Limit == 0 {
		p.Limit = 100
	}
	if p.Limit < 0 || p.Limit > 10_000 {
		return droverdriver.ListParams{}, invalidf("limit %d: must be between 1 and 10000", p.Limit)
	}
	if p.After < 0 {
		return droverdriver.ListParams{}, invalidf("after %d: must be a job id, not negative", p.After)
	}
	if p.Queue != "" {
		if err := validate.Queue(p.Queue); err != nil {
			return droverdriver.ListParams{}, err
		}
	}
	for _, s := range p.States {
		if !s.Valid() {
			return droverdriver.ListParams{}, invalidf("state %q: must be one of %v", s, drovertype.JobStates())
		}
	}
	// Text a store cannot hold (a NUL, invalid UTF-8) matches no job;
	// it is refused rather than sent to the store, which would fail.
	if err := validate.Text("kind", p.Kind); err != nil {
		return droverdriver.ListParams{}, err
	}
	for _, t := range p.Tags {
		if t == "" || strings.Contains(t, ",") {
			return droverdriver.ListParams{}, invalidf("tag %q: must be non-empty and without commas", t)
		}
		if err := validate.Text("tag", t); err != nil {
			return droverdriver.ListParams{}, err
		}
	}
	for _, f := range []struct {
		name string
		v    json.RawMessage
	}{{"args", p.Args}, {"metadata", p.Metadata}} {
		if len(f.v) == 0 {
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(f.v, &obj); err != nil || obj == nil {
			return droverdriver.ListParams{}, invalidf("%s filter %.40q: must be a JSON object, such as {\"to\":\"a@example.com\"}", f.name, f.v)
		}
		if err := validate.JSONText(f.name+" filter", f.v); err != nil {
			return droverdriver.ListParams{}, err
		}
	}
	for _, r := range []struct {
		name string
		r    drovertype.TimeRange
	}{{"created", p.Created}, {"scheduled", p.Scheduled}, {"attempted", p.Attempted}, {"finished", p.Finished}} {
		if !r.r.From.IsZero() && !r.r.To.IsZero() && !r.r.From.Before(r.r.To) {
			return droverdriver.ListParams{}, invalidf("%s range: from %s must be before to %s", r.name,
				r.r.From.Format(time.RFC3339), r.r.To.Format(time.RFC3339))
		}
	}
	return droverdriver.ListParams{States: p.States, Queue: p.Queue, Kind: p.Kind, Tags: p.Tags,
		Args: nilIfEmpty(p.Args), Metadata: nilIfEmpty(p.Metadata),
		Created: p.Created, Scheduled: p.Scheduled, Attempted: p.Attempted, Finished: p.Finished,
		AfterID: p.After, Desc: p.NewestFirst, Limit: p.Limit, Now: time.Now()}, nil
}

func nilIfEmpty(b json.RawMessage) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// JobGet returns one job, waiting, running or finished. A waiting routed
// job that no live worker can take comes back with Unroutable set.
func (c *Client[TTx]) JobGet(ctx context.Context, id int64) (*drovertype.JobRow, error) {
	r, err := c.exec.JobGet(ctx, id)
	if err != nil {
		return nil, err
	}
	row := r
	if err := c.markUnroutable(ctx, []*drovertype.JobRow{row}); err != nil {
		return nil, err
	}
	return row, nil
}

// JobList returns up to p.Limit jobs matching p, in ID order (or newest
// first), starting after p.After: the next page starts after the last ID
// returned. It reads on until the page is full or no job is left, however
// many jobs that takes; JobSearch bounds the work of a page instead.
func (c *Client[TTx]) JobList(ctx context.Context, p JobListParams) ([]*drovertype.JobRow, error) {
	p.Scan, p.ScanTime = -1, -1
	page, err := c.JobSearch(ctx, p)
	if err != nil {
		return nil, err
	}
	return page.Jobs, nil
}

// JobSearch returns a page of the jobs matching p, in ID order (or newest
// first), starting after p.After, having read at most p.Scan job IDs:
// whatever the filter and however deep the page, its cost is bounded,
// since it walks the tables' primary keys a window of IDs at a time. Each
// window starts at the next job matching p's states, queue and kind,
// which the store finds from an index (of finished jobs by queue, kind
// and failed state; of available jobs by queue), so a filter few jobs
// match skips the IDs between them. A page that reached its scan bound
// before its limit ends short, with the Next to go on from.
func (c *Client[TTx]) JobSearch(ctx context.Context, p JobListParams) (*JobPage, error) {
	lp, err := listParams(p)
	if err != nil {
		return nil, err
	}
	lp.Now = c.now()
	scan, budget := p.Scan, p.ScanTime
	if scan == 0 {
		scan = JobSearchScanDefault
		if budget == 0 {
			budget = JobSearchTimeDefault
		}
	}
	page, err := engine.Search(ctx, c.exec, lp, scan, budget)
	if err != nil {
		return nil, err
	}
	jobs := page.Jobs
	if err := c.markUnroutable(ctx, jobs); err != nil {
		return nil, err
	}
	return &JobPage{Jobs: jobs, Next: page.Next, Scanned: page.Scanned}, nil
}

// JobCount counts the jobs matching p (its After, Limit, order and Scan
// are ignored) with bounded work: exactly while a table holds at most
// 50,000 jobs or the matches are few enough to be found within a search
// page's bounds, and as an estimate beyond (JobCount.Exact).
func (c *Client[TTx]) JobCount(ctx context.Context, p JobListParams) (JobCount, error) {
	p.After, p.Limit = 0, 0
	lp, err := listParams(p)
	if err != nil {
		return JobCount{}, err
	}
	lp.Now = c.now()
	n, err := engine.CountJobs(ctx, c.exec, lp, jobCountParams)
	if err != nil {
		return JobCount{}, err
	}
	return JobCount{Count: n.N, Exact: n.Exact}, nil
}

// JobStateCounts counts, for every state, the jobs matching p but for
// its States (ignored, with its After, Limit, order and Scan): the tabs of
// a search, each state with its count. The work is one JobCount's, whatever
// the number of states: each table is read once, exactly up to 50,000 jobs;
// beyond, a walk like a page's counts the matches exactly while it reaches
// their end (a queue or kind few jobs have) and what it leaves is estimated
// (JobCount.Exact). Every state has an entry.
func (c *Client[TTx]) JobStateCounts(ctx context.Context, p JobListParams) (map[drovertype.JobState]JobCount, error) {
	p.After, p.Limit, p.States = 0, 0, nil
	lp, err := listParams(p)
	if err != nil {
		return nil, err
	}
	lp.Now = c.now()
	counts, err := engine.CountJobsByState(ctx, c.exec, lp, jobCountParams)
	if err != nil {
		return nil, err
	}
	out := make(map[drovertype.JobState]JobCount, len(counts))
	for s, n := range counts {
		out[s] = JobCount{Count: n.N, Exact: n.Exact}
	}
	return out, nil
}

// JobCancel cancels a job. A waiting job is cancelled at once; a running one
// has its context cancelled at its client's next heartbeat and ends as
// cancelled unless it completes first. A finished job is left as it is.
// It returns the job after the call.
func (c *Client[TTx]) JobCancel(ctx context.Context, id int64) (*drovertype.JobRow, error) {
	r, err := engine.Cancel(ctx, c.exec, id, c.now())
	if err != nil {
		return nil, err
	}
	return r, nil
}

// JobDiscard gives up on a job that has not started: a waiting job
// (available, scheduled or retryable) is finished as discarded at once and
// never runs. A running job is left alone (cancel it instead), as is a
// finished one. It returns the job after the call.
func (c *Client[TTx]) JobDiscard(ctx context.Context, id int64) (*drovertype.JobRow, error) {
	r, err := engine.Discard(ctx, c.exec, id, c.now())
	if err != nil {
		return nil, err
	}
	return r, nil
}

// JobRetry makes a job run again as soon as possible: a finished job
// (completed, cancelled or discarded) is made available with one more
// attempt allowed if it had none left; a scheduled or retryable job becomes
// available now. A running job is left alone. It returns the job after the
// call.
//
// A finished keyed job rejoins its key: it is blocked behind the key's
// active jobs while the key is at its limit, and starts before the key's
// other blocked jobs, in its original place in the insert order. A
// finished batch member or job with dependants is refused with
// ErrNotRetryable, because its end was already counted and settled.
func (c *Client[TTx]) JobRetry(ctx context.Context, id int64) (*drovertype.JobRow, error) {
	r, err := engine.Retry(ctx, c.exec, id, c.now())
	if err != nil {
		return nil, err
	}
	return r, nil
}

// JobCountByState counts jobs by state, in one queue or (queue "") all.
func (c *Client[TTx]) JobCountByState(ctx context.Context, queue string) (map[drovertype.JobState]int64, error) {
	return c.exec.JobCountByState(ctx, queue)
}
