package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/jobjson"
	"github.com/droverhq/drover/internal/app/storeurl"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

func TestEnqueueRoundTrip(t *testing.T) {
	future := time.Date(2100, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name  string
		args  []string
		count int
		check func(t *testing.T, j jobjson.Job)
	}{
		{
			name:  "defaults",
			args:  []string{"email", `{"to":"ada@example.com"}`},
			count: 1,
			check: func(t *testing.T, j jobjson.Job) {
				want := jobjson.Job{State: drovertype.JobStateAvailable, Queue: "default", Kind: "email", MaxAttempts: drover.DefaultMaxAttempts}
				if j.State != want.State || j.Queue != want.Queue || j.Kind != want.Kind || j.MaxAttempts != want.MaxAttempts ||
					j.Priority != 0 || j.Attempt != 0 || len(j.Tags) != 0 || len(j.Errors) != 0 {
					t.Errorf("job = %+v, want defaults %+v", j, want)
				}
				if !sameJSON(t, j.Args, []byte(`{"to":"ada@example.com"}`)) {
					t.Errorf("args = %s", j.Args)
				}
			},
		},
		{
			name: "every option",
			args: []string{"report", `{"day":"2025-01-02","n":[1,2]}`, "--queue", "reports", "--priority", "-5",
				"--max-attempts", "3", "--tags", "nightly,eu", "--metadata", `{"source":"cli"}`},
			count: 1,
			check: func(t *testing.T, j jobjson.Job) {
				if j.Queue != "reports" || j.Priority != -5 || j.MaxAttempts != 3 || !slices.Equal(j.Tags, []string{"nightly", "eu"}) {
					t.Errorf("job = %+v", j)
				}
				if !sameJSON(t, j.Metadata, []byte(`{"source":"cli"}`)) {
					t.Errorf("metadata = %s", j.Metadata)
				}
			},
		},
		{
			name:  "at a duration from now",
			args:  []string{"later", `{}`, "--at", "1h"},
			count: 1,
			check: func(t *testing.T, j jobjson.Job) {
				if d := time.Until(j.RunAt); j.State != drovertype.JobStateScheduled || d < 58*time.Minute || d > time.Hour {
					t.Errorf("state %s, run_at in %s; want scheduled in about 1h", j.State, d)
				}
			},
		},
		{
			name:  "at a time",
			args:  []string{"later", `{}`, "--at", future.Format(time.RFC3339)},
			count: 1,
			check: func(t *testing.T, j jobjson.Job) {
				if j.State != drovertype.JobStateScheduled || !j.RunAt.Equal(future) {
					t.Errorf("state %s, run_at %s; want scheduled at %s", j.State, j.RunAt, future)
				}
			},
		},
		{
			name:  "at a past time runs now",
			args:  []string{"late", `{}`, "--at", "2001-02-03T04:05:06+02:00"},
			count: 1,
			check: func(t *testing.T, j jobjson.Job) {
				if j.State != drovertype.JobStateAvailable {
					t.Errorf("state %s, want available", j.State)
				}
			},
		},
		{
			name:  "count",
			args:  []string{"fanout", `{"x":1}`, "--count", "5"},
			count: 5,
			check: func(t *testing.T, j jobjson.Job) {
				if j.Kind != "fanout" || !sameJSON(t, j.Args, []byte(`{"x":1}`)) {
					t.Errorf("job = %+v", j)
				}
			},
		},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := b.setup(t).migrated(t)
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					before := f.countJobs(t)
					ids := f.enqueue(t, tt.args...)
					if len(ids) != tt.count {
						t.Fatalf("enqueue printed %d ids, want %d", len(ids), tt.count)
					}
					if n := f.countJobs(t); n != before+int64(tt.count) {
						t.Fatalf("store has %d jobs, want %d", n, before+int64(tt.count))
					}
					for _, id := range ids {
						j := f.getJSON(t, id)
						if j.ID != id {
							t.Fatalf("jobs get %d returned job %d", id, j.ID)
						}
						tt.check(t, j)
						// What the CLI read back is what is stored.
						stored := f.getJob(t, id)
						if stored.State != j.State || stored.Kind != j.Kind || stored.Queue != j.Queue ||
							!sameJSON(t, stored.EncodedArgs, j.Args) || !stored.RunAt.Equal(j.RunAt) {
							t.Errorf("stored job %+v differs from CLI output %+v", stored, j)
						}
					}
				})
			}
		})
	}
}

