package engine

import (
	"context"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// CountJobsByState counts, for every state, the jobs that match p but for
// its states (p.States is ignored), with the work of one CountJobs: each
// table is read once, up to cp.Exact jobs; a larger one is counted by a
// walk of windows that each start at the next job of p's queue and kind,
// within cp.Scan and cp.Budget, and what the walk leaves is estimated from
// cp.Samples windows of its IDs, so that the state tabs of a search cost
// what its count costs, on ten million jobs as on fifty thousand, and a
// queue or kind few jobs have is counted exactly in every state, as its
// count is. Every state has an entry; a state of a table the filter rules
// out (finished states of the hot table, say) counts an exact 0.
func CountJobsByState(ctx context.Context, e droverdriver.Executor, p droverdriver.ListParams, cp CountParams) (map[drovertype.JobState]Count, error) {
	p.AfterID, p.UntilID, p.Desc, p.States = 0, 0, false, nil
	waiting, finished := p.Parts()
	all, err := e.JobMatchCountByState(ctx, droverdriver.MatchCountParams{Filter: p, Examine: cp.Exact, Waiting: waiting, Finished: finished})
	if err != nil {
		return nil, err
	}
	out := make(map[drovertype.JobState]Count, len(drovertype.JobStates()))
	for _, s := range drovertype.JobStates() {
		out[s] = Count{Exact: true}
	}
	add := func(m map[drovertype.JobState]int64, scale float64, exact bool) {
		for s, n := range m {
			out[s] = Count{N: out[s].N + int64(float64(n)*scale), Exact: exact}
		}
	}
	if (!waiting || all.Waiting.Examined < int64(cp.Exact)) && (!finished || all.Finished.Examined < int64(cp.Exact)) {
		add(all.Waiting.Matched, 1, true)
		add(all.Finished.Matched, 1, true)
		return out, nil
	}
	until, err := countWalk(ctx, e, p, cp, func(win droverdriver.ListParams) (int, error) {
		c, err := e.JobMatchCountByState(ctx, droverdriver.MatchCountParams{Filter: win, Examine: int(win.UntilID - win.AfterID),
			Waiting: waiting, Finished: finished})
		add(c.Waiting.Matched, 1, true)
		add(c.Finished.Matched, 1, true)
		var n int64
		for _, m := range []map[drovertype.JobState]int64{c.Waiting.Matched, c.Finished.Matched} {
			for _, k := range m {
				n += k
			}
		}
		return int(n), err
	})
	if err != nil || until == 0 {
		return out, err
	}
	b, err := e.JobIDBounds(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range []struct {
		read, waiting bool
		lo, hi        int64
	}{{waiting, true, b.WaitingMin, b.WaitingMax}, {finished, false, b.FinishedMin, b.FinishedMax}} {
		lo := max(t.lo, until+1)
		if !t.read || lo > t.hi {
			continue
		}
		// The walk stopped short of this table's end: its states are
		// what the walk counted and an estimate of the rest.
		for _, s := range drovertype.JobStates() {
			if s.Finished() != !t.waiting {
				continue
			}
			out[s] = Count{N: out[s].N}
		}
		matched := map[drovertype.JobState]int64{}
		scale, err := sampleWindows(lo, t.hi, cp, func(after, until int64, width int) error {
			w := p
			w.AfterID, w.UntilID = after, until
			c, err := e.JobMatchCountByState(ctx, droverdriver.MatchCountParams{Filter: w, Examine: width, Waiting: t.waiting, Finished: !t.waiting})
			tc := c.Finished
			if t.waiting {
				tc = c.Waiting
			}
			for s, n := range tc.Matched {
				matched[s] += n
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		add(matched, scale, false)
	}
	return out, nil
}
