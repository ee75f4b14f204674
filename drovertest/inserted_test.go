package drovertest_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertest"
	"github.com/droverhq/drover/drovertype"
)

// TestRequireInsertedTx: jobs inserted in the test's transaction are
// found by kind, args (a subset) and every option, and a job that differs
// in any of them is not; the failure lists what the store holds. Once the
// transaction rolls back, nothing was inserted.
func TestRequireInsertedTx(t *testing.T) {
	bothStores(t, testRequireInsertedTx, testRequireInsertedTx)
}

func testRequireInsertedTx[TTx any](t *testing.T, s store[TTx]) {
	ctx := context.Background()
	b := setup(t, s, time.Time{})
	tx := s.begin(t, b.d)
	later := b.clock.Now().Add(time.Hour)
	if _, err := b.client.InsertTx(ctx, tx, EmailArgs{To: "ada@example.com", Subject: "Welcome"}, &drover.InsertOpts{
		Queue: "mail", Priority: 2, MaxAttempts: 3, Tags: []string{"signup", "eu"}, RunAt: later,
		Metadata: json.RawMessage(`{"tenant":{"id":7,"plan":"pro"},"source":"web"}`),
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.InsertTx(ctx, tx, EmailArgs{To: "grace@example.com"}, nil); err != nil {
		t.Fatal(err)
	}
	two, zero := 2, 0
	for _, tc := range []struct {
		name string
		args drover.Args
		opts *drovertest.InsertedOpts
		fail []string // what the failure says; none: it passes
	}{
		{"typed args and every option", EmailArgs{To: "ada@example.com", Subject: "Welcome"}, &drovertest.InsertedOpts{
			Queue: "mail", Priority: &two, MaxAttempts: 3, Tags: []string{"eu"}, ScheduledAt: later,
			State: drovertype.JobStateScheduled, Metadata: map[string]any{"tenant": map[string]any{"id": 7}}}, nil},
		{"a zero field left out by omitempty", EmailArgs{To: "grace@example.com"}, &drovertest.InsertedOpts{
			Queue: drover.DefaultQueue, Priority: &zero, ScheduledAt: b.clock.Now(), State: drovertype.JobStateAvailable}, nil},
		{"partial args", drovertest.Partial{JobKind: "email", Fields: map[string]any{"subject": "Welcome"}}, nil, nil},
		{"other args", EmailArgs{To: "bob@example.com"}, nil,
			[]string{"no job of kind email matches", "ada@example.com", "grace@example.com", "differs: args"}},
		{"other queue", EmailArgs{To: "ada@example.com"}, &drovertest.InsertedOpts{Queue: "default"}, []string{"differs: queue mail"}},
		{"other priority", EmailArgs{To: "ada@example.com"}, &drovertest.InsertedOpts{Priority: &zero}, []string{"differs: priority 2"}},
		{"other max attempts", EmailArgs{To: "ada@example.com"}, &drovertest.InsertedOpts{MaxAttempts: 25}, []string{"max attempts 3"}},
		{"a tag it lacks", EmailArgs{To: "ada@example.com"}, &drovertest.InsertedOpts{Tags: []string{"us"}}, []string{"differs: tags"}},
		{"other time", EmailArgs{To: "ada@example.com"}, &drovertest.InsertedOpts{ScheduledAt: later.Add(time.Second)}, []string{"differs: scheduled at"}},
		{"other state", EmailArgs{To: "ada@example.com"}, &drovertest.InsertedOpts{State: drovertype.JobStateAvailable}, []string{"differs: state scheduled"}},
		{"other metadata", EmailArgs{To: "ada@example.com"}, &drovertest.InsertedOpts{Metadata: map[string]any{"tenant": map[string]any{"id": 8}}},
			[]string{"differs: metadata"}},
		{"two match", drovertest.Partial{JobKind: "email"}, nil, []string{"2 jobs of kind email match", "want one"}},
		{"no job of the kind", drovertest.Partial{JobKind: "sms"}, nil, []string{"no job of kind sms", "(no job of the kind)"}},
	} {
		f := &fakeTB{}
		job := drovertest.RequireInsertedTx(ctx, f, b.d, tx, tc.args, tc.opts)
		f.check(t, tc.name, tc.fail)
		if tc.fail == nil && (job == nil || job.ID == 0 || job.Kind != "email") {
			t.Errorf("%s: returned %+v", tc.name, job)
		}
	}
	// The job comes back with its args decoded.
	job := drovertest.RequireInsertedTx(ctx, t, b.d, tx, EmailArgs{To: "ada@example.com"}, nil)
	if job.Args.Subject != "Welcome" || job.Queue != "mail" {
		t.Errorf("RequireInsertedTx returned %+v with args %+v", job.JobRow, job.Args)
	}

	f := &fakeTB{}
	drovertest.RequireNotInsertedTx(ctx, f, b.d, tx, EmailArgs{To: "grace@example.com"}, nil)
	f.check(t, "RequireNotInsertedTx of an inserted job", []string{"1 jobs of kind email match", "want none", "grace@example.com"})
	drovertest.RequireNotInsertedTx(ctx, t, b.d, tx, EmailArgs{To: "bob@example.com"}, nil)

	// Rolled back, nothing was inserted. (An SQLite driver's reads wait
	// for the transaction, which holds the file's one writer, to end.)
	s.rollback(t, tx)
	drovertest.RequireNotInserted(ctx, t, b.d, drovertest.Partial{JobKind: "email"}, nil)
	f = &fakeTB{}
	drovertest.RequireInserted(ctx, f, b.d, EmailArgs{To: "ada@example.com"}, nil)
	f.check(t, "after the rollback", []string{"no job of kind email"})

	// Committed, the driver sees it.
	if _, err := b.client.Insert(ctx, EmailArgs{To: "ada@example.com"}, &drover.InsertOpts{Queue: "mail"}); err != nil {
		t.Fatal(err)
	}
	drovertest.RequireInserted(ctx, t, b.d, EmailArgs{To: "ada@example.com"}, &drovertest.InsertedOpts{Queue: "mail"})
}

// TestRequireManyInserted: the jobs of the kinds named must be exactly
// the ones expected, in insert order.
func TestRequireManyInserted(t *testing.T) {
	bothStores(t, testRequireManyInserted, testRequireManyInserted)
}

func testRequireManyInserted[TTx any](t *testing.T, s store[TTx]) {
	ctx := context.Background()
	b := setup(t, s, time.Time{})
	tx := s.begin(t, b.d)
	for _, a := range []drover.Args{EmailArgs{To: "a"}, StepArgs{Name: "one"}, EmailArgs{To: "b"}, StepArgs{Name: "two"}} {
		if _, err := b.client.InsertTx(ctx, tx, a, &drover.InsertOpts{Queue: "q"}); err != nil {
			t.Fatal(err)
		}
	}
	q := &drovertest.InsertedOpts{Queue: "q"}
	for _, tc := range []struct {
		name string
		want []drovertest.Expected
		fail []string
	}{
		{"both kinds in order", []drovertest.Expected{{EmailArgs{To: "a"}, q}, {StepArgs{Name: "one"}, q}, {EmailArgs{To: "b"}, nil}, {StepArgs{Name: "two"}, q}}, nil},
		{"one kind in order", []drovertest.Expected{{EmailArgs{To: "a"}, nil}, {EmailArgs{To: "b"}, nil}}, nil},
		{"out of order", []drovertest.Expected{{EmailArgs{To: "b"}, nil}, {EmailArgs{To: "a"}, nil}},
			[]string{"job 1 of 2", "does not match email", `"b"`}},
		{"one missing", []drovertest.Expected{{EmailArgs{To: "a"}, nil}}, []string{"2 jobs of kinds email, want 1"}},
		{"one too many", []drovertest.Expected{{StepArgs{Name: "one"}, nil}, {StepArgs{Name: "two"}, nil}, {StepArgs{Name: "three"}, nil}},
			[]string{"2 jobs of kinds step, want 3"}},
		{"other options", []drovertest.Expected{{EmailArgs{To: "a"}, &drovertest.InsertedOpts{Queue: "default"}}, {EmailArgs{To: "b"}, nil}},
			[]string{"does not match email", ": queue q"}},
	} {
		f := &fakeTB{}
		jobs := drovertest.RequireManyInsertedTx(ctx, f, b.d, tx, tc.want)
		f.check(t, tc.name, tc.fail)
		if tc.fail == nil && len(jobs) != len(tc.want) {
			t.Errorf("%s: returned %d jobs, want %d", tc.name, len(jobs), len(tc.want))
		}
	}
	s.rollback(t, tx)
	drovertest.RequireManyInserted(ctx, t, b.d, nil)
	f := &fakeTB{}
	drovertest.RequireManyInserted(ctx, f, b.d, []drovertest.Expected{{EmailArgs{To: "a"}, nil}})
	f.check(t, "after rollback", []string{"0 jobs of kinds email, want 1"})
}