func TestEnqueueJSONOutput(t *testing.T) {
	f := setup(t).migrated(t)
	var out struct {
		IDs []int64 `json:"ids"`
	}
	decodeJSON(t, f.mustRun(t, "enqueue", "k", `{}`, "--count", "3", "--json"), &out)
	if len(out.IDs) != 3 || out.IDs[0] >= out.IDs[1] || out.IDs[1] >= out.IDs[2] {
		t.Fatalf("ids = %v, want 3 increasing ids", out.IDs)
	}
}

func TestJobsList(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := b.setup(t).migrated(t)
			a := f.enqueue(t, "alpha", `{}`, "--count", "3")
			m := f.enqueue(t, "beta", `{}`, "--queue", "mail")
			s := f.enqueue(t, "alpha", `{}`, "--at", "1h")
			c := f.enqueue(t, "beta", `{}`)
			f.mustRun(t, "jobs", "cancel", strconv.FormatInt(c[0], 10))
			all := slices.Concat(a, m, s, c)

			tests := []struct {
				name string
				args []string
				want []int64
			}{
				{"all", nil, all},
				{"by state", []string{"--state", "scheduled,cancelled"}, slices.Concat(s, c)},
				{"state is case-insensitive", []string{"--state", "SCHEDULED"}, s},
				{"by queue", []string{"--queue", "mail"}, m},
				{"by kind", []string{"--kind", "alpha"}, slices.Concat(a, s)},
				{"by kind and state", []string{"--kind", "alpha", "--state", "available"}, a},
				{"limit", []string{"--limit", "2"}, a[:2]},
				{"after", []string{"--after", strconv.FormatInt(a[1], 10), "--limit", "2"}, []int64{a[2], m[0]}},
				{"no match", []string{"--kind", "nothing"}, nil},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					var jobs []jobjson.Job
					decodeJSON(t, f.mustRun(t, append([]string{"jobs", "list", "--json"}, tt.args...)...), &jobs)
					var got []int64
					for _, j := range jobs {
						got = append(got, j.ID)
					}
					if !slices.Equal(got, tt.want) {
						t.Errorf("ids = %v, want %v", got, tt.want)
					}

					table := f.mustRun(t, append([]string{"jobs", "list"}, tt.args...)...)
					lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
					if !strings.HasPrefix(lines[0], "ID") || len(lines) != len(tt.want)+1 {
						t.Fatalf("table has %d lines, want a header and %d rows:\n%s", len(lines), len(tt.want), table)
					}
					for i, id := range tt.want {
						if fields := strings.Fields(lines[i+1]); fields[0] != strconv.FormatInt(id, 10) {
							t.Errorf("row %d = %q, want job %d", i, lines[i+1], id)
						}
					}
				})
			}

			// An empty page is an empty JSON array, not null.
			if out := f.mustRun(t, "jobs", "list", "--json", "--kind", "nothing"); out != "[]\n" {
				t.Errorf("empty list = %q, want []", out)
			}
			// A full page tells a person how to get the next one.
			r := f.run(t, "jobs", "list", "--limit", "1")
			if want := fmt.Sprintf("more jobs may follow: add --after %d\n", a[0]); r.stderr != want {
				t.Errorf("stderr = %q, want %q", r.stderr, want)
			}
		})
	}
}

func TestJobsGetHuman(t *testing.T) {
	f := setup(t).migrated(t)
	id := f.enqueue(t, "email", `{"to":"ada@example.com"}`, "--tags", "a,b", "--metadata", `{"src":"cli"}`, "--queue", "mail")[0]
	out := f.mustRun(t, "jobs", "get", strconv.FormatInt(id, 10))
	for _, want := range []string{
		fmt.Sprintf("id:            %d\n", id),
		"state:         available\n",
		"queue:         mail\n",
		"kind:          email\n",
		"attempt:       0/25\n",
		"tags:          a, b\n",
		`args:          {"to": "ada@example.com"}` + "\n",
		`metadata:      {"src": "cli"}` + "\n",
		"errors:        none\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("jobs get output lacks %q:\n%s", want, out)
		}
	}
}

