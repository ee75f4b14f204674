package drover_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/engine"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// Workflows and batches, on every store. Every check reads the store: job
// states, attempt and finish times, stored results, batch rows.

// stepArgs is a workflow or batch job: it records that it ran, sets a
// result derived from N, and fails when told to.
type stepArgs struct {
	N      int    `json:"n"`
	Fail   bool   `json:"fail,omitempty"`
	Sleep  string `json:"sleep,omitempty"`
	Big    bool   `json:"big,omitempty"`
	Parent bool   `json:"parent,omitempty"` // sum the parents' results
}

func (stepArgs) Kind() string { return "test.step" }

type stepResult struct {
	Square int `json:"square"`
	Sum    int `json:"sum,omitempty"`
}

// callbackArgs is a batch's callback.
type callbackArgs struct{}

func (callbackArgs) Kind() string { return "test.callback" }

// flowWorkers adds the flow kinds to the suite's workers.
func flowWorkers(rec *recorder) func(*drover.Config) {
	return func(cfg *drover.Config) {
		w := testWorkers(rec)
		drover.AddWorker(w, drover.WorkFunc(func(ctx context.Context, j *drover.Job[stepArgs]) error {
			rec.record(j.ID)
			a := j.Args
			if err := sleepFor(ctx, a.Sleep); err != nil {
				return err
			}
			if a.Fail {
				return errors.New("step failed on purpose")
			}
			res := stepResult{Square: a.N * a.N}
			if a.Parent {
				parents, err := j.ParentResults(ctx)
				if err != nil {
					return err
				}
				for _, p := range parents {
					// Read from the store as the job runs: a parent that
					// has not ended fails the job, which the tests see.
					if !p.State.Finished() {
						return fmt.Errorf("ran while parent %d is %s", p.ID, p.State)
					}
					if p.Result == nil {
						continue // a parent that failed, for a job released anyway
					}
					var pr stepResult
					if err := json.Unmarshal(p.Result, &pr); err != nil {
						return fmt.Errorf("parent %d result %s: %w", p.ID, p.Result, err)
					}
					res.Sum += pr.Square
				}
			}
			if a.Big {
				return j.SetResult(strings.Repeat("x", drover.MaxResultBytes))
			}
			return j.SetResult(res)
		}))
		drover.AddWorker(w, drover.WorkFunc(func(ctx context.Context, j *drover.Job[callbackArgs]) error {
			rec.record(j.ID)
			return j.SetResult(map[string]int64{"batch": j.BatchID})
		}))
		cfg.Workers = w
	}
}

func getJob(t *testing.T, c client, id int64) *drovertype.JobRow {
	t.Helper()
	row, err := c.JobGet(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return row
}

// assertRanAfter checks from the store that child ran once, without
// error, after parent ended: child's handler (Parent set) reads its
// parents' states from the store when it starts and fails if one has not
// ended. Store timestamps cannot show the order on SQLite, whose times come
// from each process's clock before it waits for the write lock.
func assertRanAfter(t *testing.T, c client, parent, child int64) {
	t.Helper()
	p, ch := getJob(t, c, parent), getJob(t, c, child)
	if !p.State.Finished() {
		t.Fatalf("parent %d is %s", parent, p.State)
	}
	if ch.State != drovertype.JobStateCompleted || ch.Attempt != 1 || len(ch.Errors) != 0 {
		t.Fatalf("job %d is %s after %d attempts with errors %+v, want completed at once after parent %d", child, ch.State, ch.Attempt, ch.Errors, parent)
	}
	res, err := c.JobParentResults(context.Background(), child)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.ID == parent {
			return
		}
	}
	t.Fatalf("job %d does not list %d among its parents: %+v", child, parent, res)
}

