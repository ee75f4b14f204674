package engine

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// Job search reads the two tables by windows of IDs: every window walks a
// primary key between two IDs, so it costs what it holds, whatever the
// filter, and a page deep into ten million jobs costs what the first page
// does. Each window starts at the next job that matches the filter's
// states, queue and kind (JobIDNext), which the store finds from an index
// where it has one, so that a filter few jobs match costs one statement per
// gap between its jobs, not the gap's width, and a first page is never
// empty while some job matches those three. Filters no index serves (args,
// metadata, tags, times) are tested in the windows only: a search bounds
// the IDs one page's windows may read instead (scan), and ends a short
// page with a cursor where it stopped, from which the next page goes on.

// searchFirstWindow is the width of a page's first window at the least;
// later windows double, up to searchMaxWindow, while they find jobs
// beyond the one they start at, so that a filter most jobs match is
// served by one small window and a rarer one by few large ones; a window
// that finds only its first job is followed by a narrow one again, since
// JobIDNext, not the window, finds such a filter's next job.
const (
	searchFirstWindow = 256
	searchMaxWindow   = 65_536
)

// SearchPage is one page of Search.
type SearchPage struct {
	Jobs []*drovertype.JobRow
	// Next is the cursor of the next page (ListParams.AfterID): the last
	// job's ID when the page is full, the end of the last window read
	// when the scan bound ended it first, 0 when no job lies beyond.
	Next int64
	// Scanned is how many job IDs the page's windows read: their widths.
	Scanned int64
}

// Search returns up to p.Limit jobs that match p after p.AfterID, in p's
// order, having read at most scan IDs in windows past the cursor (scan <
// 1: no bound, the page reads on until it is full or the tables end), and
// started no window once budget has passed (budget < 1: no time bound).
// IDs between windows that hold no job matching p's states, queue and
// kind cost one statement per gap, not their number, and do not count
// towards scan.
func Search(ctx context.Context, e droverdriver.Executor, p droverdriver.ListParams, scan int64, budget time.Duration) (SearchPage, error) {
	var page SearchPage
	limit := p.Limit
	w := walker{e: e, scan: scan, budget: budget, width: max(int64(2*limit), searchFirstWindow)}
	next, err := w.walk(ctx, p, func(win droverdriver.ListParams) (int, bool, error) {
		win.Limit = limit - len(page.Jobs)
		rows, err := e.JobList(ctx, win)
		page.Jobs = append(page.Jobs, rows...)
		return len(rows), len(page.Jobs) >= limit, err
	})
	page.Scanned = w.scanned
	if err != nil {
		return page, err
	}
	page.Next = next
	if len(page.Jobs) >= limit {
		page.Next = page.Jobs[len(page.Jobs)-1].ID
	}
	return page, nil
}

// walker reads windows of IDs for Search and CountJobs.
type walker struct {
	e droverdriver.Executor
	// scan bounds the IDs the windows read (< 1: none), budget the time
	// (< 1: none); width is the first window's.
	scan    int64
	budget  time.Duration
	width   int64
	scanned int64
}