// failArgs is a job kind whose worker always fails, to give jobs errors
// for the CLI to show.
type failArgs struct{}

func (failArgs) Kind() string { return "test.fail" }

func TestRetryAndCancel(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := b.setup(t).migrated(t)
			id := f.enqueue(t, "email", `{}`)[0]
			sid := strconv.FormatInt(id, 10)

			var j jobjson.Job
			decodeJSON(t, f.mustRun(t, "jobs", "cancel", sid, "--json"), &j)
			if j.ID != id || j.State != drovertype.JobStateCancelled || j.FinalizedAt == nil {
				t.Fatalf("after cancel: %+v", j)
			}
			if s := f.getJob(t, id).State; s != drovertype.JobStateCancelled {
				t.Fatalf("stored state after cancel = %s", s)
			}
			// Cancelling a finished job leaves it as it is.
			out := f.mustRun(t, "jobs", "cancel", sid)
			if lines := strings.Split(out, "\n"); len(lines) < 2 || !slices.Equal(strings.Fields(lines[1])[:2], []string{sid, "cancelled"}) {
				t.Errorf("second cancel printed:\n%s", out)
			}

			j = jobjson.Job{} // fields the output omits must read as zero
			decodeJSON(t, f.mustRun(t, "jobs", "retry", sid, "--json"), &j)
			if j.State != drovertype.JobStateAvailable || j.FinalizedAt != nil {
				t.Fatalf("after retry: %+v", j)
			}
			if s := f.getJob(t, id).State; s != drovertype.JobStateAvailable {
				t.Fatalf("stored state after retry = %s", s)
			}

			// A scheduled job retried runs now.
			later := f.enqueue(t, "email", `{}`, "--at", "1h")[0]
			out = f.mustRun(t, "jobs", "retry", strconv.FormatInt(later, 10))
			if lines := strings.Split(out, "\n"); len(lines) < 2 || !strings.Contains(lines[1], "available") {
				t.Errorf("retry of a scheduled job printed:\n%s", out)
			}
			if s := f.getJob(t, later).State; s != drovertype.JobStateAvailable {
				t.Fatalf("stored state after retry = %s", s)
			}
		})
	}
}

// TestFailedAttemptsShown runs a failing worker so that `jobs get` has
// attempt errors to show, and retries the job once it is discarded.
func TestFailedAttemptsShown(t *testing.T) {
	f := setup(t).migrated(t)
	st, _ := f.open(t)
	var attempts atomic.Int64
	workers := drover.NewWorkers()
	drover.AddWorker(workers, drover.WorkFunc(func(ctx context.Context, j *drover.Job[failArgs]) error {
		return fmt.Errorf("boom %d", attempts.Add(1))
	}))
	worker, err := storeurl.NewClient[testClient](st, &drover.Config{
		Queues:      map[string]drover.QueueConfig{"failing": {MaxWorkers: 1}},
		Workers:     workers,
		RetryPolicy: func(int) time.Duration { return 0 },
		// Keep the test quiet; failures are the point here.
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = worker.Stop(ctx)
	})

	id := f.enqueue(t, "test.fail", `{}`, "--queue", "failing", "--max-attempts", "2")[0]
	sid := strconv.FormatInt(id, 10)
	waitState(t, f, id, drovertype.JobStateDiscarded)

	out := f.mustRun(t, "jobs", "get", sid)
	for _, want := range []string{"state:         discarded\n", "attempt:       2/2\n", "errors:        2\n", ": boom 1\n", ": boom 2\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("jobs get lacks %q:\n%s", want, out)
		}
	}
	table := f.mustRun(t, "jobs", "list", "--state", "discarded")
	if !strings.Contains(table, "2/2") || !strings.HasSuffix(strings.TrimSpace(table), "boom 2") {
		t.Errorf("jobs list does not show the last error:\n%s", table)
	}

	// Retrying a discarded job that used all its attempts allows one more.
	f.mustRun(t, "jobs", "retry", sid)
	j := waitState(t, f, id, drovertype.JobStateDiscarded)
	if j.Attempt != 3 || len(j.Errors) != 3 || j.Errors[2].Error != "boom 3" {
		t.Fatalf("after retry: attempt %d, errors %+v", j.Attempt, j.Errors)
	}
}

