package droverdrivertest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/engine"
)

// flowJob is a job of queue for JobInsertFlow, depending on the jobs at
// the positions after of the same call.
func flowJob(queue string, after ...int) droverdriver.FlowJob {
	return droverdriver.FlowJob{InsertParams: job(queue), After: after}
}

func insertFlow(t *testing.T, e droverdriver.Executor, p droverdriver.FlowInsertParams) droverdriver.FlowInsertResult {
	t.Helper()
	res, err := engine.InsertFlow(context.Background(), e, p)
	if err != nil {
		t.Fatalf("insert flow: %v", err)
	}
	if len(res.IDs) != len(p.Jobs) {
		t.Fatalf("flow insert of %d jobs returned %d IDs", len(p.Jobs), len(res.IDs))
	}
	return res
}

func testFlow(t *testing.T, setup opener) {
	t.Run("JobInsertFlow/dependants", func(t *testing.T) {
		t.Parallel()
		// A dependant waits for its parents; the end of the last one
		// releases it, or cancels it when a parent failed.
		tests := []struct {
			name      string
			outcome   droverdriver.Outcome // the first parent's end
			release   bool                 // the child's ReleaseOnParentFailure
			wantChild drovertype.JobState
		}{
			{"parents completed", droverdriver.OutcomeCompleted, false, drovertype.JobStateAvailable},
			{"a parent discarded", droverdriver.OutcomeDiscarded, false, drovertype.JobStateCancelled},
			{"a parent cancelled", droverdriver.OutcomeCancelled, false, drovertype.JobStateCancelled},
			{"a parent discarded, released anyway", droverdriver.OutcomeDiscarded, true, drovertype.JobStateAvailable},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				d := setup(t)
				child := flowJob("child", 0, 1)
				child.ReleaseOnParentFailure = tc.release
				res := insertFlow(t, d.Executor(), droverdriver.FlowInsertParams{Jobs: []droverdriver.FlowJob{flowJob("a"), flowJob("b"), child}})
				c := res.IDs[2]
				wantState(t, d.Executor(), map[int64]drovertype.JobState{res.IDs[0]: drovertype.JobStateAvailable, c: drovertype.JobStatePending})
				a := claimOne(t, d.Executor(), "a", res.IDs[0])
				if a.Flow&droverdriver.FlowHasDependants == 0 {
					t.Fatalf("claimed parent with flow %b, want the dependants bit", a.Flow)
				}
				finish(t, d.Executor(), failed(a, tc.outcome, "x", time.Time{}))
				if tc.outcome == droverdriver.OutcomeCompleted || tc.release {
					wantState(t, d.Executor(), map[int64]drovertype.JobState{c: drovertype.JobStatePending})
					finish(t, d.Executor(), result(claimOne(t, d.Executor(), "b", res.IDs[1]), droverdriver.OutcomeCompleted))
				}
				wantState(t, d.Executor(), map[int64]drovertype.JobState{c: tc.wantChild})
				if tc.wantChild == drovertype.JobStateAvailable {
					claimOne(t, d.Executor(), "child", c)
				}
			})
		}
	})

	t.Run("JobInsertFlow/keyed", func(t *testing.T) {
		t.Parallel()
		// Keyed jobs take their places in their keys' lines in input order
		// once every job of the call has its state: a keyed job pending on
		// a parent holds its key's place, so the next one of its key waits
		// blocked behind it, while another key's job starts at once.
		d := setup(t)
		res := insertFlow(t, d.Executor(), droverdriver.FlowInsertParams{Jobs: []droverdriver.FlowJob{
			flowJob("p"),
			{InsertParams: keyed("q", "a"), After: []int{0}},
			{InsertParams: keyed("q", "a")},
			{InsertParams: keyed("q", "b")},
		}})
		wantState(t, d.Executor(), map[int64]drovertype.JobState{
			res.IDs[0]: drovertype.JobStateAvailable, res.IDs[1]: drovertype.JobStatePending,
			res.IDs[2]: drovertype.JobStateBlocked, res.IDs[3]: drovertype.JobStateAvailable,
		})
		finish(t, d.Executor(), result(claimOne(t, d.Executor(), "p", res.IDs[0]), droverdriver.OutcomeCompleted))
		wantState(t, d.Executor(), map[int64]drovertype.JobState{res.IDs[1]: drovertype.JobStateAvailable, res.IDs[2]: drovertype.JobStateBlocked})
	})

	t.Run("JobInsertFlow/stored parents", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		got := insert(t, d.Executor(), job("p"), job("p"), job("p"))
		rows := claim(t, d.Executor(), "p", 2)
		finish(t, d.Executor(), result(rows[0], droverdriver.OutcomeCompleted), failed(rows[1], droverdriver.OutcomeDiscarded, "x", time.Time{}))
		tests := []struct {
			name    string
			job     droverdriver.FlowJob
			want    drovertype.JobState
			wantErr error
		}{
			{"on a completed parent", droverdriver.FlowJob{InsertParams: job("c"), DependsOn: []int64{got[0]}}, drovertype.JobStateAvailable, nil},
			{"on a waiting parent", droverdriver.FlowJob{InsertParams: job("c"), DependsOn: []int64{got[0], got[2]}}, drovertype.JobStatePending, nil},
			{"on a discarded parent", droverdriver.FlowJob{InsertParams: job("c"), DependsOn: []int64{got[1]}}, "", engine.ErrDependencyFailed},
			{"on a discarded parent, released anyway", droverdriver.FlowJob{InsertParams: job("c"), DependsOn: []int64{got[1]}, ReleaseOnParentFailure: true}, drovertype.JobStateAvailable, nil},
			{"on a missing parent", droverdriver.FlowJob{InsertParams: job("c"), DependsOn: []int64{got[2] + 1000}}, "", droverdriver.ErrNotFound},
		}
		for _, tc := range tests {
			res, err := engine.InsertFlow(ctx, d.Executor(), droverdriver.FlowInsertParams{Jobs: []droverdriver.FlowJob{tc.job}})
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("%s: %v, want %v", tc.name, err, tc.wantErr)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			wantState(t, d.Executor(), map[int64]drovertype.JobState{res.IDs[0]: tc.want})
		}
		// A refused call stored nothing of its own.
		if n, _ := d.Executor().JobCountByState(ctx, "c"); n[drovertype.JobStatePending]+n[drovertype.JobStateAvailable] != 3 {
			t.Fatalf("queue c holds %v, want the 3 jobs of the accepted calls", n)
		}
	})

	t.Run("JobResults", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		res := insertFlow(t, d.Executor(), droverdriver.FlowInsertParams{Jobs: []droverdriver.FlowJob{flowJob("p"), flowJob("p"), flowJob("c", 0, 1)}})
		rows := claim(t, d.Executor(), "p", 2)
		out := result(rows[0], droverdriver.OutcomeCompleted)
		out.Output = []byte(`"first"`)
		finish(t, d.Executor(), out)
		got, err := d.Executor().JobParentResults(ctx, res.IDs[2])
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].ID != res.IDs[0] || got[0].State != drovertype.JobStateCompleted || !jsonEqual(got[0].Result, out.Output) ||
			got[1].ID != res.IDs[1] || got[1].State != drovertype.JobStateRunning || got[1].Result != nil {
			t.Fatalf("parent results %+v", got)
		}
		if got, err := d.Executor().JobResults(ctx, []int64{res.IDs[2], res.IDs[0], res.IDs[2] + 1000}); err != nil || len(got) != 2 ||
			got[0].ID != res.IDs[0] || got[1].ID != res.IDs[2] || got[1].State != drovertype.JobStatePending || got[0].Kind != "noop" {
			t.Fatalf("results %+v, %v; want the two jobs that exist, in ID order", got, err)
		}
	})

	t.Run("Batch", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		callback := job("cb")
		res := insertFlow(t, d.Executor(), droverdriver.FlowInsertParams{Batch: true, Callback: &callback,
			Jobs: []droverdriver.FlowJob{flowJob("m"), flowJob("m"), flowJob("m")}})
		if res.BatchID == 0 || res.CallbackID == 0 {
			t.Fatalf("batch insert %+v", res)
		}
		for _, id := range res.IDs {
			if j := get(t, d.Executor(), id); j.BatchID != res.BatchID {
				t.Fatalf("member %d: batch %d, want %d", id, j.BatchID, res.BatchID)
			}
		}
		wantState(t, d.Executor(), map[int64]drovertype.JobState{res.CallbackID: drovertype.JobStatePending})
		batch := func() *drovertype.Batch {
			t.Helper()
			b, err := d.Executor().BatchGet(ctx, res.BatchID)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		if b := batch(); b.Total != 3 || b.Completed != 0 || b.CallbackJobID != res.CallbackID || b.FinishedAt != nil {
			t.Fatalf("new batch %+v", b)
		}
		rows := claim(t, d.Executor(), "m", 3)
		for _, r := range rows {
			if r.Flow&droverdriver.FlowBatchMember == 0 {
				t.Fatalf("claimed member %d with flow %b, want the batch bit", r.ID, r.Flow)
			}
		}
		out := result(rows[0], droverdriver.OutcomeCompleted)
		out.Output = []byte(`7`)
		finish(t, d.Executor(), out, failed(rows[1], droverdriver.OutcomeRetry, "x", time.Now().Add(time.Hour)))
		if b := batch(); b.Completed != 1 || b.Running != 1 || b.Failed != 1 || b.FinishedAt != nil {
			t.Fatalf("batch with one member completed, one running and one retrying: %+v", b)
		}
		wantState(t, d.Executor(), map[int64]drovertype.JobState{res.CallbackID: drovertype.JobStatePending})
		finish(t, d.Executor(), failed(rows[2], droverdriver.OutcomeDiscarded, "x", time.Time{}))
		if _, err := cancel(ctx, d.Executor(), rows[1].ID, time.Now()); err != nil {
			t.Fatal(err)
		}
		b := batch()
		if b.Completed != 1 || b.Discarded != 1 || b.Cancelled != 1 || b.Running != 0 || b.Failed != 0 || b.FinishedAt == nil {
			t.Fatalf("ended batch %+v", b)
		}
		// The last member's end released the callback.
		claimOne(t, d.Executor(), "cb", res.CallbackID)

		page1, err := d.Executor().BatchResults(ctx, droverdriver.BatchResultsParams{BatchID: res.BatchID, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		page2, err := d.Executor().BatchResults(ctx, droverdriver.BatchResultsParams{BatchID: res.BatchID, Limit: 2, AfterID: page1[len(page1)-1].ID})
		if err != nil {
			t.Fatal(err)
		}
		all := append(page1, page2...)
		gotIDs := make([]int64, len(all))
		for i, r := range all {
			gotIDs[i] = r.ID
		}
		if !slices.Equal(gotIDs, res.IDs) || !jsonEqual(all[0].Result, out.Output) || all[1].State != drovertype.JobStateCancelled ||
			all[2].State != drovertype.JobStateDiscarded {
			t.Fatalf("batch results %+v", all)
		}
		if _, err := d.Executor().BatchGet(ctx, res.BatchID+1000); !errors.Is(err, droverdriver.ErrNotFound) {
			t.Fatalf("missing batch: %v, want ErrNotFound", err)
		}
	})
}
