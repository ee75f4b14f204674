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

// The finish tests finish attempts only through result and finish below,
// and judge it by what is stored afterwards, so that a change to the
// methods' shape is a change here alone.
//
// Which statements run when a job ends is the engine's decision: the
// helpers below run Drover's own (internal/engine, importable here because
// this package is part of Drover's module, whoever's driver it tests), so
// the suite holds a driver to what Drover will actually ask of it. The
// plain path and the keyed round trip are also checked on their own
// ("JobFinishMany/refuse", "JobFinishKeyedMany").

// result is the result of claimed row r's attempt with outcome o,
// carrying what the claim returned: the fence (attempt and token) and the
// stored flow and key.
func result(r *drovertype.JobRow, o droverdriver.Outcome) droverdriver.Result {
	res := droverdriver.Result{ID: r.ID, Attempt: r.Attempt, LeaseToken: r.LeaseToken, Outcome: o, Flow: r.Flow, Key: r.Key}
	if r.Key != "" {
		res.Queue = r.Queue
	}
	return res
}

// failed is result with outcome o and an attempt error saying msg.
func failed(r *drovertype.JobRow, o droverdriver.Outcome, msg string, runAt time.Time) droverdriver.Result {
	res := result(r, o)
	res.Error, res.RunAt = errorJSON(r.Attempt, msg), runAt
	return res
}

// finish finishes results as Drover does (internal/engine, which decides
// the statements of a finish from the flow bits and the rows the driver
// returns) and returns the IDs applied, sorted.
func finish(t *testing.T, e droverdriver.Executor, results ...droverdriver.Result) []int64 {
	t.Helper()
	applied, err := engine.Finish(context.Background(), e, results)
	if err != nil {
		t.Fatalf("finish: %v", err)
	}
	slices.Sort(applied)
	return applied
}

// appliedIDs returns the IDs of the results res says were applied.
func appliedIDs(results []droverdriver.Result, res droverdriver.FinishResult) []int64 {
	var ids []int64
	if res.All && len(res.Applied) == 0 {
		for _, r := range results {
			ids = append(ids, r.ID)
		}
		return ids
	}
	for _, r := range res.Applied {
		ids = append(ids, r.ID)
	}
	return ids
}

// The ends of jobs outside a finish, as Drover runs them.
var (
	cancel  = engine.Cancel
	discard = engine.Discard
	rescue  = engine.Rescue
	retry   = engine.Retry
	promote = engine.Promote
)