func TestWorkflowChain(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		rec := newRecorder()
		b := setup(t, s, 8, flowWorkers(rec))
		b.rec = rec
		ctx := context.Background()
		ids, err := b.client.InsertChain(ctx, []drover.InsertManyParams{
			{Args: stepArgs{N: 2}}, {Args: stepArgs{N: 3, Parent: true}}, {Args: stepArgs{N: 4, Parent: true}},
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range []drovertype.JobState{drovertype.JobStateAvailable, drovertype.JobStatePending, drovertype.JobStatePending} {
			if got := getJob(t, b.client, ids[i]).State; got != want {
				t.Fatalf("step %d is %s before start, want %s", i+1, got, want)
			}
		}
		b.start(t)
		waitState(t, b.client, ids[2], drovertype.JobStateCompleted)
		assertRanAfter(t, b.client, ids[0], ids[1])
		assertRanAfter(t, b.client, ids[1], ids[2])
		// A released step is due from its release, so that it queues
		// behind jobs already waiting (and past producers' claim
		// positions): its run_at lies after its insert and no later than
		// its start.
		for _, id := range ids[1:] {
			j := getJob(t, b.client, id)
			if !j.RunAt.After(j.CreatedAt) || j.AttemptedAt == nil || j.RunAt.After(*j.AttemptedAt) {
				t.Fatalf("step %d: created %v, run_at %v, attempted %v; want run_at between", id, j.CreatedAt, j.RunAt, j.AttemptedAt)
			}
		}
		order, runs := b.rec.snapshot()
		if len(order) != 3 || order[0] != ids[0] || order[1] != ids[1] || order[2] != ids[2] {
			t.Fatalf("ran %v, want %v once each in order", order, ids)
		}
		for _, id := range ids {
			if runs[id] != 1 {
				t.Fatalf("job %d ran %d times", id, runs[id])
			}
		}
		// The last step read its parent's result: 3² = 9.
		res, err := b.client.JobResult(ctx, ids[2])
		if err != nil {
			t.Fatal(err)
		}
		var r stepResult
		if err := json.Unmarshal(res.Result, &r); err != nil || r.Square != 16 || r.Sum != 9 {
			t.Fatalf("result of the last step = %s (%v), want square 16 and parent sum 9", res.Result, err)
		}
	})
}

// TestWorkflowDAGUnderConcurrency runs many diamonds (a → b, c → d) on
// three clients and checks every edge from the store.
func TestWorkflowDAGUnderConcurrency(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		rec := newRecorder()
		b := setup(t, s, 16, flowWorkers(rec))
		ctx := context.Background()
		const n = 30
		type diamond struct{ a, b, c, d int64 }
		var ds []diamond
		for i := range n {
			w := drover.NewWorkflow()
			a := w.Add(stepArgs{N: i}, nil)
			bb := w.Add(stepArgs{N: 1, Parent: true}, nil, a)
			c := w.Add(stepArgs{N: 2, Parent: true}, nil, a)
			w.Add(stepArgs{N: 3, Parent: true}, nil, bb, c)
			ids, err := b.client.InsertWorkflow(ctx, w)
			if err != nil {
				t.Fatal(err)
			}
			ds = append(ds, diamond{ids[0], ids[1], ids[2], ids[3]})
		}
		b.start(t)
		for range 2 {
			startClient(t, b.s.newClient(t, b.d, withMutate(fastConfig(rec, 16), flowWorkers(rec))))
		}
		for _, d := range ds {
			waitState(t, b.client, d.d, drovertype.JobStateCompleted)
		}
		_, runs := rec.snapshot()
		for _, d := range ds {
			for _, e := range [][2]int64{{d.a, d.b}, {d.a, d.c}, {d.b, d.d}, {d.c, d.d}} {
				assertRanAfter(t, b.client, e[0], e[1])
			}
			for _, id := range []int64{d.a, d.b, d.c, d.d} {
				if runs[id] != 1 {
					t.Fatalf("job %d ran %d times, want 1", id, runs[id])
				}
			}
			// d summed b's and c's squares: 1 + 4.
			res, err := b.client.JobResult(ctx, d.d)
			if err != nil {
				t.Fatal(err)
			}
			var r stepResult
			if err := json.Unmarshal(res.Result, &r); err != nil || r.Sum != 5 {
				t.Fatalf("job %d result %s, want sum 5", d.d, res.Result)
			}
		}
	})
}

func withMutate(cfg *drover.Config, m func(*drover.Config)) *drover.Config {
	m(cfg)
	return cfg
}

