package drover_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/engine"
)

// largeStoreJobs is how many jobs TestJobSearchLargeStore loads into one
// queue before the jobs its filters look for: more than a page's scan
// bound (JobSearchScanDefault), so that a search reading windows from the
// lowest ID alone would end its first page before reaching them.
const largeStoreJobs = 300_000

// TestJobSearchLargeStore loads 300,000 jobs into one queue, half of them
// completed and half waiting, then a few jobs after them of another queue,
// of a flaky kind (discarded, completed, retryable), running and
// scheduled, and searches for those by queue, state and kind, alone and
// together, oldest and newest first (issue 38: on such a store a search
// for queue topic:rp counted "about 0" above its one row, and one for
// discarded flaky jobs came back empty). Every first page must hold every
// job its filter matches, and the count must say exactly how many: each
// window of a page starts at the next job its states, queue and kind
// match, found from an index, so the 300,000 jobs in between cost a
// statement, not a scan; so must the counts by state (the dashboard's
// tabs). The time of each first page and count is logged
// (the bound they are held to is the search's own: a page reads at most
// JobSearchScanDefault IDs and starts no window after JobSearchTimeDefault;
// performance is measured in benchmarks, not asserted here).
func TestJobSearchLargeStore(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 300,000 jobs")
	}
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		b := setup(t, s, 1, anyKind)
		load := time.Now()
		const chunk = 5000
		for n := 0; n < largeStoreJobs; n += chunk {
			jobs := make([]drover.InsertManyParams, chunk)
			for i := range jobs {
				jobs[i] = drover.InsertManyParams{Args: drover.RawArgs{KindName: "noop", JSON: json.RawMessage(`{}`)},
					Opts: &drover.InsertOpts{Queue: "bulk"}}
			}
			if _, err := b.client.InsertMany(ctx, jobs); err != nil {
				t.Fatal(err)
			}
		}
		// The first half completes: history in finished_jobs, the rest a
		// backlog in the hot table. The store's own statements do it in
		// claims of chunk jobs, as a client's producer and completer
		// would in smaller ones.
		for done := 0; done < largeStoreJobs/2; done += chunk {
			rows, err := b.d.Executor().JobClaim(ctx, droverdriver.ClaimParams{Queue: "bulk", Max: chunk, Owner: "w", Lease: time.Hour})
			if err != nil || len(rows) != chunk {
				t.Fatalf("claim: %d jobs, %v", len(rows), err)
			}
			results := make([]droverdriver.Result, len(rows))
			for i, r := range rows {
				results[i] = droverdriver.Result{ID: r.ID, Attempt: r.Attempt, LeaseToken: r.LeaseToken, Outcome: droverdriver.OutcomeCompleted}
			}
			if _, err := engine.Finish(ctx, b.d.Executor(), results); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("loaded %d jobs in %s", largeStoreJobs, time.Since(load).Round(time.Millisecond))

		// The jobs the filters look for, each alone in a queue or kind
		// of its own, after the 300,000.
		needle := func(queue, kind string, opts drover.InsertOpts) int64 {
			opts.Queue = queue
			row, err := b.client.Insert(ctx, drover.RawArgs{KindName: kind, JSON: json.RawMessage(`{}`)}, &opts)
			if err != nil {
				t.Fatal(err)
			}
			return row.ID
		}
		ids := map[string]int64{
			"rp":        needle("topic:rp", "deliver", drover.InsertOpts{}),
			"rp done":   needle("topic:rp", "deliver", drover.InsertOpts{}),
			"flaky":     needle("flaky", "flaky", drover.InsertOpts{MaxAttempts: 1}),
			"flaky ok":  needle("flaky", "flaky", drover.InsertOpts{}),
			"flaky 2":   needle("flaky", "flaky", drover.InsertOpts{}),
			"running":   needle("slow", "slow", drover.InsertOpts{}),
			"scheduled": needle("bulk", "noop", drover.InsertOpts{RunAt: time.Now().Add(time.Hour)}),
		}
		claim := func(queue string, n int) []*drovertype.JobRow {
			rows, err := b.remote.Claim(ctx, drover.ClaimParams{Queue: queue, Max: n, Owner: "w", Lease: time.Hour})
			if err != nil || len(rows) != n {
				t.Fatalf("claim %s: %d jobs, %v", queue, len(rows), err)
			}
			return rows
		}
		claim("slow", 1)
		rp := claim("topic:rp", 1)[0]
		if rp.ID != ids["rp"] {
			t.Fatalf("claimed %d of topic:rp, want %d", rp.ID, ids["rp"])
		}
		flaky := claim("flaky", 3)
		if _, err := b.remote.Finish(ctx, []drover.AttemptResult{
			{ID: rp.ID, Attempt: 1, LeaseToken: rp.LeaseToken, Outcome: drover.AttemptCompleted},
			{ID: flaky[0].ID, Attempt: 1, LeaseToken: flaky[0].LeaseToken, Outcome: drover.AttemptFailed, Error: "flaked"},
			{ID: flaky[1].ID, Attempt: 1, LeaseToken: flaky[1].LeaseToken, Outcome: drover.AttemptCompleted},
			{ID: flaky[2].ID, Attempt: 1, LeaseToken: flaky[2].LeaseToken, Outcome: drover.AttemptFailed, Error: "flaked",
				RetryAt: time.Now().Add(time.Hour)},
		}); err != nil {
			t.Fatal(err)
		}
		// "rp" is now completed; "rp done" waits in topic:rp.

		st := func(states ...drovertype.JobState) []drovertype.JobState { return states }
		for _, tc := range []struct {
			name string
			p    drover.JobListParams
			want []string
		}{
			{"queue topic:rp", drover.JobListParams{Queue: "topic:rp"}, []string{"rp", "rp done"}},
			{"queue topic:rp, completed", drover.JobListParams{Queue: "topic:rp", States: st(drovertype.JobStateCompleted)}, []string{"rp"}},
			{"queue topic:rp, available", drover.JobListParams{Queue: "topic:rp", States: st(drovertype.JobStateAvailable)}, []string{"rp done"}},
			{"kind flaky", drover.JobListParams{Kind: "flaky"}, []string{"flaky", "flaky ok", "flaky 2"}},
			{"discarded", drover.JobListParams{States: st(drovertype.JobStateDiscarded)}, []string{"flaky"}},
			{"discarded, kind flaky", drover.JobListParams{States: st(drovertype.JobStateDiscarded), Kind: "flaky"}, []string{"flaky"}},
			{"completed, kind flaky", drover.JobListParams{States: st(drovertype.JobStateCompleted), Kind: "flaky"}, []string{"flaky ok"}},
			{"retryable", drover.JobListParams{States: st(drovertype.JobStateRetryable)}, []string{"flaky 2"}},
			{"running", drover.JobListParams{States: st(drovertype.JobStateRunning)}, []string{"running"}},
			{"running, queue slow, kind slow", drover.JobListParams{States: st(drovertype.JobStateRunning), Queue: "slow", Kind: "slow"}, []string{"running"}},
			{"scheduled, queue bulk", drover.JobListParams{States: st(drovertype.JobStateScheduled), Queue: "bulk"}, []string{"scheduled"}},
			{"cancelled", drover.JobListParams{States: st(drovertype.JobStateCancelled)}, nil},
			{"queue topic:rp, kind noop", drover.JobListParams{Queue: "topic:rp", Kind: "noop"}, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				want := make([]int64, len(tc.want))
				for i, n := range tc.want {
					want[i] = ids[n]
				}
				reversed := slices.Clone(want)
				slices.Reverse(reversed)
				for _, way := range []struct {
					name string
					desc bool
					want []int64
				}{{"oldest first", false, want}, {"newest first", true, reversed}} {
					p := tc.p
					p.NewestFirst = way.desc
					start := time.Now()
					page, err := b.client.JobSearch(ctx, p)
					if err != nil {
						t.Fatal(err)
					}
					took := time.Since(start)
					if got := idsOf(page.Jobs); !slices.Equal(got, way.want) {
						t.Errorf("%s: the first page lists %v (next %d, %d IDs read), want %v", way.name, got, page.Next, page.Scanned, way.want)
					}
					t.Logf("%s: first page in %s, %d IDs read", way.name, took.Round(time.Microsecond), page.Scanned)
				}
				start := time.Now()
				n, err := b.client.JobCount(ctx, tc.p)
				if err != nil {
					t.Fatal(err)
				}
				if n.Count != int64(len(want)) || !n.Exact {
					t.Errorf("count %+v, want exactly %d", n, len(want))
				}
				t.Logf("count in %s", time.Since(start).Round(time.Microsecond))
				// The dashboard's tabs count the filter without its
				// states: for a queue or kind of few jobs every state is
				// counted exactly, and the filter's states add up to its
				// count (a filter of states alone, or of queue bulk, is
				// estimated, as it matches 300,000 jobs).
				start = time.Now()
				tabs, err := b.client.JobStateCounts(ctx, tc.p)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("counts by state in %s", time.Since(start).Round(time.Microsecond))
				if tc.p.Queue == "bulk" || tc.p.Queue == "" && tc.p.Kind == "" {
					return
				}
				var inStates int64
				for s, c := range tabs {
					if !c.Exact {
						t.Errorf("the count of %s is estimated (%d), want it exact", s, c.Count)
					}
					if len(tc.p.States) == 0 || slices.Contains(tc.p.States, s) {
						inStates += c.Count
					}
				}
				if inStates != int64(len(want)) {
					t.Errorf("counts by state %v, want %d in the filter's states", tabs, len(want))
				}
			})
		}
	})
}