func testFinish(t *testing.T, setup opener) {
	t.Run("JobFinishMany/outcomes", func(t *testing.T) {
		t.Parallel()
		later := time.Now().Add(time.Hour)
		past := time.Now().Add(-time.Second)
		tests := []struct {
			name    string
			outcome droverdriver.Outcome
			err     bool
			runAt   time.Time
			cancel  bool // request a cancel before finishing
			state   drovertype.JobState
			attempt int
			errs    int
		}{
			{name: "completed", outcome: droverdriver.OutcomeCompleted, state: drovertype.JobStateCompleted, attempt: 1},
			{name: "completed after cancel request", outcome: droverdriver.OutcomeCompleted, cancel: true, state: drovertype.JobStateCompleted, attempt: 1},
			{name: "retry", outcome: droverdriver.OutcomeRetry, err: true, runAt: later, state: drovertype.JobStateRetryable, attempt: 1, errs: 1},
			{name: "retry now", outcome: droverdriver.OutcomeRetry, err: true, runAt: past, state: drovertype.JobStateAvailable, attempt: 1, errs: 1},
			{name: "retry after cancel request", outcome: droverdriver.OutcomeRetry, err: true, runAt: later, cancel: true, state: drovertype.JobStateCancelled, attempt: 1, errs: 1},
			{name: "discarded", outcome: droverdriver.OutcomeDiscarded, err: true, state: drovertype.JobStateDiscarded, attempt: 1, errs: 1},
			{name: "cancelled", outcome: droverdriver.OutcomeCancelled, err: true, state: drovertype.JobStateCancelled, attempt: 1, errs: 1},
			{name: "released", outcome: droverdriver.OutcomeReleased, state: drovertype.JobStateAvailable, attempt: 0},
			{name: "released later", outcome: droverdriver.OutcomeReleased, runAt: later, state: drovertype.JobStateScheduled, attempt: 0},
			{name: "released with error", outcome: droverdriver.OutcomeReleased, err: true, state: drovertype.JobStateAvailable, attempt: 0, errs: 1},
			{name: "released after cancel request", outcome: droverdriver.OutcomeReleased, cancel: true, state: drovertype.JobStateCancelled, attempt: 1},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				d := setup(t)
				id := insert(t, d.Executor(), job("q"))[0]
				r := claimOne(t, d.Executor(), "q", id)
				if tc.cancel {
					if _, err := cancel(context.Background(), d.Executor(), id, time.Now()); err != nil {
						t.Fatal(err)
					}
				}
				res := result(r, tc.outcome)
				res.RunAt = tc.runAt
				if tc.err {
					res.Error = errorJSON(1, "boom")
				}
				// A result for another attempt is fenced off and changes nothing.
				stale := res
				stale.Attempt++
				if applied := finish(t, d.Executor(), stale); len(applied) != 0 {
					t.Fatalf("stale result applied: %v", applied)
				}
				wantState(t, d.Executor(), map[int64]drovertype.JobState{id: drovertype.JobStateRunning})

				if applied := finish(t, d.Executor(), res); !slices.Equal(applied, []int64{id}) {
					t.Fatalf("applied %v, want %d", applied, id)
				}
				j := get(t, d.Executor(), id)
				errs := attemptErrors(t, j)
				if j.State != tc.state || j.Attempt != tc.attempt || len(errs) != tc.errs || j.ErrorCount != tc.errs {
					t.Fatalf("stored %s, attempt %d, errors %v (count %d); want %s, %d, %d", j.State, j.Attempt, j.Errors, j.ErrorCount, tc.state, tc.attempt, tc.errs)
				}
				if tc.errs > 0 && errs[0].Error != "boom" {
					t.Errorf("errors %v", j.Errors)
				}
				if j.State.Finished() != (j.FinalizedAt != nil) || j.LeaseOwner != "" || j.LeaseExpiresAt != nil {
					t.Errorf("finalized at %v, lease %q until %v", j.FinalizedAt, j.LeaseOwner, j.LeaseExpiresAt)
				}
				if !tc.runAt.IsZero() && !j.State.Finished() && !sameTime(j.RunAt, tc.runAt) {
					t.Errorf("run_at %v, want %v", j.RunAt, tc.runAt)
				}
				// A second result for the same attempt is fenced off too.
				if applied := finish(t, d.Executor(), result(r, droverdriver.OutcomeCompleted)); len(applied) != 0 {
					t.Fatalf("second result applied: %v", applied)
				}
				if again := get(t, d.Executor(), id); again.State != j.State {
					t.Fatalf("second result moved the job to %s", again.State)
				}
			})
		}
	})

	t.Run("JobFinishMany/fence", func(t *testing.T) {
		t.Parallel()
		forged := drovertype.NewLeaseToken()
		tests := []struct {
			name  string
			fence func(r *droverdriver.Result)
		}{
			{"forged token", func(r *droverdriver.Result) { r.LeaseToken = forged }},
			{"zero token", func(r *droverdriver.Result) { r.LeaseToken = drovertype.LeaseToken{} }},
			{"earlier attempt", func(r *droverdriver.Result) { r.Attempt-- }},
			{"later attempt", func(r *droverdriver.Result) { r.Attempt++ }},
			{"unknown job", func(r *droverdriver.Result) { r.ID += 1000 }},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				d := setup(t)
				id := insert(t, d.Executor(), job("q"))[0]
				r := claimOne(t, d.Executor(), "q", id)
				for _, o := range []droverdriver.Outcome{droverdriver.OutcomeCompleted, droverdriver.OutcomeRetry,
					droverdriver.OutcomeDiscarded, droverdriver.OutcomeCancelled, droverdriver.OutcomeReleased} {
					res := failed(r, o, "forged", time.Now())
					tc.fence(&res)
					if applied := finish(t, d.Executor(), res); len(applied) != 0 {
						t.Fatalf("outcome %d applied %v", o, applied)
					}
				}
				j := get(t, d.Executor(), id)
				if j.State != drovertype.JobStateRunning || j.Attempt != 1 || j.Errors != nil || j.ErrorCount != 0 || j.LeaseOwner != "w1" {
					t.Fatalf("rejected results changed the job: %+v", j)
				}
				if applied := finish(t, d.Executor(), result(r, droverdriver.OutcomeCompleted)); !slices.Equal(applied, []int64{id}) {
					t.Fatalf("the true result after rejected ones: applied %v", applied)
				}
			})
		}
	})

	t.Run("JobFinishMany/token of an earlier claim", func(t *testing.T) {
		t.Parallel()
		// The token leaves with the attempt: once the job is claimed again,
		// the first claim's token finishes nothing, whatever attempt it names.
		d := setup(t)
		id := insert(t, d.Executor(), job("q"))[0]
		first := claimOne(t, d.Executor(), "q", id)
		finish(t, d.Executor(), result(first, droverdriver.OutcomeReleased))
		second := claimOne(t, d.Executor(), "q", id)
		if second.Attempt != first.Attempt {
			t.Fatalf("a released attempt was counted: attempt %d after %d", second.Attempt, first.Attempt)
		}
		if applied := finish(t, d.Executor(), result(first, droverdriver.OutcomeCompleted)); len(applied) != 0 {
			t.Fatalf("the released claim's token finished the next claim's attempt")
		}
		if applied := finish(t, d.Executor(), result(second, droverdriver.OutcomeCompleted)); !slices.Equal(applied, []int64{id}) {
			t.Fatalf("applied %v", applied)
		}
	})

	t.Run("JobFinishMany/batch", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		insert(t, d.Executor(), job("q"), job("q"), job("q"), job("q"))
		rows := claim(t, d.Executor(), "q", 4)
		stale := result(rows[2], droverdriver.OutcomeCompleted)
		stale.Attempt = 2
		unknown := result(rows[0], droverdriver.OutcomeCompleted)
		unknown.ID = rows[3].ID + 1000
		applied := finish(t, d.Executor(),
			result(rows[0], droverdriver.OutcomeCompleted),
			failed(rows[1], droverdriver.OutcomeRetry, "one", time.Now().Add(time.Hour)),
			stale,
			failed(rows[3], droverdriver.OutcomeDiscarded, "one", time.Time{}),
			unknown,
		)
		if want := []int64{rows[0].ID, rows[1].ID, rows[3].ID}; !slices.Equal(applied, want) {
			t.Fatalf("applied %v, want %v", applied, want)
		}
		wantState(t, d.Executor(), map[int64]drovertype.JobState{
			rows[0].ID: drovertype.JobStateCompleted, rows[1].ID: drovertype.JobStateRetryable,
			rows[2].ID: drovertype.JobStateRunning, rows[3].ID: drovertype.JobStateDiscarded,
		})
		// The retried job keeps its errors across attempts.
		if _, err := retry(context.Background(), d.Executor(), rows[1].ID, time.Now()); err != nil {
			t.Fatal(err)
		}
		r := claimOne(t, d.Executor(), "q", rows[1].ID)
		if r.Attempt != 2 {
			t.Fatalf("reclaimed at attempt %d, want 2", r.Attempt)
		}
		finish(t, d.Executor(), failed(r, droverdriver.OutcomeDiscarded, "two", time.Time{}))
		j := get(t, d.Executor(), r.ID)
		if errs := attemptErrors(t, j); len(errs) != 2 || errs[0].Error != "one" || errs[1].Error != "two" || j.ErrorCount != 2 {
			t.Fatalf("errors %v (count %d), want one then two", j.Errors, j.ErrorCount)
		}
	})

	t.Run("JobFinishMany/duplicates", func(t *testing.T) {
		t.Parallel()
		// Results that repeat a job in one call end it at most once, and
		// the IDs say whether it did: of two results for one attempt one
		// counts, of a stale and a current one at most the current one.
		// Which one is the driver's choice (SQLite keeps the first,
		// PostgreSQL may take either).
		d := setup(t)
		insert(t, d.Executor(), job("q"), job("q"), job("q"))
		rows := claim(t, d.Executor(), "q", 3)
		stale := failed(rows[1], droverdriver.OutcomeRetry, "x", time.Now())
		stale.Attempt = 7
		applied := finish(t, d.Executor(),
			result(rows[0], droverdriver.OutcomeCompleted),
			result(rows[0], droverdriver.OutcomeDiscarded),
			stale,
			result(rows[2], droverdriver.OutcomeReleased),
			result(rows[1], droverdriver.OutcomeCompleted),
		)
		wantState(t, d.Executor(), map[int64]drovertype.JobState{rows[2].ID: drovertype.JobStateAvailable})
		if j := get(t, d.Executor(), rows[0].ID); j.State != drovertype.JobStateCompleted && j.State != drovertype.JobStateDiscarded {
			t.Fatalf("job %d after two results: %s, want the end one of them names", j.ID, j.State)
		}
		want := []int64{rows[0].ID, rows[2].ID}
		if j := get(t, d.Executor(), rows[1].ID); j.State == drovertype.JobStateCompleted {
			want = []int64{rows[0].ID, rows[1].ID, rows[2].ID}
		} else if j.State != drovertype.JobStateRunning || j.Errors != nil {
			t.Fatalf("job %d after its stale and its current result: %s, errors %v", j.ID, j.State, j.Errors)
		}
		if !slices.Equal(applied, want) {
			t.Fatalf("applied %v, want %v", applied, want)
		}
	})

	t.Run("JobFinishMany/stored max attempts decide", func(t *testing.T) {
		t.Parallel()
		// A failed attempt is retried or discarded by the stored
		// max_attempts, whatever the result says.
		tests := []struct {
			name        string
			maxAttempts int
			outcome     droverdriver.Outcome
			want        drovertype.JobState
		}{
			{"retry with attempts left", 2, droverdriver.OutcomeRetry, drovertype.JobStateAvailable},
			{"retry of the last attempt", 1, droverdriver.OutcomeRetry, drovertype.JobStateDiscarded},
			{"discard with attempts left", 2, droverdriver.OutcomeDiscarded, drovertype.JobStateDiscarded},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				d := setup(t)
				id := insert(t, d.Executor(), with(job("q"), func(p *droverdriver.InsertParams) { p.MaxAttempts = tc.maxAttempts }))[0]
				r := claimOne(t, d.Executor(), "q", id)
				r.MaxAttempts = 99 // what a worker believes does not count
				finish(t, d.Executor(), failed(r, tc.outcome, "x", time.Now().Add(-time.Second)))
				if j := get(t, d.Executor(), id); j.State != tc.want || j.ErrorCount != 1 {
					t.Fatalf("stored %s with %d errors, want %s with 1", j.State, j.ErrorCount, tc.want)
				}
			})
		}
	})

	t.Run("JobFinishMany/errors kept", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		const attempts = drovertype.ErrorsKept + 3
		id := insert(t, d.Executor(), with(job("q"), func(p *droverdriver.InsertParams) { p.MaxAttempts = attempts + 1 }))[0]
		for range attempts {
			r := claimOne(t, d.Executor(), "q", id)
			finish(t, d.Executor(), failed(r, droverdriver.OutcomeRetry, "e", time.Now().Add(-time.Second)))
		}
		j := get(t, d.Executor(), id)
		errs := attemptErrors(t, j)
		if j.ErrorCount != attempts || len(errs) != drovertype.ErrorsKept ||
			errs[0].Attempt != attempts-drovertype.ErrorsKept+1 || errs[len(errs)-1].Attempt != attempts {
			t.Fatalf("%d errors counted, %d kept (attempts %d to %d); want %d counted and the last %d kept",
				j.ErrorCount, len(errs), errs[0].Attempt, errs[len(errs)-1].Attempt, attempts, drovertype.ErrorsKept)
		}
	})

	t.Run("JobFinishMany/output", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		got := insert(t, d.Executor(), job("q"), job("q"))
		rows := claim(t, d.Executor(), "q", 2)
		withOutput := result(rows[0], droverdriver.OutcomeCompleted)
		withOutput.Output = []byte(`{"sum": 3}`)
		finish(t, d.Executor(), withOutput, result(rows[1], droverdriver.OutcomeCompleted))
		res, err := d.Executor().JobResults(ctx, got)
		if err != nil || len(res) != 2 {
			t.Fatalf("results %+v, %v", res, err)
		}
		if res[0].ID != got[0] || res[0].State != drovertype.JobStateCompleted || !jsonEqual(res[0].Result, withOutput.Output) || res[1].Result != nil {
			t.Fatalf("results %+v, want job %d's output and none for job %d", res, got[0], got[1])
		}
	})

	t.Run("JobFinishMany/forget", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		got := insert(t, d.Executor(), job("q"), job("q"), job("q"))
		rows := claim(t, d.Executor(), "q", 3)
		forget := func(r droverdriver.Result) droverdriver.Result { r.Forget = true; return r }
		kept := forget(result(rows[1], droverdriver.OutcomeCompleted))
		kept.Output = []byte(`1`) // a stored result keeps the job
		finish(t, d.Executor(), forget(result(rows[0], droverdriver.OutcomeCompleted)), kept,
			forget(failed(rows[2], droverdriver.OutcomeDiscarded, "x", time.Time{})))
		if _, err := d.Executor().JobGet(context.Background(), got[0]); !errors.Is(err, droverdriver.ErrNotFound) {
			t.Fatalf("a forgotten completed job: %v, want ErrNotFound", err)
		}
		wantState(t, d.Executor(), map[int64]drovertype.JobState{got[1]: drovertype.JobStateCompleted, got[2]: drovertype.JobStateDiscarded})
	})

	t.Run("JobFinishMany/keyed promotes the next", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			outcome droverdriver.Outcome
			first   drovertype.JobState
			next    drovertype.JobState
		}{
			{droverdriver.OutcomeCompleted, drovertype.JobStateCompleted, drovertype.JobStateAvailable},
			{droverdriver.OutcomeDiscarded, drovertype.JobStateDiscarded, drovertype.JobStateAvailable},
			{droverdriver.OutcomeCancelled, drovertype.JobStateCancelled, drovertype.JobStateAvailable},
			// A retried job keeps its place: the key's one slot is its own.
			{droverdriver.OutcomeRetry, drovertype.JobStateRetryable, drovertype.JobStateBlocked},
		}
		for _, tc := range tests {
			t.Run(string(tc.first), func(t *testing.T) {
				t.Parallel()
				d := setup(t)
				got := insert(t, d.Executor(), keyed("q", "a"), keyed("q", "a"))
				r := claimOne(t, d.Executor(), "q", got[0])
				if r.Key != "a" {
					t.Fatalf("claimed row's key %q, want a", r.Key)
				}
				finish(t, d.Executor(), failed(r, tc.outcome, "x", time.Now().Add(time.Hour)))
				wantState(t, d.Executor(), map[int64]drovertype.JobState{got[0]: tc.first, got[1]: tc.next})
			})
		}
	})

	t.Run("JobFinishMany/wakes the queues it makes work for", func(t *testing.T) {
		t.Parallel()
		// The next job of a key, and a dependant, become claimable in
		// the finish's transaction; their queues hear of it.
		d := setup(t)
		heard := listen(t, d)
		got := insert(t, d.Executor(), keyed("keyed", "a"), keyed("keyed", "a"))
		flow := insertFlow(t, d.Executor(), droverdriver.FlowInsertParams{Jobs: []droverdriver.FlowJob{flowJob("parent"), flowJob("child", 0)}})
		heardOf(t, heard, "keyed", "parent") // the inserts'
		finish(t, d.Executor(), result(claimOne(t, d.Executor(), "keyed", got[0]), droverdriver.OutcomeCompleted),
			result(claimOne(t, d.Executor(), "parent", flow.IDs[0]), droverdriver.OutcomeCompleted))
		heardOf(t, heard, "keyed", "child")
		claimOne(t, d.Executor(), "keyed", got[1])
		claimOne(t, d.Executor(), "child", flow.IDs[1])
	})

	t.Run("JobFinishMany/unique keys", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name    string
			final   drovertype.JobState // the unique job's end
			keeps   []drovertype.JobState
			blocked bool // whether the key stays held
		}{
			{"freed when completed", drovertype.JobStateCompleted, nil, false},
			{"kept when completed", drovertype.JobStateCompleted, []drovertype.JobState{drovertype.JobStateCompleted}, true},
			{"freed when discarded", drovertype.JobStateDiscarded, []drovertype.JobState{drovertype.JobStateCompleted}, false},
			{"kept when discarded", drovertype.JobStateDiscarded, []drovertype.JobState{drovertype.JobStateDiscarded}, true},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				d := setup(t)
				u := unique("q", "k")
				for _, s := range tc.keeps {
					u.UniqueFinal |= droverdriver.FinalBit(s)
				}
				id := insert(t, d.Executor(), u)[0]
				r := claimOne(t, d.Executor(), "q", id)
				if r.Flow&droverdriver.FlowUnique == 0 {
					t.Fatalf("claimed unique job with flow %b", r.Flow)
				}
				o := droverdriver.OutcomeCompleted
				if tc.final == drovertype.JobStateDiscarded {
					o = droverdriver.OutcomeDiscarded
				}
				finish(t, d.Executor(), failed(r, o, "x", time.Time{}))
				wantState(t, d.Executor(), map[int64]drovertype.JobState{id: tc.final})
				if again := insert(t, d.Executor(), u)[0]; (again == 0) != tc.blocked {
					t.Fatalf("insert after the end stored %d; want the key held: %v", again, tc.blocked)
				}
			})
		}
	})

	t.Run("JobFinishMany/unique key without the claimed flow", func(t *testing.T) {
		t.Parallel()
		// A remote worker's result does not echo the claimed flow; the
		// store still frees the key from its own.
		d := setup(t)
		id := insert(t, d.Executor(), unique("q", "k"))[0]
		r := claimOne(t, d.Executor(), "q", id)
		res := result(r, droverdriver.OutcomeCompleted)
		res.Flow = 0
		if applied := finish(t, d.Executor(), res); !slices.Equal(applied, []int64{id}) {
			t.Fatalf("applied %v", applied)
		}
		if again := insert(t, d.Executor(), unique("q", "k"))[0]; again == 0 {
			t.Fatal("key still held after its job completed")
		}
	})

	t.Run("JobFinishMany/refuse", func(t *testing.T) {
		t.Parallel()
		// The plain path (Refuse FlowEnd) turns away every job whose
		// stored flow has an end to do, whatever the result says (a remote
		// worker's echoes no flow); it may apply the plain job of the
		// batch, or nothing. The side path (Refuse 0) applies them all
		// and returns each job with its stored columns.
		ctx := context.Background()
		d := setup(t)
		got := insert(t, d.Executor(), job("q"), keyed("q", "a"), unique("q", "u"))
		flow := insertFlow(t, d.Executor(), droverdriver.FlowInsertParams{Jobs: []droverdriver.FlowJob{flowJob("q"), flowJob("child", 0)}})
		ids := append(got, flow.IDs[0])
		rows := claim(t, d.Executor(), "q", 4)
		if len(rows) != 4 {
			t.Fatalf("claimed %d jobs, want 4", len(rows))
		}
		var results []droverdriver.Result
		for _, r := range rows {
			res := result(r, droverdriver.OutcomeCompleted)
			res.Flow, res.Key, res.Queue = 0, "", ""
			results = append(results, res)
		}
		res, err := d.Executor().JobFinishMany(ctx, droverdriver.FinishParams{Results: results, Refuse: droverdriver.FlowEnd})
		if err != nil || res.All {
			t.Fatalf("plain path: %+v, %v; want the flagged jobs turned away", res, err)
		}
		if applied := appliedIDs(results, res); len(applied) > 1 || (len(applied) == 1 && applied[0] != got[0]) {
			t.Fatalf("plain path applied %v; want at most the plain job %d", applied, got[0])
		}
		wantState(t, d.Executor(), map[int64]drovertype.JobState{got[1]: drovertype.JobStateRunning, got[2]: drovertype.JobStateRunning, flow.IDs[0]: drovertype.JobStateRunning})

		var rest []droverdriver.Result
		for _, r := range results {
			if r.ID != got[0] || get(t, d.Executor(), got[0]).State == drovertype.JobStateRunning {
				rest = append(rest, r)
			}
		}
		var side droverdriver.FinishResult
		err = d.Executor().Tx(ctx, func(ctx context.Context, tx droverdriver.Executor) error {
			var err error
			side, err = tx.JobFinishMany(ctx, droverdriver.FinishParams{Results: rest})
			return err
		})
		if err != nil || len(side.Applied) != len(rest) {
			t.Fatalf("side path: %+v, %v; want %d jobs returned", side, err, len(rest))
		}
		want := map[int64]droverdriver.FinishedRow{
			got[0]:      {ID: got[0], State: drovertype.JobStateCompleted, Queue: "q"},
			got[1]:      {ID: got[1], State: drovertype.JobStateCompleted, Flow: droverdriver.FlowKeyed, Queue: "q", Key: "a"},
			got[2]:      {ID: got[2], State: drovertype.JobStateCompleted, Flow: droverdriver.FlowUnique, Queue: "q"},
			flow.IDs[0]: {ID: flow.IDs[0], State: drovertype.JobStateCompleted, Flow: droverdriver.FlowHasDependants, Queue: "q"},
		}
		for _, r := range side.Applied {
			if r != want[r.ID] {
				t.Errorf("side path returned %+v, want %+v", r, want[r.ID])
			}
		}
		for _, id := range ids {
			wantState(t, d.Executor(), map[int64]drovertype.JobState{id: drovertype.JobStateCompleted})
		}
	})

	t.Run("JobFinishKeyedMany", func(t *testing.T) {
		t.Parallel()
		// A batch of keyed results whose keys the claimed rows name
		// finishes and promotes those keys in one call; a retried job keeps
		// its key's place and is returned available.
		ctx := context.Background()
		d := setup(t)
		got := insert(t, d.Executor(), keyed("q", "a"), keyed("q", "a"), keyed("q", "b"), keyed("q", "b"))
		rows := claim(t, d.Executor(), "q", 10)
		if len(rows) != 2 {
			t.Fatalf("claimed %v, want the first job of each key", ids(rows))
		}
		byID := map[int64]*drovertype.JobRow{rows[0].ID: rows[0], rows[1].ID: rows[1]}
		results := []droverdriver.Result{
			result(byID[got[0]], droverdriver.OutcomeCompleted),
			failed(byID[got[2]], droverdriver.OutcomeRetry, "x", time.Now().Add(time.Hour)),
		}
		keys := droverdriver.KeyParams{Queues: []string{"q", "q"}, Keys: []string{"a", "b"}, Retried: []int64{got[2]}}
		res, err := d.Executor().JobFinishKeyedMany(ctx, droverdriver.FinishParams{Results: results, Refuse: droverdriver.FlowEndTx}, keys)
		if err != nil {
			t.Fatal(err)
		}
		applied := appliedIDs(results, res)
		slices.Sort(applied)
		if !slices.Equal(applied, []int64{got[0], got[2]}) {
			t.Fatalf("applied %v, want %v", applied, []int64{got[0], got[2]})
		}
		wantState(t, d.Executor(), map[int64]drovertype.JobState{
			got[0]: drovertype.JobStateCompleted, got[1]: drovertype.JobStateAvailable,
			got[2]: drovertype.JobStateRetryable, got[3]: drovertype.JobStateBlocked,
		})
	})
}
