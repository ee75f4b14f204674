package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/app/bench/report"
)

// keyed is the per-key scenario: a burndown whose jobs are spread round
// robin over --keys ordering keys, at most --key-limit of each key active
// at once. After the run it reads every job back from the store and checks
// that each key ran within its limit and, with a limit of 1, in insert
// order: a run that breaks either fails.
func (r *runner) keyed(ctx context.Context) (*report.Report, error) {
	rep := r.newReport("keyed")
	queue := r.queueName("")
	k := r.opts.fleetSize()
	pt, err := r.burnPoint(ctx, queue, k, r.opts.jobs, "keyed")
	if err != nil {
		return nil, err
	}
	check, err := r.checkKeys(ctx, queue)
	rep.Settings = r.settings(fmt.Sprintf("workers: %s", r.describeFleet(k)),
		fmt.Sprintf("%d keys, key limit %d", r.opts.keys, r.opts.keyLimit), check)
	fillFromPoint(rep, pt)
	if err != nil {
		return rep, err
	}
	return rep, checkLost(pt)
}

// keyOf is the key of the seq-th job of a keyed run.
func (r *runner) keyOf(seq int64) string { return fmt.Sprintf("key-%d", seq%int64(r.opts.keys)) }

// checkKeys verifies from the stored run intervals (attempted_at to
// finalized_at) that no key ever had more than --key-limit jobs running at
// once and, with a limit of 1, that each key's jobs ran in ID (insert)
// order. It returns a one-line summary for the report.
func (r *runner) checkKeys(ctx context.Context, queue string) (string, error) {
	type run struct {
		id         int64
		start, end int64
	}
	byKey := map[string][]run{}
	after := int64(0)
	for {
		page, err := r.inserts.JobList(ctx, drover.JobListParams{Queue: queue, After: after, Limit: 10_000})
		if err != nil {
			return "", fmt.Errorf("check keys from store: %w", err)
		}
		for _, j := range page {
			var a Args
			if err := json.Unmarshal(j.EncodedArgs, &a); err != nil {
				return "", fmt.Errorf("check keys: job %d: %w", j.ID, err)
			}
			if j.AttemptedAt == nil || j.FinalizedAt == nil {
				return "", fmt.Errorf("check keys: job %d is %s, not finished", j.ID, j.State)
			}
			key := r.keyOf(a.Seq)
			byKey[key] = append(byKey[key], run{j.ID, j.AttemptedAt.UnixMicro(), j.FinalizedAt.UnixMicro()})
		}
		if len(page) < 10_000 {
			break
		}
		after = page[len(page)-1].ID
	}
	most := 0
	for key, runs := range byKey {
		sort.Slice(runs, func(i, k int) bool { return runs[i].id < runs[k].id })
		if r.opts.keyLimit == 1 {
			for i := 1; i < len(runs); i++ {
				if runs[i].start < runs[i-1].end {
					return "", fmt.Errorf("key %s: job %d started before job %d ahead of it finished", key, runs[i].id, runs[i-1].id)
				}
			}
		}
		// The most runs of the key that overlap: sweep the interval edges,
		// ends before starts at equal times.
		type edge struct{ at, delta int64 }
		edges := make([]edge, 0, 2*len(runs))
		for _, x := range runs {
			edges = append(edges, edge{x.start, 1}, edge{x.end, -1})
		}
		slices.SortFunc(edges, func(a, b edge) int {
			if a.at != b.at {
				return int(a.at - b.at)
			}
			return int(a.delta - b.delta)
		})
		n := 0
		for _, e := range edges {
			n += int(e.delta)
			most = max(most, n)
		}
		if most > r.opts.keyLimit {
			return "", fmt.Errorf("key %s: %d jobs ran at once, key limit %d", key, most, r.opts.keyLimit)
		}
	}
	order := ""
	if r.opts.keyLimit == 1 {
		order = ", insert order kept"
	}
	return fmt.Sprintf("verified from the store: at most %d running per key%s", most, order), nil
}