// walk visits windows of IDs of p in p's order, from p.AfterID, each
// starting at the next job that matches p's states, queue and kind, until
// visit says it is done, no such job is left, or the scan bound or budget
// ends it. visit reads one window (AfterID and UntilID set) and reports
// how many jobs it found there. walk returns where the next walk would go
// on: 0 when no job lies beyond, the end of the last window otherwise.
func (w *walker) walk(ctx context.Context, p droverdriver.ListParams, visit func(droverdriver.ListParams) (found int, done bool, err error)) (int64, error) {
	width := w.width
	start := time.Now()
	for {
		next, err := w.e.JobIDNext(ctx, p)
		if err != nil || next == 0 {
			return 0, err
		}
		if w.scan > 0 {
			width = min(width, w.scan-w.scanned)
		}
		// The window starts at next, not at the cursor: the IDs between
		// hold no job of the filter's states, queue and kind, and the
		// window statements walk the primary key from their start.
		win := p
		win.AfterID, win.UntilID = next-1, next+width-1
		if p.Desc {
			win.AfterID, win.UntilID = next+1, max(next-width+1, 1)
		}
		found, done, err := visit(win)
		if err != nil {
			return 0, err
		}
		w.scanned += width
		// The window is read whole: the next starts past it. An
		// ascending window may end past the highest ID, and a
		// descending one at ID 1: either way the next JobIDNext finds
		// no job and ends the walk.
		p.AfterID = win.UntilID
		if done {
			return p.AfterID, nil
		}
		if p.Desc && p.AfterID == 1 {
			return 0, nil
		}
		if w.scan > 0 && w.scanned >= w.scan {
			return p.AfterID, nil
		}
		if found > 1 {
			width = min(2*width, searchMaxWindow)
		} else {
			width = w.width
		}
		if w.budget > 0 {
			// The next window must fit in the time left at the pace
			// of the windows so far: a store that tests a filter
			// slowly (SQLite decoding JSON for a containment) reads
			// narrower windows instead of overshooting the budget.
			elapsed := time.Since(start)
			if elapsed >= w.budget {
				return p.AfterID, nil
			}
			pace := float64(w.scanned) / max(elapsed.Seconds(), 1e-6)
			width = max(min(width, int64(pace*(w.budget-elapsed).Seconds())), searchFirstWindow)
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
	// a table with more is counted by a walk (Scan, Budget), and what the
	// walk leaves is estimated.
	Exact int
	// Scan and Budget bound the walk: the IDs its windows read (< 1: no
	// bound) and its time (< 1: no bound), as for a page of Search.
	Scan   int64
	Budget time.Duration
	// Samples is how many windows of IDs an estimate reads per table,
	// each Exact/Samples IDs wide.
	Samples int
	// Rand draws the samples' places; nil draws them from the table's
	// bounds, the same for the same table.
	Rand *rand.Rand
}

// CountJobs counts the jobs that match p (its window and order ignored)
// with bounded work. Tables of at most cp.Exact jobs are counted exactly,
// by reading them all. Otherwise a walk counts the matches from the lowest
// ID on, in windows that each start at the next job matching p's states,
// queue and kind (as Search reads a page), within cp.Scan and cp.Budget:
// a filter few jobs match is counted exactly however large the tables,
// since the walk skips the IDs between its jobs. When the walk stops
// first, what lies beyond it is estimated from cp.Samples windows of IDs
// per table, one at a random place in each of cp.Samples equal strata of
// the rest of the table's ID range: the matches found, scaled by the range
// over the IDs read, added to those the walk counted. Reading IDs rather
// than rows, the estimate holds however sparse the IDs are (pruned
// history, jobs that moved between the tables), and the strata keep it
// close for filters whose matches cluster in time. A count is never less
// than the matches the walk found, so a filter that matches jobs is never
// counted as none.
func CountJobs(ctx context.Context, e droverdriver.Executor, p droverdriver.ListParams, cp CountParams) (Count, error) {
	p.AfterID, p.UntilID, p.Desc = 0, 0, false
	waiting, finished := p.Parts()
	all, err := e.JobMatchCount(ctx, droverdriver.MatchCountParams{Filter: p, Examine: cp.Exact, Waiting: waiting, Finished: finished})
	if err != nil {
		return Count{}, err
	}
	if (!waiting || all.Waiting.Examined < int64(cp.Exact)) && (!finished || all.Finished.Examined < int64(cp.Exact)) {
		return Count{N: all.Waiting.Matched + all.Finished.Matched, Exact: true}, nil
	}
	var walked int64
	until, err := countWalk(ctx, e, p, cp, func(win droverdriver.ListParams) (int, error) {
		c, err := e.JobMatchCount(ctx, droverdriver.MatchCountParams{Filter: win, Examine: int(win.UntilID - win.AfterID),
			Waiting: waiting, Finished: finished})
		n := c.Waiting.Matched + c.Finished.Matched
		walked += n
		return int(n), err
	})
	if err != nil {
		return Count{}, err
	}
	if until == 0 {
		return Count{N: walked, Exact: true}, nil
	}
	b, err := e.JobIDBounds(ctx)
	if err != nil {
		return Count{}, err
	}
	out := Count{N: walked}
	for _, t := range []struct {
		read, waiting bool
		lo, hi        int64
	}{{waiting, true, b.WaitingMin, b.WaitingMax}, {finished, false, b.FinishedMin, b.FinishedMax}} {
		if lo := max(t.lo, until+1); t.read && lo <= t.hi {
			n, err := estimate(ctx, e, p, cp, lo, t.hi, t.waiting)
			if err != nil {
				return Count{}, err
			}
			out.N += n
		}
	}
	return out, nil
}

// countWalk walks p's windows from its lowest ID as CountJobs does,
// within cp.Scan and cp.Budget, and visit counts the matches of each
// window. It returns 0 when the walk counted every match, or the ID it
// stopped at, past which matches are left.
func countWalk(ctx context.Context, e droverdriver.Executor, p droverdriver.ListParams, cp CountParams, visit func(droverdriver.ListParams) (int, error)) (int64, error) {
	w := walker{e: e, scan: cp.Scan, budget: cp.Budget, width: searchFirstWindow}
	until, err := w.walk(ctx, p, func(win droverdriver.ListParams) (int, bool, error) {
		n, err := visit(win)
		return n, false, err
	})
	if err != nil || until == 0 {
		return 0, err
	}
	// A walk its budget ended may have counted the last match already:
	// one more seek says whether any lies beyond.
	p.AfterID = until
	next, err := e.JobIDNext(ctx, p)
	if err != nil || next == 0 {
		return 0, err
	}
	return until, nil
}

// estimate counts the matches in cp.Samples windows of IDs of one table
// between lo and hi and scales them to the whole range.
func estimate(ctx context.Context, e droverdriver.Executor, p droverdriver.ListParams, cp CountParams, lo, hi int64, waiting bool) (int64, error) {
	var matched int64
	scale, err := sampleWindows(lo, hi, cp, func(after, until int64, width int) error {
		w := p
		w.AfterID, w.UntilID = after, until
		c, err := e.JobMatchCount(ctx, droverdriver.MatchCountParams{Filter: w, Examine: width, Waiting: waiting, Finished: !waiting})
		t := c.Finished
		if waiting {
			t = c.Waiting
		}
		matched += t.Matched
		return err
	})
	return int64(float64(matched) * scale), err
}

// sampleWindows calls count on cp.Samples windows of IDs (after, until]
// between lo and hi, one at a random place in each of cp.Samples equal
// strata of the range, each cp.Exact/cp.Samples IDs wide at most (a range
// no wider than the samples together is one window), and returns the
// factor that scales what they matched to the whole range.
func sampleWindows(lo, hi int64, cp CountParams, count func(after, until int64, width int) error) (float64, error) {
	span := hi - lo + 1
	samples := int64(max(cp.Samples, 1))
	width := max(int64(cp.Exact)/samples, 1)
	if span <= samples*width {
		samples, width = 1, span
	}
	stratum := span / samples
	r := cp.Rand
	if r == nil {
		r = rand.New(rand.NewPCG(uint64(lo), uint64(hi)))
	}
	var read int64
	for i := range samples {
		start := lo + i*stratum
		if slack := stratum - width; slack > 0 {
			start += r.Int64N(slack + 1)
		}
		after, until := start-1, min(start+width-1, hi)
		if err := count(after, until, int(width)); err != nil {
			return 0, err
		}
		read += until - after
	}
	if read >= span {
		return 1, nil
	}
	return float64(span) / float64(read), nil
}