// TestWorkflowCancelCascade: a discarded parent cancels its dependants and
// theirs, except a dependant that asked to be released, which runs.
func TestWorkflowCancelCascade(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		rec := newRecorder()
		b := setup(t, s, 4, flowWorkers(rec))
		ctx := context.Background()
		w := drover.NewWorkflow()
		parent := w.Add(stepArgs{Fail: true}, &drover.InsertOpts{MaxAttempts: 1})
		child := w.Add(stepArgs{N: 1}, nil, parent)
		grandchild := w.Add(stepArgs{N: 2}, nil, child)
		released := w.Add(stepArgs{N: 3, Parent: true}, &drover.InsertOpts{ReleaseOnParentFailure: true}, parent)
		afterReleased := w.Add(stepArgs{N: 4, Parent: true}, nil, released)
		ids, err := b.client.InsertWorkflow(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		b.start(t)
		waitState(t, b.client, ids[0], drovertype.JobStateDiscarded)
		waitState(t, b.client, ids[afterReleased.Index()], drovertype.JobStateCompleted)
		for _, st := range []drover.Step{child, grandchild} {
			row := getJob(t, b.client, ids[st.Index()])
			if row.State != drovertype.JobStateCancelled || row.Attempt != 0 {
				t.Fatalf("job %d is %s after %d attempts, want cancelled without running", row.ID, row.State, row.Attempt)
			}
			if len(row.Errors) != 1 || !strings.Contains(row.Errors[0].Error, "ended as") {
				t.Fatalf("job %d errors = %+v, want the dependency that failed", row.ID, row.Errors)
			}
		}
		if msg := getJob(t, b.client, ids[child.Index()]).Errors[0].Error; msg != fmt.Sprintf("dependency %d ended as discarded", ids[0]) {
			t.Fatalf("child error = %q", msg)
		}
		assertRanAfter(t, b.client, ids[0], ids[released.Index()])
		_, runs := rec.snapshot()
		if runs[ids[child.Index()]] != 0 || runs[ids[grandchild.Index()]] != 0 {
			t.Fatalf("cancelled dependants ran: %v", runs)
		}
	})
}

// TestWorkflowCancelPendingParent: cancelling a job that waits cancels what
// waits for it.
func TestWorkflowCancelPendingParent(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 4, flowWorkers(newRecorder()))
		ctx := context.Background()
		ids, err := b.client.InsertChain(ctx, []drover.InsertManyParams{
			{Args: stepArgs{N: 1}, Opts: &drover.InsertOpts{RunAt: time.Now().Add(time.Hour)}},
			{Args: stepArgs{N: 2}}, {Args: stepArgs{N: 3}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.client.JobCancel(ctx, ids[1]); err != nil {
			t.Fatal(err)
		}
		for i, want := range []drovertype.JobState{drovertype.JobStateScheduled, drovertype.JobStateCancelled, drovertype.JobStateCancelled} {
			if got := getJob(t, b.client, ids[i]).State; got != want {
				t.Fatalf("step %d is %s, want %s", i+1, got, want)
			}
		}
	})
}

func TestWorkflowDependsOnStoredJobs(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		rec := newRecorder()
		b := setup(t, s, 4, flowWorkers(rec))
		ctx := context.Background()
		done := b.insert(t, stepArgs{N: 5}, nil)
		failed := b.insert(t, stepArgs{Fail: true}, &drover.InsertOpts{MaxAttempts: 1})
		b.start(t)
		waitState(t, b.client, done, drovertype.JobStateCompleted)
		waitState(t, b.client, failed, drovertype.JobStateDiscarded)

		before, err := b.client.JobCountByState(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.client.Insert(ctx, stepArgs{N: 1}, &drover.InsertOpts{DependsOn: []int64{done, failed}})
		if !errors.Is(err, drover.ErrDependencyFailed) || !errors.Is(err, drover.ErrInvalid) || !strings.Contains(err.Error(), fmt.Sprint(failed)) {
			t.Fatalf("depending on a discarded job: err = %v", err)
		}
		_, err = b.client.Insert(ctx, stepArgs{N: 1}, &drover.InsertOpts{DependsOn: []int64{done, 1 << 40}})
		if !errors.Is(err, drover.ErrNotFound) {
			t.Fatalf("depending on a missing job: err = %v", err)
		}
		_, err = b.client.Insert(ctx, stepArgs{N: 1}, &drover.InsertOpts{DependsOn: []int64{-3}})
		if !errors.Is(err, drover.ErrInvalid) {
			t.Fatalf("depending on a negative ID: err = %v", err)
		}
		after, err := b.client.JobCountByState(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(before) != fmt.Sprint(after) {
			t.Fatalf("rejected inserts stored jobs: %v, then %v", before, after)
		}

		// A completed parent is met already; a released one too.
		row, err := b.client.Insert(ctx, stepArgs{N: 1, Parent: true}, &drover.InsertOpts{DependsOn: []int64{done, failed}, ReleaseOnParentFailure: true})
		if err != nil {
			t.Fatal(err)
		}
		waitState(t, b.client, row.ID, drovertype.JobStateCompleted)
		parents, err := b.client.JobParentResults(ctx, row.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(parents) != 2 || parents[0].ID != done || parents[0].State != drovertype.JobStateCompleted ||
			parents[1].State != drovertype.JobStateDiscarded || parents[1].Result != nil {
			t.Fatalf("parents = %+v", parents)
		}
	})
}

// TestWorkflowDependantAddedWhileParentRuns: the parent's claimed row did
// not know of the dependant, yet finishing it must release the dependant.
func TestWorkflowDependantAddedWhileParentRuns(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		rec := newRecorder()
		b := setup(t, s, 4, flowWorkers(rec))
		ctx := context.Background()
		parent := b.insert(t, stepArgs{N: 7, Sleep: "300ms"}, nil)
		b.start(t)
		waitState(t, b.client, parent, drovertype.JobStateRunning)
		child, err := b.client.Insert(ctx, stepArgs{N: 1, Parent: true}, &drover.InsertOpts{DependsOn: []int64{parent}})
		if err != nil {
			t.Fatal(err)
		}
		if child.State != drovertype.JobStatePending {
			t.Fatalf("child is %s while its parent runs, want pending", child.State)
		}
		waitState(t, b.client, child.ID, drovertype.JobStateCompleted)
		assertRanAfter(t, b.client, parent, child.ID)
		res, err := b.client.JobResult(ctx, child.ID)
		if err != nil {
			t.Fatal(err)
		}
		var r stepResult
		if err := json.Unmarshal(res.Result, &r); err != nil || r.Sum != 49 {
			t.Fatalf("child result %s, want the parent's 49", res.Result)
		}
	})
}

