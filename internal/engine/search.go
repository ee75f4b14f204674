package engine

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/droverhq/drover/droverdriver"
)

// Job search reads the two tables by windows of IDs: every statement walks
// a primary key between two IDs, so it costs what its window holds,
// whatever the filter, and a page deep into ten million jobs costs what
// the first page does. A filter that few jobs match would need the whole
// table read to fill a page; a search bounds the IDs one page may
// examine instead (scan), and ends a short page with a cursor where it
// stopped, from which the next page goes on. Nothing here needs an index
// beyond the primary keys, so search costs inserts and completions
// nothing.

// searchFirstWindow is the width of a page's first window at the least;
// later windows double, up to searchMaxWindow, so that a filter most jobs
// match is served by one small window and a rare one by few large ones.
const (
	searchFirstWindow = 256
	searchMaxWindow   = 65_536
)

// SearchPage is one page of Search.
type SearchPage struct {
	Jobs []*droverdriver.JobRow
	// Next is the cursor of the next page (ListParams.AfterID): the last
	// job's ID when the page is full, the end of the last window read
	// when the scan bound ended it first, 0 when no job lies beyond.
	Next int64
	// Scanned is how many job IDs the page examined: the widths of the
	// windows it read.
	Scanned int64
}

// Search returns up to p.Limit jobs that match p after p.AfterID, in p's
// order, having examined at most scan IDs past the cursor (scan < 1: no
// bound, the page reads on until it is full or the tables end), and
// started no window once budget has passed (budget < 1: no time bound).
// IDs that no job holds (pruned, rolled back) cost one statement per gap,
// not their number, and do not count towards scan.
func Search(ctx context.Context, e droverdriver.Executor, p droverdriver.ListParams, scan int64, budget time.Duration) (SearchPage, error) {
	var page SearchPage
	limit := p.Limit
	width := max(int64(2*limit), searchFirstWindow)
	start := time.Now()
	for {
		next, err := e.JobIDNext(ctx, p)
		if err != nil || next == 0 {
			return page, err
		}
		if scan > 0 {
			width = min(width, scan-page.Scanned)
		}
		w := p
		w.UntilID = next + width - 1
		if p.Desc {
			w.UntilID = max(next-width+1, 1)
		}
		w.Limit = limit - len(page.Jobs)
		rows, err := e.JobList(ctx, w)
		if err != nil {
			return page, err
		}
		page.Jobs = append(page.Jobs, rows...)
		page.Scanned += width
		if len(page.Jobs) >= limit {
			page.Next = page.Jobs[len(page.Jobs)-1].ID
			return page, nil
		}
		// The window is read whole: the next starts past it. An
		// ascending window may end past the highest ID, and a
		// descending one at ID 1: either way the next JobIDNext finds
		// no job and ends the search.
		p.AfterID = w.UntilID
		if p.Desc && p.AfterID == 1 {
			return page, nil
		}
		if scan > 0 && page.Scanned >= scan {
			page.Next = p.AfterID
			return page, nil
		}
		width = min(2*width, searchMaxWindow)
		if budget > 0 {
			// The next window must fit in the time left at the pace
			// of the windows so far: a store that tests a filter
			// slowly (SQLite decoding JSON for a containment) reads
			// narrower windows instead of overshooting the budget.
			elapsed := time.Since(start)
			if elapsed >= budget {
				page.Next = p.AfterID
				return page, nil
			}
			pace := float64(page.Scanned) / max(elapsed.Seconds(), 1e-6)
			width = max(min(width, int64(pace*(budget-elapsed).Seconds())), searchFirstWindow)
		}
	}
}

// Count is how many jobs match a filter.
type Count struct {
	N int64
	// Exact is false when N is an estimate.
	Exact bool
}

// CountParams bound the work of CountJobs.
type CountParams struct {
	// Exact is how many jobs of each table are read for an exact count:
	// a table with more is estimated.
	Exact int
	// Samples is how many windows of IDs an estimate reads per table,
	// each Exact/Samples IDs wide.
	Samples int
	// Rand draws the samples' places; nil draws them from the table's
	// bounds, the same for the same table.
	Rand *rand.Rand
}

// CountJobs counts the jobs that match p (its window and order ignored)
// with bounded work. A table of at most cp.Exact jobs is counted exactly,
// by reading them all; a larger one is estimated from cp.Samples windows
// of IDs, one at a random place in each of cp.Samples equal strata of the
// table's ID range: the matches found, scaled by the range over the IDs
// read. Reading IDs rather than rows, the estimate holds however sparse
// the IDs are (pruned history, jobs that moved between the tables), and
// the strata keep it close for filters whose matches cluster in time.
func CountJobs(ctx context.Context, e droverdriver.Executor, p droverdriver.ListParams, cp CountParams) (Count, error) {
	p.AfterID, p.UntilID, p.Desc = 0, 0, false
	waiting, finished := p.Parts()
	all, err := e.JobMatchCount(ctx, droverdriver.MatchCountParams{Filter: p, Examine: cp.Exact, Waiting: waiting, Finished: finished})
	if err != nil {
		return Count{}, err
	}
	out := Count{Exact: true}
	var sampleWaiting, sampleFinished bool
	for _, t := range []struct {
		c      droverdriver.TableCount
		read   bool
		sample *bool
	}{{all.Waiting, waiting, &sampleWaiting}, {all.Finished, finished, &sampleFinished}} {
		if !t.read {
			continue
		}
		if t.c.Examined < int64(cp.Exact) {
			out.N += t.c.Matched
			continue
		}
		*t.sample = true
		out.Exact = false
	}
	if out.Exact {
		return out, nil
	}
	b, err := e.JobIDBounds(ctx)
	if err != nil {
		return Count{}, err
	}
	if sampleWaiting {
		n, err := estimate(ctx, e, p, cp, b.WaitingMin, b.WaitingMax, true)
		if err != nil {
			return Count{}, err
		}
		out.N += n
	}
	if sampleFinished {
		n, err := estimate(ctx, e, p, cp, b.FinishedMin, b.FinishedMax, false)
		if err != nil {
			return Count{}, err
		}
		out.N += n
	}
	return out, nil
}

// estimate counts the matches in cp.Samples windows of IDs of one table
// between lo and hi and scales them to the whole range.
func estimate(ctx context.Context, e droverdriver.Executor, p droverdriver.ListParams, cp CountParams, lo, hi int64, waiting bool) (int64, error) {
	span := hi - lo + 1
	samples := int64(max(cp.Samples, 1))
	width := max(int64(cp.Exact)/samples, 1)
	// A table sampled holds more than cp.Exact jobs, so its range is at
	// least as wide as the samples together.
	stratum := span / samples
	r := cp.Rand
	if r == nil {
		r = rand.New(rand.NewPCG(uint64(lo), uint64(hi)))
	}
	var matched, read int64
	for i := range samples {
		start := lo + i*stratum
		if slack := stratum - width; slack > 0 {
			start += r.Int64N(slack + 1)
		}
		w := p
		w.AfterID, w.UntilID = start-1, min(start+width-1, hi)
		c, err := e.JobMatchCount(ctx, droverdriver.MatchCountParams{Filter: w, Examine: int(width), Waiting: waiting, Finished: !waiting})
		if err != nil {
			return 0, err
		}
		t := c.Finished
		if waiting {
			t = c.Waiting
		}
		matched += t.Matched
		read += w.UntilID - w.AfterID
	}
	if read >= span {
		return matched, nil
	}
	return int64(float64(matched) * float64(span) / float64(read)), nil
}
