package droverdrivertest

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

func testRead(t *testing.T, setup opener) {
	t.Run("JobGet/missing", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		if _, err := d.Executor().JobGet(context.Background(), 424242); !errors.Is(err, droverdriver.ErrNotFound) || !strings.Contains(err.Error(), "424242") {
			t.Fatalf("missing job: %v, want ErrNotFound naming the ID", err)
		}
	})

	t.Run("JobList", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		future := time.Now().Add(time.Hour)
		got := insert(t, d.Executor(),
			job("a"),
			droverdriver.InsertParams{Queue: "a", Kind: "other", Args: []byte(`{}`), MaxAttempts: 3, RunAt: future},
			job("b"),
			job("b"),
			job("a"),
			job("a"),
		)
		// got[0] released (available), got[2] running, got[3] retryable,
		// got[4] completed, got[5] never claimed.
		b := claim(t, d.Executor(), "b", 2)
		a := claim(t, d.Executor(), "a", 2)
		if !slices.Equal(ids(a), []int64{got[0], got[4]}) || len(b) != 2 {
			t.Fatalf("claimed a %v b %v", ids(a), ids(b))
		}
		finish(t, d.Executor(),
			failed(b[1], droverdriver.OutcomeRetry, "x", future),
			result(a[1], droverdriver.OutcomeCompleted),
			result(a[0], droverdriver.OutcomeReleased),
		)
		states := map[int64]drovertype.JobState{
			got[0]: drovertype.JobStateAvailable, got[1]: drovertype.JobStateScheduled, got[2]: drovertype.JobStateRunning,
			got[3]: drovertype.JobStateRetryable, got[4]: drovertype.JobStateCompleted, got[5]: drovertype.JobStateAvailable,
		}
		wantState(t, d.Executor(), states)
		s := func(states ...drovertype.JobState) []drovertype.JobState { return states }
		tests := []struct {
			name string
			p    droverdriver.ListParams
			want []int64
		}{
			{"all", droverdriver.ListParams{Limit: 100}, got},
			{"page 1", droverdriver.ListParams{Limit: 2}, got[:2]},
			{"page 2", droverdriver.ListParams{Limit: 2, AfterID: got[1]}, got[2:4]},
			{"page 3", droverdriver.ListParams{Limit: 2, AfterID: got[3]}, got[4:]},
			{"past the end", droverdriver.ListParams{Limit: 2, AfterID: got[5]}, nil},
			{"queue", droverdriver.ListParams{Queue: "b", Limit: 100}, got[2:4]},
			{"kind", droverdriver.ListParams{Kind: "other", Limit: 100}, got[1:2]},
			{"available", droverdriver.ListParams{States: s(drovertype.JobStateAvailable), Limit: 100}, []int64{got[0], got[5]}},
			{"scheduled or retryable", droverdriver.ListParams{States: s(drovertype.JobStateScheduled, drovertype.JobStateRetryable), Limit: 100}, []int64{got[1], got[3]}},
			{"completed in a", droverdriver.ListParams{Queue: "a", States: s(drovertype.JobStateCompleted), Limit: 100}, got[4:5]},
			{"running and completed, paged", droverdriver.ListParams{States: s(drovertype.JobStateRunning, drovertype.JobStateCompleted), Limit: 1, AfterID: got[2]}, got[4:5]},
			{"waiting jobs are available later", droverdriver.ListParams{States: s(drovertype.JobStateAvailable), Now: future.Add(time.Minute), Limit: 100}, []int64{got[0], got[1], got[3], got[5]}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				jobs, err := d.Executor().JobList(ctx, tc.p)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(ids(jobs), tc.want) {
					t.Fatalf("listed %v, want %v", ids(jobs), tc.want)
				}
				for _, j := range jobs {
					if want := states[j.ID]; j.State != want && tc.p.Now.IsZero() {
						t.Errorf("job %d listed as %s, want %s", j.ID, j.State, want)
					}
				}
			})
		}
	})

	t.Run("JobCountByState", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		insert(t, d.Executor(), job("a"), job("a"), job("a"), with(job("b"), func(p *droverdriver.InsertParams) { p.RunAt = time.Now().Add(time.Hour) }))
		rows := claim(t, d.Executor(), "a", 2)
		finish(t, d.Executor(), result(rows[0], droverdriver.OutcomeCompleted))
		insert(t, d.Executor(), keyed("a", "k"), keyed("a", "k"))
		tests := []struct {
			queue string
			want  map[drovertype.JobState]int64
		}{
			{"a", map[drovertype.JobState]int64{drovertype.JobStateAvailable: 2, drovertype.JobStateRunning: 1,
				drovertype.JobStateCompleted: 1, drovertype.JobStateBlocked: 1}},
			{"b", map[drovertype.JobState]int64{drovertype.JobStateScheduled: 1}},
			{"", map[drovertype.JobState]int64{drovertype.JobStateAvailable: 2, drovertype.JobStateRunning: 1,
				drovertype.JobStateCompleted: 1, drovertype.JobStateBlocked: 1, drovertype.JobStateScheduled: 1}},
			{"none", map[drovertype.JobState]int64{}},
		}
		for _, tc := range tests {
			got, err := d.Executor().JobCountByState(ctx, tc.queue)
			if err != nil {
				t.Fatal(err)
			}
			maps.DeleteFunc(got, func(_ drovertype.JobState, n int64) bool { return n == 0 })
			if !maps.Equal(got, tc.want) {
				t.Errorf("queue %q: %v, want %v", tc.queue, got, tc.want)
			}
		}
	})

	t.Run("QueueStats", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		future := time.Now().Add(time.Hour)
		insert(t, d.Executor(),
			with(job("a"), func(p *droverdriver.InsertParams) { p.RunAt = time.Now().Add(-time.Hour) }),
			job("a"), job("a"),
			with(job("a"), func(p *droverdriver.InsertParams) { p.RunAt = future }),
			job("b"),
		)
		rows := claim(t, d.Executor(), "a", 2) // the oldest and one more
		finish(t, d.Executor(), failed(rows[1], droverdriver.OutcomeRetry, "x", future))
		now := time.Now() // after the inserts, by the store's clock or ours
		stats, err := d.Executor().QueueStats(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(stats, func(x, y drovertype.QueueStats) int { return strings.Compare(x.Queue, y.Queue) })
		if len(stats) != 2 {
			t.Fatalf("stats %+v, want queues a and b", stats)
		}
		a, b := stats[0], stats[1]
		if a.Queue != "a" || a.Available != 1 || a.Scheduled != 1 || a.Retryable != 1 || a.Running != 1 {
			t.Errorf("queue a: %+v, want 1 available, scheduled, retryable and running", a)
		}
		if a.OldestAvailable == nil || a.OldestAvailable.After(now) {
			t.Errorf("queue a: oldest available %v, want one not after now", a.OldestAvailable)
		}
		if b.Queue != "b" || b.Available != 1 || b.OldestAvailable == nil {
			t.Errorf("queue b: %+v", b)
		}
		// Later, the waiting jobs are claimable too; got[0] runs.
		later, err := d.Executor().QueueStats(ctx, now.Add(2*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range later {
			if s.Queue == "a" && (s.Available != 3 || s.Scheduled != 0 || s.Retryable != 0 || s.Running != 1) {
				t.Errorf("queue a two hours later: %+v, want 3 available and 1 running", s)
			}
		}
	})

	t.Run("FinishedStats", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		got := insert(t, d.Executor(), job("a"), job("a"), job("a"), job("b"))
		rows := claim(t, d.Executor(), "a", 2)
		finish(t, d.Executor(), result(rows[0], droverdriver.OutcomeCompleted), failed(rows[1], droverdriver.OutcomeDiscarded, "x", time.Time{}))
		cancelledAt := time.Now()
		if _, err := cancel(ctx, d.Executor(), got[2], cancelledAt); err != nil {
			t.Fatal(err)
		}
		stats, err := d.Executor().FinishedStats(ctx, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if len(stats) != 1 {
			t.Fatalf("stats %+v, want queue a only", stats)
		}
		a := stats[0]
		if a.Queue != "a" || a.Completed != 1 || a.Cancelled != 1 || a.Discarded != 1 {
			t.Fatalf("queue a: %+v, want one of each end", a)
		}
		if a.PickupP50 < 0 || a.PickupP50 > a.PickupP95 || a.PickupP95 > a.PickupP99 || a.PickupP99 > time.Hour {
			t.Errorf("pickup percentiles %v %v %v", a.PickupP50, a.PickupP95, a.PickupP99)
		}
		// The window is (since, until]: the cancel at cancelledAt is its
		// last end.
		for _, w := range []struct {
			since, until time.Time
			cancelled    int64
		}{
			{cancelledAt.Add(-time.Hour), cancelledAt, 1},
			{cancelledAt, cancelledAt.Add(time.Hour), 0},
		} {
			stats, err := d.Executor().FinishedStats(ctx, w.since, w.until)
			if err != nil {
				t.Fatal(err)
			}
			var n int64
			for _, s := range stats {
				n += s.Cancelled
			}
			if n != w.cancelled {
				t.Errorf("window (%v, %v]: %d cancelled, want %d", w.since, w.until, n, w.cancelled)
			}
		}
	})
}