// TestBatch works a batch on three clients at once and checks the progress
// counters, every stored result, and that the callback was made available
// and ran exactly once, after the last member ended.
func TestBatch(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		rec := newRecorder()
		b := setup(t, s, 8, flowWorkers(rec))
		ctx := context.Background()
		const n = 300
		jobs := make([]drover.InsertManyParams, n)
		for i := range jobs {
			jobs[i] = drover.InsertManyParams{Args: stepArgs{N: i}}
		}
		// Two members fail for good and one is cancelled before it runs.
		jobs[10].Args, jobs[10].Opts = stepArgs{Fail: true}, &drover.InsertOpts{MaxAttempts: 2}
		jobs[20].Args, jobs[20].Opts = stepArgs{Fail: true}, &drover.InsertOpts{MaxAttempts: 1}
		jobs[30].Opts = &drover.InsertOpts{RunAt: time.Now().Add(time.Hour)}
		ins, err := b.client.InsertBatch(ctx, jobs, &drover.BatchOpts{Callback: callbackArgs{}})
		if err != nil {
			t.Fatal(err)
		}
		if len(ins.JobIDs) != n || ins.CallbackID == 0 || ins.ID == 0 {
			t.Fatalf("inserted batch = %+v", ins)
		}
		if got := getJob(t, b.client, ins.CallbackID).State; got != drovertype.JobStatePending {
			t.Fatalf("callback is %s before the batch ran, want pending", got)
		}
		prog, err := b.client.BatchGet(ctx, ins.ID)
		if err != nil {
			t.Fatal(err)
		}
		if prog.Total != n || prog.Pending() != n || prog.Finished() || prog.CallbackJobID != ins.CallbackID {
			t.Fatalf("progress before start = %+v", prog)
		}

		b.start(t)
		for range 2 {
			startClient(t, b.s.newClient(t, b.d, withMutate(fastConfig(rec, 8), flowWorkers(rec))))
		}
		waitfor.Cond(t, "the batch's other members to end", func() bool {
			p, err := b.client.BatchGet(ctx, ins.ID)
			if err != nil {
				t.Fatal(err)
			}
			return p.Completed+p.Discarded == n-1
		})
		if got := getJob(t, b.client, ins.CallbackID).State; got != drovertype.JobStatePending {
			t.Fatalf("callback is %s while a member waits, want pending", got)
		}
		if _, err := b.client.JobCancel(ctx, ins.JobIDs[30]); err != nil {
			t.Fatal(err)
		}
		cb := waitState(t, b.client, ins.CallbackID, drovertype.JobStateCompleted)

		prog, err = b.client.BatchGet(ctx, ins.ID)
		if err != nil {
			t.Fatal(err)
		}
		if prog.Completed != n-3 || prog.Discarded != 2 || prog.Cancelled != 1 || prog.Pending() != 0 || prog.Running != 0 ||
			prog.Failed != 0 || !prog.Finished() {
			t.Fatalf("final progress = %+v", prog)
		}
		order, runs := rec.snapshot()
		if order[len(order)-1] != ins.CallbackID {
			t.Fatalf("the callback was not the last job to start")
		}
		if runs[ins.CallbackID] != 1 || cb.Attempt != 1 {
			t.Fatalf("callback ran %d times (attempt %d), want once", runs[ins.CallbackID], cb.Attempt)
		}
		cbRes, err := b.client.JobResult(ctx, ins.CallbackID)
		if err != nil {
			t.Fatal(err)
		}
		if string(cbRes.Result) != fmt.Sprintf(`{"batch": %d}`, ins.ID) && string(cbRes.Result) != fmt.Sprintf(`{"batch":%d}`, ins.ID) {
			t.Fatalf("callback result %s, want its batch ID %d", cbRes.Result, ins.ID)
		}

		// Every member's result, streamed: count and checksum.
		var count, sum, last int64
		err = b.client.BatchResults(ctx, ins.ID, func(r drovertype.JobResult) error {
			if r.ID <= last {
				return fmt.Errorf("result %d after %d: not in ID order", r.ID, last)
			}
			last = r.ID
			count++
			if r.State == drovertype.JobStateCompleted {
				var sr stepResult
				if err := json.Unmarshal(r.Result, &sr); err != nil {
					return err
				}
				sum += int64(sr.Square)
			} else if r.Result != nil {
				return fmt.Errorf("job %d ended %s with result %s", r.ID, r.State, r.Result)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var want int64
		for i := range n {
			if i != 10 && i != 20 && i != 30 {
				want += int64(i * i)
			}
		}
		if count != n || sum != want {
			t.Fatalf("streamed %d results summing %d, want %d summing %d", count, sum, n, want)
		}
	})
}

// TestBatchCallbackOnceUnderConcurrency ends many small batches on several
// clients at once: each callback must run exactly once.
func TestBatchCallbackOnceUnderConcurrency(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		rec := newRecorder()
		b := setup(t, s, 16, flowWorkers(rec))
		ctx := context.Background()
		var batches []*drover.InsertedBatch
		for range 40 {
			jobs := make([]drover.InsertManyParams, 5)
			for i := range jobs {
				jobs[i] = drover.InsertManyParams{Args: stepArgs{N: i}}
			}
			ins, err := b.client.InsertBatch(ctx, jobs, &drover.BatchOpts{Callback: callbackArgs{}})
			if err != nil {
				t.Fatal(err)
			}
			batches = append(batches, ins)
		}
		var wg sync.WaitGroup
		b.start(t)
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := b.s.newClient(t, b.d, withMutate(fastConfig(rec, 16), flowWorkers(rec)))
				startClient(t, c)
			}()
		}
		wg.Wait()
		for _, ins := range batches {
			cb := waitState(t, b.client, ins.CallbackID, drovertype.JobStateCompleted)
			if cb.Attempt != 1 {
				t.Fatalf("callback %d took %d attempts", cb.ID, cb.Attempt)
			}
		}
		_, runs := rec.snapshot()
		for _, ins := range batches {
			if runs[ins.CallbackID] != 1 {
				t.Fatalf("callback of batch %d ran %d times", ins.ID, runs[ins.CallbackID])
			}
			p, err := b.client.BatchGet(ctx, ins.ID)
			if err != nil {
				t.Fatal(err)
			}
			if p.Completed != 5 || !p.Finished() {
				t.Fatalf("batch %d progress %+v", ins.ID, p)
			}
		}
	})
}