// waitState polls the store until job id is in state want.
func waitState(t *testing.T, f *fixture, id int64, want drovertype.JobState) *drovertype.JobRow {
	t.Helper()
	_, client := f.open(t)
	var j *drovertype.JobRow
	if !waitfor.Within(30*time.Second, func() bool {
		var err error
		j, err = client.JobGet(context.Background(), id)
		if err != nil && !errors.Is(err, drover.ErrNotFound) {
			t.Fatal(err)
		}
		return j != nil && j.State == want
	}) {
		t.Fatalf("job %d did not reach %s: %+v", id, want, j)
	}
	return j
}

// TestJobsListSearch: jobs list filters by tags, args and metadata
// containment and times, lists newest first, and counts, on both stores;
// a malformed filter is a usage error naming the flag.
func TestJobsListSearch(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := b.setup(t).migrated(t)
			ada := f.enqueue(t, "email", `{"to":"ada@example.com","user":{"id":7}}`, "--tags", "vip", "--metadata", `{"tenant":"acme"}`)[0]
			grace := f.enqueue(t, "email", `{"to":"grace@example.com"}`, "--tags", "vip,eu")[0]
			later := f.enqueue(t, "report", `{"day":"2026-11-21"}`, "--at", "2h")[0]
			inAnHour := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
			for _, tc := range []struct {
				args []string
				want []int64
			}{
				{[]string{"--args", `{"user":{"id":7}}`}, []int64{ada}},
				{[]string{"--metadata", `{"tenant":"acme"}`}, []int64{ada}},
				{[]string{"--tag", "vip"}, []int64{ada, grace}},
				{[]string{"--tag", "vip", "--tag", "eu"}, []int64{grace}},
				{[]string{"--order", "newest"}, []int64{later, grace, ada}},
				{[]string{"--created-since", "1h", "--kind", "email", "--order", "newest"}, []int64{grace, ada}},
				{[]string{"--scheduled-until", inAnHour}, []int64{ada, grace}},
				{[]string{"--scheduled-since", inAnHour}, []int64{later}},
				{[]string{"--scheduled-since", "1h"}, []int64{ada, grace, later}},
			} {
				r := f.run(t, append([]string{"jobs", "list", "--json"}, tc.args...)...)
				if r.code != exitOK {
					t.Fatalf("jobs list %v: %s", tc.args, r)
				}
				var jobs []jobjson.Job
				decodeJSON(t, r.stdout, &jobs)
				var got []int64
				for _, j := range jobs {
					got = append(got, j.ID)
				}
				if !slices.Equal(got, tc.want) {
					t.Errorf("jobs list %v: %v, want %v", tc.args, got, tc.want)
				}
			}
			if r := f.run(t, "jobs", "list", "--tag", "vip", "--count"); r.code != exitOK || !strings.Contains(r.stderr, "2 jobs match") {
				t.Errorf("--count: %s", r)
			}
			if r := f.run(t, "jobs", "list", "--scheduled-since", "1h", "--scheduled-until", "2025-01-01T00:00:00Z"); r.code == exitOK ||
				!strings.Contains(r.stderr, "scheduled range") {
				t.Errorf("a range that ends before it starts: %s", r)
			}
			for _, bad := range [][]string{{"--args", "[1]"}, {"--metadata", "nope"}, {"--finished-since", "yesterday"},
				{"--scheduled-since=-1m"}, {"--order", "up"}} {
				r := f.run(t, append([]string{"jobs", "list"}, bad...)...)
				if flag, _, _ := strings.Cut(bad[0], "="); r.code != exitUsage || !strings.Contains(r.stderr, flag) {
					t.Errorf("jobs list %v: %s, want a usage error naming %s", bad, r, bad[0])
				}
			}
		})
	}
}
