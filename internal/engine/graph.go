package engine

import (
	"cmp"
	"context"
	"slices"

	"github.com/droverhq/drover/droverdriver"
)

// Graph walks the workflow job id belongs to, its parents and dependants
// and theirs, one JobDeps statement per step away from id, and returns
// the jobs it reached (id first, then in the order reached) and the edges
// between them. It stops taking new jobs at max: a workflow larger than
// that is cut (truncated), keeping the jobs nearest to id.
func Graph(ctx context.Context, e droverdriver.Executor, id int64, max int) (jobs []int64, edges []droverdriver.Dep, truncated bool, err error) {
	seen := map[int64]bool{id: true}
	jobs = []int64{id}
	frontier := []int64{id}
	edgeSeen := map[droverdriver.Dep]bool{}
	for len(frontier) > 0 {
		deps, err := e.JobDeps(ctx, frontier)
		if err != nil {
			return nil, nil, false, err
		}
		var next []int64
		for _, d := range deps {
			for _, j := range []int64{d.Parent, d.Child} {
				if seen[j] {
					continue
				}
				if len(jobs) >= max {
					truncated = true
					continue
				}
				seen[j] = true
				jobs = append(jobs, j)
				next = append(next, j)
			}
			if seen[d.Parent] && seen[d.Child] && !edgeSeen[d] {
				edgeSeen[d] = true
				edges = append(edges, d)
			}
		}
		frontier = next
	}
	slices.SortFunc(edges, func(a, b droverdriver.Dep) int {
		return cmp.Or(cmp.Compare(a.Parent, b.Parent), cmp.Compare(a.Child, b.Child))
	})
	return jobs, edges, truncated, nil
}
