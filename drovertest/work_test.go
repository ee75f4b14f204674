package drovertest_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertest"
	"github.com/droverhq/drover/drovertype"
)

// TestWork runs one job synchronously through the real execute path and
// checks what each kind of attempt returns and stores: a completion, a
// failure retried at the clock's time plus the retry policy's backoff, a
// panic with its stack, a timeout, a cancel, and a last attempt's
// discard.
func TestWork(t *testing.T) {
	bothStores(t, testWork, testWork)
}

func testWork[TTx any](t *testing.T, s store[TTx]) {
	ctx := context.Background()
	start := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	b := setup(t, s, start, func(c *drover.Config) { c.JobTimeout = 100 * time.Millisecond })
	var ids []int64
	for _, tc := range []struct {
		name      string
		args      StepArgs
		opts      *drover.InsertOpts
		state     drovertype.JobState
		err       string // in the attempt's error; "" for none
		trace     string // in the attempt's trace
		nextRunAt time.Time
	}{
		{"completes", StepArgs{Name: "ok"}, nil, drovertype.JobStateCompleted, "", "", time.Time{}},
		{"fails and retries after the policy's backoff", StepArgs{Name: "fail", Fail: 1}, nil, drovertype.JobStateRetryable,
			"step fail failed attempt 1", "", start.Add(time.Minute)},
		{"panics", StepArgs{Name: "boom", Panic: true}, nil, drovertype.JobStateRetryable, "panic: step boom exploded", "drovertest_test", start.Add(time.Minute)},
		{"times out", StepArgs{Name: "slow", Block: true}, nil, drovertype.JobStateRetryable, "job timed out after 100ms", "", start.Add(time.Minute)},
		{"cancels itself", StepArgs{Name: "no", Cancel: true}, nil, drovertype.JobStateCancelled, "not wanted", "", time.Time{}},
		{"fails its last attempt", StepArgs{Name: "last", Fail: -1}, &drover.InsertOpts{MaxAttempts: 1}, drovertype.JobStateDiscarded,
			"step last failed attempt 1", "", time.Time{}},
	} {
		res := drovertest.Work(ctx, t, b.client, tc.args, tc.opts)
		ids = append(ids, res.Job.ID)
		if res.Job.State != drovertype.JobStateRunning || res.Job.Attempt != 1 || res.Job.Kind != "step" {
			t.Errorf("%s: the worker received %+v, want attempt 1, running", tc.name, res.Job)
		}
		if res.Stored == nil || res.Stored.State != tc.state || res.Stored.ID != res.Job.ID {
			t.Fatalf("%s: stored %+v, want %s", tc.name, res.Stored, tc.state)
		}
		switch {
		case tc.err == "" && res.Err != nil:
			t.Errorf("%s: attempt error %+v, want none", tc.name, res.Err)
		case tc.err != "" && (res.Err == nil || !strings.Contains(res.Err.Error, tc.err) || !strings.Contains(res.Err.Trace, tc.trace)):
			t.Errorf("%s: attempt error %+v, want %q with a trace holding %q", tc.name, res.Err, tc.err, tc.trace)
		case tc.err != "" && (len(res.Stored.Errors) != 1 || res.Stored.Errors[0].Error != res.Err.Error):
			t.Errorf("%s: stored errors %+v, want the attempt's", tc.name, res.Stored.Errors)
		}
		if !tc.nextRunAt.IsZero() && !res.Stored.RunAt.Equal(tc.nextRunAt) {
			t.Errorf("%s: retries at %v, want %v", tc.name, res.Stored.RunAt, tc.nextRunAt)
		}
	}
	if want := []string{"ok", "fail", "boom", "slow", "no", "last"}; !slices.Equal(b.rec.ran, want) {
		t.Errorf("ran %v, want %v", b.rec.ran, want)
	}

	// A job that cannot run now fails the test, saying why.
	later, err := b.client.Insert(ctx, StepArgs{Name: "later"}, &drover.InsertOpts{RunAt: start.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	// A client without workers inserts any kind.
	inserter, err := drover.NewClient(b.d, nil)
	if err != nil {
		t.Fatal(err)
	}
	other, err := inserter.Insert(ctx, drover.RawArgs{KindName: "other", JSON: []byte(`{}`)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		id   int64
		want string
	}{
		{"scheduled later", later.ID, "after the client's now"},
		{"finished", ids[0], "job " + strconv.FormatInt(ids[0], 10) + " is completed"},
		{"no worker for its kind", other.ID, `unknown job kind "other"`},
		{"unknown", later.ID + 1000, "not found"},
	} {
		f := &fakeTB{}
		drovertest.WorkJob(ctx, f, b.client, tc.id)
		f.check(t, tc.name, []string{tc.want})
	}
	// Once the clock reaches it, it runs.
	b.clock.Advance(time.Hour)
	if res := drovertest.WorkJob(ctx, t, b.client, later.ID); res.Stored.State != drovertype.JobStateCompleted {
		t.Errorf("the scheduled job once due: %+v", res.Stored)
	}
}

// TestDrain works a queue to the end: exactly the due jobs run, in claim
// order, with the jobs they insert; a job scheduled later and a retry
// wait for the clock; advancing it lets the next drain run them.
func TestDrain(t *testing.T) {
	bothStores(t, testDrain, testDrain)
}

func testDrain[TTx any](t *testing.T, s store[TTx]) {
	ctx := context.Background()
	b := setup(t, s, time.Time{})
	now := b.clock.Now()
	for _, in := range []struct {
		args StepArgs
		opts *drover.InsertOpts
	}{
		{StepArgs{Name: "low"}, &drover.InsertOpts{Queue: "q", Priority: 5}},
		{StepArgs{Name: "first", Then: []string{"child-1", "child-2"}}, &drover.InsertOpts{Queue: "q", Priority: 1}},
		{StepArgs{Name: "flaky", Fail: 1}, &drover.InsertOpts{Queue: "q", Priority: 2}},
		{StepArgs{Name: "tomorrow"}, &drover.InsertOpts{Queue: "q", RunAt: now.Add(24 * time.Hour)}},
		{StepArgs{Name: "elsewhere"}, &drover.InsertOpts{Queue: "other"}},
	} {
		if _, err := b.client.Insert(ctx, in.args, in.opts); err != nil {
			t.Fatal(err)
		}
	}
	names := func(ran []*drover.WorkResult) []string {
		var out []string
		for _, r := range ran {
			var a StepArgs
			if err := json.Unmarshal(r.Job.EncodedArgs, &a); err != nil {
				t.Fatal(err)
			}
			out = append(out, a.Name+":"+string(r.Stored.State))
		}
		return out
	}
	ran := drovertest.Drain(ctx, t, b.client, "q")
	// By priority; the children (priority 0) were inserted by "first"
	// and run before the rest.
	if got, want := names(ran), []string{"first:completed", "child-1:completed", "child-2:completed", "flaky:retryable", "low:completed"}; !slices.Equal(got, want) {
		t.Fatalf("first drain ran %v, want %v", got, want)
	}
	if again := drovertest.Drain(ctx, t, b.client, "q"); len(again) != 0 {
		t.Fatalf("a second drain with the clock stopped ran %v", names(again))
	}
	// The retry is due a minute on (the retry policy), the scheduled job
	// a day on.
	b.clock.Advance(time.Minute)
	if got, want := names(drovertest.Drain(ctx, t, b.client, "q")), []string{"flaky:completed"}; !slices.Equal(got, want) {
		t.Fatalf("drain a minute on ran %v, want %v", got, want)
	}
	b.clock.Advance(24 * time.Hour)
	if got, want := names(drovertest.Drain(ctx, t, b.client, "q")), []string{"tomorrow:completed"}; !slices.Equal(got, want) {
		t.Fatalf("drain a day on ran %v, want %v", got, want)
	}
	drovertest.RequireInserted(ctx, t, b.d, StepArgs{Name: "elsewhere"}, &drovertest.InsertedOpts{State: drovertype.JobStateAvailable})

	// A paused kind is left in the queue.
	if err := b.client.QueuePauseKind(ctx, "other", "step"); err != nil {
		t.Fatal(err)
	}
	if ran := drovertest.Drain(ctx, t, b.client, "other"); len(ran) != 0 {
		t.Fatalf("drain of a paused kind ran %v", names(ran))
	}
}

// TestWorkAndDrainTx run jobs inside the test's transaction: what they
// store is seen in it, and gone once it rolls back.
func TestWorkAndDrainTx(t *testing.T) {
	bothStores(t, testWorkAndDrainTx, testWorkAndDrainTx)
}

func testWorkAndDrainTx[TTx any](t *testing.T, s store[TTx]) {
	ctx := context.Background()
	b := setup(t, s, time.Time{})
	tx := s.begin(t, b.d)
	res := drovertest.WorkTx(ctx, t, b.client, tx, StepArgs{Name: "in-tx"}, &drover.InsertOpts{Queue: "q"})
	if res.Stored.State != drovertype.JobStateCompleted {
		t.Fatalf("worked in the transaction: %+v", res.Stored)
	}
	if _, err := b.client.InsertTx(ctx, tx, StepArgs{Name: "drained", Fail: -1}, &drover.InsertOpts{Queue: "q", MaxAttempts: 1}); err != nil {
		t.Fatal(err)
	}
	ran := drovertest.DrainTx(ctx, t, b.client, tx, "q")
	if len(ran) != 1 || ran[0].Stored.State != drovertype.JobStateDiscarded {
		t.Fatalf("drained in the transaction: %+v", ran)
	}
	drovertest.RequireInsertedTx(ctx, t, b.d, tx, StepArgs{Name: "in-tx"}, &drovertest.InsertedOpts{State: drovertype.JobStateCompleted})
	s.rollback(t, tx)
	drovertest.RequireNotInserted(ctx, t, b.d, drovertest.Partial{JobKind: "step"}, nil)
}
