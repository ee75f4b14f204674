package engine

import (
	"context"

	"github.com/droverhq/drover/droverdriver"
)

// CountJobsByState counts, for every state, the jobs that match p but for
// its states (p.States is ignored), with the work of one CountJobs: each
// table is read once, up to cp.Exact jobs, and a larger one is estimated
// from cp.Samples windows of its IDs, so that the state tabs of a search
// cost what its count costs, on ten million jobs as on fifty thousand.
// Every state has an entry; a state of a table the filter rules out
// (finished states of the hot table, say) counts an exact 0.
func CountJobsByState(ctx context.Context, e droverdriver.Executor, p droverdriver.ListParams, cp CountParams) (map[droverdriver.State]Count, error) {
	p.AfterID, p.UntilID, p.Desc, p.States = 0, 0, false, nil
	waiting, finished := p.Parts()
	all, err := e.JobMatchCountByState(ctx, droverdriver.MatchCountParams{Filter: p, Examine: cp.Exact, Waiting: waiting, Finished: finished})
	if err != nil {
		return nil, err
	}
	out := make(map[droverdriver.State]Count, len(droverdriver.States))
	for _, s := range droverdriver.States {
		out[s] = Count{Exact: true}
	}
	var b *droverdriver.IDBounds
	for _, t := range []struct {
		c    droverdriver.TableStateCount
		read bool
		fin  bool
	}{{all.Waiting, waiting, false}, {all.Finished, finished, true}} {
		if !t.read {
			continue
		}
		matched := t.c.Matched
		exact := t.c.Examined < int64(cp.Exact)
		scale := 1.0
		if !exact {
			if b == nil {
				bounds, err := e.JobIDBounds(ctx)
				if err != nil {
					return nil, err
				}
				b = &bounds
			}
			lo, hi := b.WaitingMin, b.WaitingMax
			if t.fin {
				lo, hi = b.FinishedMin, b.FinishedMax
			}
			matched = map[droverdriver.State]int64{}
			scale, err = sampleWindows(lo, hi, cp, func(after, until int64, width int) error {
				w := p
				w.AfterID, w.UntilID = after, until
				c, err := e.JobMatchCountByState(ctx, droverdriver.MatchCountParams{Filter: w, Examine: width, Waiting: !t.fin, Finished: t.fin})
				tc := c.Waiting
				if t.fin {
					tc = c.Finished
				}
				for s, n := range tc.Matched {
					matched[s] += n
				}
				return err
			})
			if err != nil {
				return nil, err
			}
		}
		for _, s := range droverdriver.States {
			if s.Finished() != t.fin {
				continue
			}
			out[s] = Count{N: int64(float64(matched[s]) * scale), Exact: exact}
		}
	}
	return out, nil
}