func TestBatchRejectsBadInput(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 1, flowWorkers(newRecorder()))
		ctx := context.Background()
		cases := []struct {
			name string
			jobs []drover.InsertManyParams
			opts *drover.BatchOpts
			want string
		}{
			{"empty", nil, nil, "batch: no jobs"},
			{"bad member", []drover.InsertManyParams{{Args: stepArgs{}}, {Args: stepArgs{}, Opts: &drover.InsertOpts{Queue: "a b"}}}, nil, `job 2 of 2: invalid input: queue "a b"`},
			{"callback with deps", []drover.InsertManyParams{{Args: stepArgs{}}}, &drover.BatchOpts{Callback: callbackArgs{}, CallbackOpts: &drover.InsertOpts{DependsOn: []int64{1}}}, "batch callback: cannot depend"},
			{"unknown callback kind", []drover.InsertManyParams{{Args: stepArgs{}}}, &drover.BatchOpts{Callback: unknownArgs{}}, "batch callback: unknown job kind"},
		}
		for _, tc := range cases {
			_, err := b.client.InsertBatch(ctx, tc.jobs, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%s: err = %v, want %q", tc.name, err, tc.want)
			}
		}
		counts, err := b.client.JobCountByState(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(counts) != 0 {
			t.Fatalf("rejected batches stored jobs: %v", counts)
		}
		_, err = b.client.BatchGet(ctx, 12345)
		if !errors.Is(err, drover.ErrBatchNotFound) || !errors.Is(err, drover.ErrNotFound) || err.Error() != "batch 12345 not found" {
			t.Fatalf("missing batch: err = %v, want batch 12345 not found, matching ErrBatchNotFound and ErrNotFound", err)
		}
	})
}

