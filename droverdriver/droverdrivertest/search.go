package droverdrivertest

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/engine"
)

// marked returns n jobs of queue "a", every every-th of them (the first
// included) changed by mark.
func marked(n, every int, mark func(*droverdriver.InsertParams)) []droverdriver.InsertParams {
	jobs := make([]droverdriver.InsertParams, n)
	for i := range jobs {
		jobs[i] = job("a")
		if i%every == 0 {
			mark(&jobs[i])
		}
	}
	return jobs
}

func testSearch(t *testing.T, setup opener) {
	// spread inserts ten jobs of queue "a" and completes the second,
	// fifth and eighth, so that both tables hold jobs and IDs alternate
	// between them.
	spread := func(t *testing.T, d droverdriver.Driver) []int64 {
		t.Helper()
		got := insert(t, d.Executor(), job("a"), job("a"), job("a"), job("a"), job("a"), job("a"), job("a"), job("a"), job("a"), job("a"))
		rows := claim(t, d.Executor(), "a", 8)
		finish(t, d.Executor(), result(rows[1], droverdriver.OutcomeCompleted), result(rows[4], droverdriver.OutcomeCompleted),
			result(rows[7], droverdriver.OutcomeCompleted))
		return got
	}
	pick := func(got []int64, at ...int) []int64 {
		out := make([]int64, len(at))
		for i, k := range at {
			out[i] = got[k]
		}
		return out
	}

	t.Run("JobList/window", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		got := spread(t, d)
		completed := []drovertype.JobState{drovertype.JobStateCompleted}
		tests := []struct {
			name string
			p    droverdriver.ListParams
			want []int64
		}{
			{"after, until", droverdriver.ListParams{AfterID: got[0], UntilID: got[4]}, pick(got, 1, 2, 3, 4)},
			{"until alone", droverdriver.ListParams{UntilID: got[2]}, pick(got, 0, 1, 2)},
			{"descending from the newest", droverdriver.ListParams{Desc: true}, pick(got, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)},
			{"descending, after, until", droverdriver.ListParams{Desc: true, AfterID: got[7], UntilID: got[4]}, pick(got, 6, 5, 4)},
			{"descending, limited", droverdriver.ListParams{Desc: true, Limit: 3}, pick(got, 9, 8, 7)},
			{"descending, finished only", droverdriver.ListParams{Desc: true, States: completed}, pick(got, 7, 4, 1)},
			{"finished in a window", droverdriver.ListParams{States: completed, AfterID: got[1], UntilID: got[7]}, pick(got, 4, 7)},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				if tc.p.Limit == 0 {
					tc.p.Limit = 100
				}
				jobs, err := d.Executor().JobList(context.Background(), tc.p)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(ids(jobs), tc.want) {
					t.Fatalf("listed %v, want %v", ids(jobs), tc.want)
				}
			})
		}
	})

	t.Run("JobIDNext", func(t *testing.T) {
		// The next ID of a job matching a filter's states, queue and
		// kind, past the jobs that do not: after spread's ten jobs of
		// queue "a", a running job of queue "b", a completed one of
		// "b", an available one of kind "k2", a discarded one of "b"
		// and a scheduled one.
		t.Parallel()
		d := setup(t)
		got := spread(t, d)
		k2 := with(job("a"), func(p *droverdriver.InsertParams) { p.Kind = "k2" })
		later := with(job("a"), func(p *droverdriver.InsertParams) { p.RunAt = time.Now().Add(time.Hour) })
		got = append(got, insert(t, d.Executor(), job("b"), job("b"), k2, job("b"), later)...)
		rows := claim(t, d.Executor(), "b", 3)
		if !slices.Equal(ids(rows), pick(got, 10, 11, 13)) {
			t.Fatalf("claimed %v, want %v", ids(rows), pick(got, 10, 11, 13))
		}
		finish(t, d.Executor(), result(rows[1], droverdriver.OutcomeCompleted), result(rows[2], droverdriver.OutcomeDiscarded))
		completed := []drovertype.JobState{drovertype.JobStateCompleted}
		running := []drovertype.JobState{drovertype.JobStateRunning}
		available := []drovertype.JobState{drovertype.JobStateAvailable}
		discarded := []drovertype.JobState{drovertype.JobStateDiscarded}
		scheduled := []drovertype.JobState{drovertype.JobStateScheduled}
		tests := []struct {
			name string
			p    droverdriver.ListParams
			want int64
		}{
			{"first", droverdriver.ListParams{}, got[0]},
			{"into finished jobs", droverdriver.ListParams{AfterID: got[0]}, got[1]},
			{"past the end", droverdriver.ListParams{AfterID: got[14]}, 0},
			{"newest", droverdriver.ListParams{Desc: true}, got[14]},
			{"descending", droverdriver.ListParams{Desc: true, AfterID: got[2]}, got[1]},
			{"descending past the start", droverdriver.ListParams{Desc: true, AfterID: got[0]}, 0},
			{"finished jobs only", droverdriver.ListParams{AfterID: got[1], States: completed}, got[4]},
			{"hot table only", droverdriver.ListParams{AfterID: got[0], States: running}, got[2]},
			{"inside a window", droverdriver.ListParams{AfterID: got[4], UntilID: got[4] + 1, States: completed}, 0},
			{"a state skips the others", droverdriver.ListParams{States: available}, got[8]},
			{"a state, descending", droverdriver.ListParams{Desc: true, States: running}, got[10]},
			{"a state, descending from a cursor", droverdriver.ListParams{Desc: true, AfterID: got[10], States: running}, got[6]},
			{"a queue skips the others", droverdriver.ListParams{Queue: "b"}, got[10]},
			{"a queue of finished jobs", droverdriver.ListParams{Queue: "b", States: completed}, got[11]},
			{"a kind", droverdriver.ListParams{Kind: "k2"}, got[12]},
			{"a kind, descending", droverdriver.ListParams{Kind: "k2", Desc: true}, got[12]},
			{"a failed state", droverdriver.ListParams{States: discarded}, got[13]},
			{"a failed state and a kind", droverdriver.ListParams{States: discarded, Kind: "k2"}, 0},
			{"a failed state and a queue", droverdriver.ListParams{States: discarded, Queue: "b"}, got[13]},
			{"scheduled", droverdriver.ListParams{States: scheduled}, got[14]},
			{"a queue and a state not of it", droverdriver.ListParams{Queue: "b", States: available}, 0},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				id, err := d.Executor().JobIDNext(context.Background(), tc.p)
				if err != nil {
					t.Fatal(err)
				}
				if id != tc.want {
					t.Fatalf("next ID %d, want %d", id, tc.want)
				}
			})
		}
	})

	t.Run("JobIDBounds", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		b, err := d.Executor().JobIDBounds(context.Background())
		if err != nil || b != (droverdriver.IDBounds{}) {
			t.Fatalf("empty store: %+v, %v", b, err)
		}
		got := spread(t, d)
		b, err = d.Executor().JobIDBounds(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if want := (droverdriver.IDBounds{WaitingMin: got[0], WaitingMax: got[9], FinishedMin: got[1], FinishedMax: got[7]}); b != want {
			t.Fatalf("bounds %+v, want %+v", b, want)
		}
	})

	t.Run("JobMatchCount", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		got := spread(t, d)
		running := []drovertype.JobState{drovertype.JobStateRunning}
		tests := []struct {
			name string
			p    droverdriver.MatchCountParams
			want droverdriver.MatchCount
		}{
			{"both tables", droverdriver.MatchCountParams{Examine: 100, Waiting: true, Finished: true},
				droverdriver.MatchCount{Waiting: counted(7, 7, got[9]), Finished: counted(3, 3, got[7])}},
			{"filtered", droverdriver.MatchCountParams{Filter: droverdriver.ListParams{States: running}, Examine: 100, Waiting: true, Finished: true},
				droverdriver.MatchCount{Waiting: counted(5, 7, got[9])}},
			{"examine caps each table", droverdriver.MatchCountParams{Filter: droverdriver.ListParams{States: running}, Examine: 2, Waiting: true, Finished: true},
				droverdriver.MatchCount{Waiting: counted(2, 2, got[2])}},
			{"a window", droverdriver.MatchCountParams{Filter: droverdriver.ListParams{AfterID: got[3], UntilID: got[6]}, Examine: 100, Waiting: true, Finished: true},
				droverdriver.MatchCount{Waiting: counted(2, 2, got[6]), Finished: counted(1, 1, got[4])}},
			{"finished only", droverdriver.MatchCountParams{Examine: 100, Finished: true},
				droverdriver.MatchCount{Finished: counted(3, 3, got[7])}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				c, err := d.Executor().JobMatchCount(context.Background(), tc.p)
				if err != nil {
					t.Fatal(err)
				}
				if c != tc.want {
					t.Fatalf("count %+v, want %+v", c, tc.want)
				}
			})
		}
	})

	t.Run("JobMatchCount/estimate", func(t *testing.T) {
		// Beyond its exact bound a count is estimated from windows of
		// IDs; every third job matches, so each window holds a third of
		// matches and the estimate lands close.
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		const n = 3000
		insert(t, d.Executor(), marked(n, 3, func(p *droverdriver.InsertParams) { p.Kind = "hit" })...)
		hit := droverdriver.ListParams{Kind: "hit"}
		exact, err := engine.CountJobs(ctx, d.Executor(), hit, engine.CountParams{Exact: 5000, Samples: 10})
		if err != nil || exact != (engine.Count{N: n / 3, Exact: true}) {
			t.Fatalf("exact count %+v, %v; want %d exactly", exact, err, n/3)
		}
		est, err := engine.CountJobs(ctx, d.Executor(), hit, engine.CountParams{Exact: 300, Scan: 300, Samples: 10})
		if err != nil {
			t.Fatal(err)
		}
		if est.Exact || est.N < n/3*9/10 || est.N > n/3*11/10 {
			t.Fatalf("estimate %+v, want %d within 10%%, not exact", est, n/3)
		}
	})

	t.Run("JobMatchCount/walk", func(t *testing.T) {
		// A filter few jobs match is counted exactly by the walk however
		// many jobs lie between its matches, which a count by samples
		// would have missed: three of 3,000 jobs, each its own window of
		// the walk's 1,000 IDs, where samples read 30 IDs each; and so
		// are its counts by state, the dashboard's tabs.
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		insert(t, d.Executor(), marked(3000, 1000, func(p *droverdriver.InsertParams) { p.Queue = "rare" })...)
		claim(t, d.Executor(), "rare", 1)
		rare := droverdriver.ListParams{Queue: "rare"}
		cp := engine.CountParams{Exact: 300, Scan: 1000, Samples: 10}
		c, err := engine.CountJobs(ctx, d.Executor(), rare, cp)
		if err != nil || c != (engine.Count{N: 3, Exact: true}) {
			t.Fatalf("count %+v, %v; want 3 exactly", c, err)
		}
		byState, err := engine.CountJobsByState(ctx, d.Executor(), rare, cp)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range drovertype.JobStates() {
			want := engine.Count{Exact: true}
			switch s {
			case drovertype.JobStateRunning:
				want.N = 1
			case drovertype.JobStateAvailable:
				want.N = 2
			}
			if byState[s] != want {
				t.Errorf("count of %s %+v, want %+v", s, byState[s], want)
			}
		}
	})

	t.Run("JobMatchCountByState", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		spread(t, d)
		insert(t, d.Executor(), job("b"))
		running, available, completed := drovertype.JobStateRunning, drovertype.JobStateAvailable, drovertype.JobStateCompleted
		type m = map[drovertype.JobState]int64
		tests := []struct {
			name                 string
			p                    droverdriver.MatchCountParams
			waiting, finished    m
			examined, examinedFi int64
		}{
			{"both tables", droverdriver.MatchCountParams{Examine: 100, Waiting: true, Finished: true},
				m{running: 5, available: 3}, m{completed: 3}, 8, 3},
			{"filtered by queue", droverdriver.MatchCountParams{Filter: droverdriver.ListParams{Queue: "b"}, Examine: 100, Waiting: true, Finished: true},
				m{available: 1}, m{}, 8, 3},
			{"examine caps each table", droverdriver.MatchCountParams{Examine: 2, Waiting: true, Finished: true},
				m{running: 2}, m{completed: 2}, 2, 2},
			{"finished only", droverdriver.MatchCountParams{Examine: 100, Finished: true}, m{}, m{completed: 3}, 0, 3},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				c, err := d.Executor().JobMatchCountByState(context.Background(), tc.p)
				if err != nil {
					t.Fatal(err)
				}
				if !maps.Equal(c.Waiting.Matched, tc.waiting) || !maps.Equal(c.Finished.Matched, tc.finished) ||
					c.Waiting.Examined != tc.examined || c.Finished.Examined != tc.examinedFi {
					t.Fatalf("count %+v, want waiting %v of %d, finished %v of %d", c, tc.waiting, tc.examined, tc.finished, tc.examinedFi)
				}
			})
		}
	})

	t.Run("JobMatchCountByState/estimate", func(t *testing.T) {
		// The engine's state counts: exact while a table holds fewer
		// jobs than the bound, estimated from windows of IDs beyond, one
		// state at a time as close as the single count's estimate.
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		const n = 3000
		insert(t, d.Executor(), marked(n, 3, func(p *droverdriver.InsertParams) { p.Kind = "hit" })...)
		claim(t, d.Executor(), "a", n/2)
		p := droverdriver.ListParams{Kind: "hit", States: []drovertype.JobState{drovertype.JobStateCompleted}}
		exact, err := engine.CountJobsByState(ctx, d.Executor(), p, engine.CountParams{Exact: 5000, Samples: 10})
		if err != nil {
			t.Fatal(err)
		}
		wantRunning, wantAvailable := int64(n/2/3), int64(n/3-n/2/3)
		if exact[drovertype.JobStateRunning] != (engine.Count{N: wantRunning, Exact: true}) ||
			exact[drovertype.JobStateAvailable] != (engine.Count{N: wantAvailable, Exact: true}) ||
			exact[drovertype.JobStateCompleted] != (engine.Count{Exact: true}) || len(exact) != len(drovertype.JobStates()) {
			t.Fatalf("exact counts %+v; want %d running and %d available (the filter's state ignored), every state listed", exact, wantRunning, wantAvailable)
		}
		est, err := engine.CountJobsByState(ctx, d.Executor(), p, engine.CountParams{Exact: 300, Scan: 300, Samples: 10})
		if err != nil {
			t.Fatal(err)
		}
		for s, want := range map[drovertype.JobState]int64{drovertype.JobStateRunning: wantRunning, drovertype.JobStateAvailable: wantAvailable} {
			if c := est[s]; c.Exact || c.N < want*8/10 || c.N > want*12/10 {
				t.Errorf("estimate of %s: %+v, want %d within 20%%, not exact", s, c, want)
			}
		}
		if c := est[drovertype.JobStateCompleted]; c != (engine.Count{Exact: true}) {
			t.Errorf("completed, none stored: %+v, want an exact 0", c)
		}
	})

	t.Run("BatchList", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		var batches []int64
		for range 3 {
			res := insertFlow(t, d.Executor(), droverdriver.FlowInsertParams{Batch: true,
				Jobs: []droverdriver.FlowJob{flowJob("b"), flowJob("b")}})
			batches = append(batches, res.BatchID)
		}
		rows := claim(t, d.Executor(), "b", 1)
		first, err := d.Executor().BatchList(ctx, droverdriver.BatchListParams{Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(first) != 2 || first[0].ID != batches[2] || first[1].ID != batches[1] {
			t.Fatalf("first page %+v, want batches %d and %d", first, batches[2], batches[1])
		}
		rest, err := d.Executor().BatchList(ctx, droverdriver.BatchListParams{BeforeID: first[1].ID, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(rest) != 1 || rest[0].ID != batches[0] || rest[0].Total != 2 || rest[0].Running != 1 {
			t.Fatalf("second page %+v, want batch %d of 2 with 1 running (job %d)", rest, batches[0], rows[0].ID)
		}
		for _, b := range append(first, rest...) {
			want, err := d.Executor().BatchGet(ctx, b.ID)
			if err != nil {
				t.Fatal(err)
			}
			if *want != *b {
				t.Errorf("listed %+v, BatchGet says %+v", b, want)
			}
		}
	})

	t.Run("JobDeps", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		// a ← b ← c, and a ← d.
		res := insertFlow(t, d.Executor(), droverdriver.FlowInsertParams{Jobs: []droverdriver.FlowJob{
			flowJob("w"), flowJob("w", 0), flowJob("w", 1), flowJob("w", 0)}})
		a, b, c, dd := res.IDs[0], res.IDs[1], res.IDs[2], res.IDs[3]
		for _, tc := range []struct {
			ids  []int64
			want []droverdriver.Dep
		}{
			{[]int64{b}, []droverdriver.Dep{dep(a, b), dep(b, c)}},
			{[]int64{a}, []droverdriver.Dep{dep(a, b), dep(a, dd)}},
			{[]int64{c, dd}, []droverdriver.Dep{dep(a, dd), dep(b, c)}},
			{[]int64{424242}, nil},
		} {
			deps, err := d.Executor().JobDeps(context.Background(), tc.ids)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(deps, tc.want) {
				t.Errorf("edges of %v: %v, want %v", tc.ids, deps, tc.want)
			}
		}
	})
}

// dep is the edge child ← parent.
func dep(parent, child int64) droverdriver.Dep { return droverdriver.Dep{Parent: parent, Child: child} }

// counted is a TableCount.
func counted(matched, examined, last int64) droverdriver.TableCount {
	return droverdriver.TableCount{Matched: matched, Examined: examined, LastID: last}
}
