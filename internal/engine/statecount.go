package engine

import (
	"context"
	"math/rand/v2"

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
			if matched, scale, err = estimateByState(ctx, e, p, cp, lo, hi, !t.fin); err != nil {
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

// estimateByState counts the matches per state in cp.Samples windows of
// IDs of one table between lo and hi, placed as estimate places them (one
// at a random place in each of cp.Samples equal strata), and returns them
// with the factor that scales them to the whole range.
func estimateByState(ctx context.Context, e droverdriver.Executor, p droverdriver.ListParams, cp CountParams, lo, hi int64, waiting bool) (map[droverdriver.State]int64, float64, error) {
	span := hi - lo + 1
	samples := int64(max(cp.Samples, 1))
	width := max(int64(cp.Exact)/samples, 1)
	stratum := span / samples
	r := cp.Rand
	if r == nil {
		r = rand.New(rand.NewPCG(uint64(lo), uint64(hi)))
	}
	matched := map[droverdriver.State]int64{}
	var read int64
	for i := range samples {
		start := lo + i*stratum
		if slack := stratum - width; slack > 0 {
			start += r.Int64N(slack + 1)
		}
		w := p
		w.AfterID, w.UntilID = start-1, min(start+width-1, hi)
		c, err := e.JobMatchCountByState(ctx, droverdriver.MatchCountParams{Filter: w, Examine: int(width), Waiting: waiting, Finished: !waiting})
		if err != nil {
			return nil, 0, err
		}
		tc := c.Finished
		if waiting {
			tc = c.Waiting
		}
		for s, n := range tc.Matched {
			matched[s] += n
		}
		read += w.UntilID - w.AfterID
	}
	if read >= span {
		return matched, 1, nil
	}
	return matched, float64(span) / float64(read), nil
}