// TestResultTooLarge: a result over the limit is refused with a clear
// error, and the job fails instead of storing it.
func TestResultTooLarge(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 1, flowWorkers(newRecorder()))
		id := b.insert(t, stepArgs{Big: true}, &drover.InsertOpts{MaxAttempts: 1})
		b.start(t)
		row := waitState(t, b.client, id, drovertype.JobStateDiscarded)
		if len(row.Errors) != 1 || !strings.Contains(row.Errors[0].Error, fmt.Sprintf("is over the limit of %d", drover.MaxResultBytes)) {
			t.Fatalf("errors = %+v", row.Errors)
		}
		res, err := b.client.JobResult(context.Background(), id)
		if err != nil || res.Result != nil {
			t.Fatalf("result = %+v, %v; want none", res, err)
		}
	})
}

// TestRescueSettles: jobs whose worker died are discarded by the rescuer
// (out of attempts), which settles them like a finish: the dependant is
// cancelled, the batch counts the member and releases its callback. The dead
// worker's late results are fenced out.
func TestRescueSettles(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		rec := newRecorder()
		b := setup(t, s, 4, flowWorkers(rec))
		ctx := context.Background()
		chain, err := b.client.InsertChain(ctx, []drover.InsertManyParams{
			{Args: stepArgs{N: 1}, Opts: &drover.InsertOpts{MaxAttempts: 1}}, {Args: stepArgs{N: 2}},
		})
		if err != nil {
			t.Fatal(err)
		}
		ins, err := b.client.InsertBatch(ctx, []drover.InsertManyParams{{Args: stepArgs{N: 3}, Opts: &drover.InsertOpts{MaxAttempts: 1}}},
			&drover.BatchOpts{Callback: callbackArgs{}})
		if err != nil {
			t.Fatal(err)
		}
		claimed, err := b.d.Executor().JobClaim(ctx, droverdriver.ClaimParams{Queue: "default", Max: 10, Owner: "dead-worker", Lease: 200 * time.Millisecond})
		if err != nil || len(claimed) != 2 {
			t.Fatalf("claim = %v, %v", claimed, err)
		}
		b.start(t)
		waitState(t, b.client, chain[0], drovertype.JobStateDiscarded)
		child := waitState(t, b.client, chain[1], drovertype.JobStateCancelled)
		if len(child.Errors) != 1 || child.Errors[0].Error != fmt.Sprintf("dependency %d ended as discarded", chain[0]) {
			t.Fatalf("child errors = %+v", child.Errors)
		}
		waitState(t, b.client, ins.CallbackID, drovertype.JobStateCompleted)
		prog, err := b.client.BatchGet(ctx, ins.ID)
		if err != nil {
			t.Fatal(err)
		}
		if prog.Discarded != 1 || prog.Completed != 0 || !prog.Finished() {
			t.Fatalf("batch progress = %+v", prog)
		}
		var late []droverdriver.Result
		for _, c := range claimed {
			late = append(late, droverdriver.Result{ID: c.ID, Attempt: c.Attempt, LeaseToken: c.LeaseToken, Outcome: droverdriver.OutcomeCompleted,
				Flow: c.Flow, Output: []byte(`1`)})
		}
		accepted, err := engine.Finish(ctx, b.d.Executor(), late)
		if err != nil || len(accepted) != 0 {
			t.Fatalf("late results accepted = %v, %v", accepted, err)
		}
		if _, runs := rec.snapshot(); runs[chain[0]] != 0 || runs[chain[1]] != 0 || runs[ins.CallbackID] != 1 {
			t.Fatalf("runs = %v", runs)
		}
	})
}
