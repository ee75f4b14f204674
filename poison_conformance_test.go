package drover_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverfleet"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// Poison values: whatever one job carries can fail only that job. These
// tests give one job of many a value the store cannot hold (a NUL
// character, invalid UTF-8, a time out of range) and check that the
// others are untouched.

// poisonArgs is a job whose handler returns an error with a NUL in it
// when Poison is set, or sets a result the store cannot hold when Result
// is set.
type poisonArgs struct {
	N      int    `json:"n"`
	Poison bool   `json:"poison,omitempty"`
	Result string `json:"result,omitempty"`
}

func (poisonArgs) Kind() string { return "test.poison" }

// withPoisonWorker registers the worker of poisonArgs.
func withPoisonWorker(cfg *drover.Config) {
	drover.AddWorker(cfg.Workers, drover.WorkFunc(func(ctx context.Context, j *drover.Job[poisonArgs]) error {
		switch {
		case j.Args.Poison:
			return errors.New("x\x00y")
		case j.Args.Result == "nul":
			_ = j.SetResult(map[string]string{"s": "a\x00b"}) // the error is ignored on purpose
		case j.Args.Result == "utf8":
			_ = j.SetResult(json.RawMessage("\"\xff\""))
		case j.Args.Result == "fine":
			return j.SetResult(map[string]string{"s": `a\u0000b`}) // text, not an escape
		}
		return nil
	}))
}

// TestPoisonErrorsFailOnlyTheirJobs is the reproduction of a handler
// returning an error with a NUL in it: on PostgreSQL the completer retried
// the same refused batch forever, 1,999 of 2,000 jobs stayed running and
// Client.Stop timed out. Every job must finish, the poisoned ones with
// their error made storable, and Stop must return before its deadline.
func TestPoisonErrorsFailOnlyTheirJobs(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 50, withPoisonWorker)
		ctx := context.Background()
		const total, every = 2000, 50
		jobs := make([]drover.InsertManyParams, total)
		for i := range jobs {
			jobs[i] = drover.InsertManyParams{Args: poisonArgs{N: i, Poison: i%every == 0}, Opts: &drover.InsertOpts{MaxAttempts: 1}}
		}
		ids, err := b.client.InsertMany(ctx, jobs)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.client.Start(ctx); err != nil {
			t.Fatal(err)
		}
		var counts map[drovertype.JobState]int64
		waitfor.Cond(t, "every job to finish", func() bool {
			counts, err = b.client.JobCountByState(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			return counts[drovertype.JobStateCompleted]+counts[drovertype.JobStateDiscarded] == total
		})
		if counts[drovertype.JobStateCompleted] != total-total/every || counts[drovertype.JobStateDiscarded] != total/every {
			t.Fatalf("counts = %v, want %d completed and %d discarded", counts, total-total/every, total/every)
		}
		for i, id := range ids {
			if i%every != 0 {
				continue
			}
			row, err := b.client.JobGet(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if row.State != drovertype.JobStateDiscarded || len(row.Errors) != 1 || row.Errors[0].Error != "x\uFFFDy" {
				t.Fatalf("poisoned job %d: state %s, errors %+v; want discarded with the error x\uFFFDy", id, row.State, row.Errors)
			}
		}
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := b.client.Stop(stopCtx); err != nil {
			t.Fatalf("Stop: %v", err)
		}
	})
}

// TestResultTheStoreCannotHoldFailsItsAttempt: a handler that sets a
// result with a NUL or invalid UTF-8 and returns nil fails its attempt
// with an error that says why, while a result holding the text \u0000
// (an escaped backslash) is stored as given.
func TestResultTheStoreCannotHoldFailsItsAttempt(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 4, withPoisonWorker)
		ctx := context.Background()
		nul := b.insert(t, poisonArgs{Result: "nul"}, &drover.InsertOpts{MaxAttempts: 1})
		bad := b.insert(t, poisonArgs{Result: "utf8"}, &drover.InsertOpts{MaxAttempts: 1})
		fine := b.insert(t, poisonArgs{Result: "fine"}, nil)
		b.start(t)
		for id, want := range map[int64]string{nul: `contains \u0000`, bad: "invalid UTF-8"} {
			row := waitState(t, b.client, id, drovertype.JobStateDiscarded)
			if len(row.Errors) != 1 || !strings.Contains(row.Errors[0].Error, want) {
				t.Errorf("job %d: errors %+v, want one naming %q", id, row.Errors, want)
			}
		}
		waitState(t, b.client, fine, drovertype.JobStateCompleted)
		res, err := b.client.JobResult(ctx, fine)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]string
		if err := json.Unmarshal(res.Result, &got); err != nil || got["s"] != `a\u0000b` {
			t.Fatalf("result %s (%v), want the text a\\u0000b", res.Result, err)
		}
	})
}

// TestGoHandlerErrorIsTruncated: a handler's error over the per-attempt
// bound is cut at a character boundary, as a remote worker's is bounded.
func TestGoHandlerErrorIsTruncated(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		huge := strings.Repeat("é", 100_000) // 200 kB
		b := setup(t, s, 1, func(cfg *drover.Config) {
			drover.AddWorker(cfg.Workers, drover.WorkFunc(func(ctx context.Context, j *drover.Job[hugeErrorArgs]) error {
				return errors.New(huge)
			}))
		})
		id := b.insert(t, hugeErrorArgs{}, &drover.InsertOpts{MaxAttempts: 1})
		b.start(t)
		row := waitState(t, b.client, id, drovertype.JobStateDiscarded)
		msg := row.Errors[0].Error
		if len(msg) > 64<<10 || !strings.HasSuffix(msg, "é…") || !strings.HasPrefix(huge, strings.TrimSuffix(msg, "…")) {
			t.Fatalf("stored error of %d bytes ending %q, want at most %d bytes, cut after a whole character", len(msg), msg[max(0, len(msg)-8):], 64<<10)
		}
	})
}

type hugeErrorArgs struct{}

func (hugeErrorArgs) Kind() string { return "test.huge_error" }

// TestUndecodableArgsFailOnlyTheirJob: a job whose stored args do not
// decode into its worker's type fails alone with an error naming the
// decode; the jobs claimed with it run.
func TestUndecodableArgsFailOnlyTheirJob(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 4)
		ctx := context.Background()
		ids, err := b.client.InsertMany(ctx, []drover.InsertManyParams{
			{Args: noopArgs{N: 1}},
			{Args: drover.RawArgs{KindName: "test.noop", JSON: json.RawMessage(`{"n":"seven"}`)}, Opts: &drover.InsertOpts{MaxAttempts: 1}},
			{Args: noopArgs{N: 3}},
			{Args: noopArgs{N: 4}},
		})
		if err != nil {
			t.Fatal(err)
		}
		b.start(t)
		worker := b.client
		row := waitState(t, worker, ids[1], drovertype.JobStateDiscarded)
		if len(row.Errors) != 1 || !strings.Contains(row.Errors[0].Error, "decode args") {
			t.Fatalf("undecodable job: errors %+v, want one naming the decode", row.Errors)
		}
		for _, id := range []int64{ids[0], ids[2], ids[3]} {
			if row := waitState(t, worker, id, drovertype.JobStateCompleted); row.Attempt != 1 {
				t.Fatalf("job %d completed at attempt %d, want 1", id, row.Attempt)
			}
		}
		if _, runs := b.rec.snapshot(); len(runs) != 3 || runs[ids[1]] != 0 {
			t.Fatalf("handler runs %v, want the 3 decodable jobs", runs)
		}
	})
}

// TestInsertRefusesTextTheStoreCannotHold: every text or JSON field of a
// job is checked for NUL and invalid UTF-8, and every time for its range,
// on every insert path; the error names the job and the field, and
// nothing of the call is stored.
func TestInsertRefusesTextTheStoreCannotHold(t *testing.T) {
	type nulArgs struct {
		S string `json:"s"`
	}
	tests := []struct {
		name string
		args drover.Args
		opts drover.InsertOpts
		want string
	}{
		{"raw args with invalid UTF-8", drover.RawArgs{KindName: "test.noop", JSON: json.RawMessage("{\"s\":\"\xff bad\"}")}, drover.InsertOpts{}, "job 3 of 4: args: invalid UTF-8 at byte 6"},
		{"raw args with NUL escape", drover.RawArgs{KindName: "test.noop", JSON: json.RawMessage(`{"s":"a\u0000"}`)}, drover.InsertOpts{}, `job 3 of 4: args: contains \u0000`},
		{"typed args with NUL", drover.RawArgs{KindName: "test.noop", JSON: mustJSON(nulArgs{S: "a\x00"})}, drover.InsertOpts{}, `job 3 of 4: args: contains \u0000`},
		{"metadata with NUL escape", noopArgs{}, drover.InsertOpts{Metadata: json.RawMessage(`{"k":"\u0000"}`)}, `job 3 of 4: metadata: contains \u0000`},
		{"metadata with invalid UTF-8", noopArgs{}, drover.InsertOpts{Metadata: json.RawMessage("{\"k\":\"\xc3\"}")}, "job 3 of 4: metadata: invalid UTF-8"},
		{"tag with invalid UTF-8", noopArgs{}, drover.InsertOpts{Tags: []string{"ok", "\xff"}}, "job 3 of 4: tags[1]: invalid UTF-8 at byte 0"},
		{"tag with NUL", noopArgs{}, drover.InsertOpts{Tags: []string{"a\x00"}}, "job 3 of 4: tags[0]: contains a NUL"},
		{"key with invalid UTF-8", noopArgs{}, drover.InsertOpts{Key: "k\xff"}, "job 3 of 4: key: invalid UTF-8 at byte 1"},
		{"unique key with NUL", noopArgs{}, drover.InsertOpts{UniqueKey: "u\x00"}, "job 3 of 4: unique key: contains a NUL"},
		// The separator of a stored key's parts: "a\x1f<window>" without a
		// period would squat the window of key "a" with one.
		{"unique key with the part separator", noopArgs{}, drover.InsertOpts{UniqueKey: "a\x1f1764000000000000"}, "job 3 of 4: unique key: contains U+001F"},
		{"run at past 9999", noopArgs{}, drover.InsertOpts{RunAt: time.Date(9999, 12, 31, 23, 0, 0, 0, time.FixedZone("", -5*3600))}, "job 3 of 4: run at 10000-"},
		{"run at before 1970", noopArgs{}, drover.InsertOpts{RunAt: time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC)}, "job 3 of 4: run at 1969-12-31"},
	}
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 1)
		ctx := context.Background()
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				opts := tt.opts
				jobs := []drover.InsertManyParams{{Args: noopArgs{N: 1}}, {Args: noopArgs{N: 2}}, {Args: tt.args, Opts: &opts}, {Args: noopArgs{N: 4}}}
				_, err := b.client.InsertMany(ctx, jobs)
				if !errors.Is(err, drover.ErrInvalid) || !strings.Contains(withoutKind(err), tt.want) {
					t.Fatalf("InsertMany = %v, want an input error containing %q", err, tt.want)
				}
				_, err = b.client.InsertBatch(ctx, jobs, nil)
				if !errors.Is(err, drover.ErrInvalid) || !strings.Contains(withoutKind(err), tt.want) {
					t.Fatalf("InsertBatch = %v, want an input error containing %q", err, tt.want)
				}
				want := tt.want[len("job 3 of 4: "):]
				if _, err := b.client.Insert(ctx, tt.args, &opts); !errors.Is(err, drover.ErrInvalid) || !strings.Contains(err.Error(), want) {
					t.Fatalf("Insert = %v, want an input error containing %q", err, want)
				}
			})
		}
		counts, err := b.client.JobCountByState(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		for state, n := range counts {
			if n != 0 {
				t.Fatalf("%d jobs %s after refused inserts, want none stored", n, state)
			}
		}
	})
}

// withoutKind is an input error's message without the words that mark its
// kind, as the HTTP API words it.
func withoutKind(err error) string {
	return strings.Replace(err.Error(), drover.ErrInvalid.Error()+": ", "", 1)
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// TestRemoteRefusesPoison: a remote worker's error and trace with a NUL or
// invalid UTF-8 are stored made safe, while a result the store cannot
// hold, a retry time out of range, an attempt past 32 bits and a bad
// owner are refused as input errors that quote at most a short prefix of
// the value, and leave the job as it was.
func TestRemoteRefusesPoison(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := remoteSetup(t, s)
		ctx := context.Background()
		for _, owner := range []string{"w\x00", "w\xff", strings.Repeat("w", 8<<20)} {
			_, err := b.remote.Claim(ctx, drover.ClaimParams{Queue: "default", Max: 1, Owner: owner, Lease: time.Minute})
			if !errors.Is(err, drover.ErrInvalid) || !strings.Contains(err.Error(), "owner") || len(err.Error()) > 200 {
				t.Fatalf("Claim with owner %.20q = %.300v, want a short input error naming the owner", owner, err)
			}
		}
		b.insert(t, drover.RawArgs{KindName: "remote", JSON: []byte(`{}`)}, &drover.InsertOpts{MaxAttempts: 1})
		b.insert(t, drover.RawArgs{KindName: "remote", JSON: []byte(`{}`)}, nil)
		jobs, err := b.remote.Claim(ctx, drover.ClaimParams{Queue: "default", Max: 2, Owner: "w", Lease: time.Minute})
		if err != nil || len(jobs) != 2 {
			t.Fatalf("Claim = %d jobs, %v", len(jobs), err)
		}
		failed, other := jobs[0], jobs[1]
		refused := []struct {
			r    drover.AttemptResult
			want string
		}{
			{drover.AttemptResult{Outcome: drover.AttemptCompleted, Result: json.RawMessage(`{"a":"\u0000"}`)}, `result: contains \u0000`},
			{drover.AttemptResult{Outcome: drover.AttemptCompleted, Result: json.RawMessage("\"\xff\"")}, "result: invalid UTF-8"},
			{drover.AttemptResult{Outcome: drover.AttemptFailed, MaxAttempts: 2, RetryAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, "retry at"},
			{drover.AttemptResult{Outcome: drover.AttemptFailed, MaxAttempts: 2, RetryAt: time.Unix(-1, 0)}, "retry at"},
			{drover.AttemptResult{Outcome: drover.AttemptFailed, MaxAttempts: math.MaxInt32 + 1}, "max attempts"},
			{drover.AttemptResult{Attempt: math.MaxInt32 + 1, Outcome: drover.AttemptCompleted}, "attempt 2147483648"},
		}
		for _, c := range refused {
			r := c.r
			r.ID = other.ID
			if r.Attempt == 0 {
				r.Attempt = other.Attempt
			}
			_, err := b.remote.Finish(ctx, []drover.AttemptResult{r})
			if !errors.Is(err, drover.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Finish(%+v) = %v, want an input error naming %q", c.r, err, c.want)
			}
		}
		if _, err := b.remote.ExtendLeases(ctx, []drover.AttemptRef{{ID: other.ID, Attempt: math.MaxInt32 + 1}}, time.Minute); !errors.Is(err, drover.ErrInvalid) {
			t.Errorf("ExtendLeases with attempt 2^31 = %v, want an input error", err)
		}
		rep, err := b.remote.Finish(ctx, []drover.AttemptResult{
			{ID: failed.ID, Attempt: failed.Attempt, LeaseToken: failed.LeaseToken, Outcome: drover.AttemptFailed, Error: "x\x00y", Trace: "t\xffu"},
			{ID: other.ID, Attempt: other.Attempt, LeaseToken: other.LeaseToken, Outcome: drover.AttemptCompleted},
		})
		if err != nil || len(rep.Accepted) != 2 {
			t.Fatalf("Finish = %+v, %v; want both accepted", rep, err)
		}
		row, err := b.client.JobGet(ctx, failed.ID)
		if err != nil {
			t.Fatal(err)
		}
		if row.State != drovertype.JobStateDiscarded || len(row.Errors) != 1 || row.Errors[0].Error != "x\uFFFDy" || row.Errors[0].Trace != "t\uFFFDu" {
			t.Fatalf("failed job: %s %+v, want discarded with its error and trace made safe", row.State, row.Errors)
		}
		if row, _ := b.client.JobGet(ctx, other.ID); row.State != drovertype.JobStateCompleted {
			t.Fatalf("other job %s, want completed", row.State)
		}
	})
}

// TestClientIDIsChecked: a client's ID is the lease owner of every job it
// claims, so one the store cannot hold is refused when the client is made
// rather than failing each of its claims.
func TestClientIDIsChecked(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		d := s.open(t)
		for _, id := range []string{"a\x00b", "a\xffb", strings.Repeat("i", 256)} {
			cfg := fastConfig(newRecorder(), 1)
			cfg.ID = id
			var err error
			switch d := d.(type) {
			case *droverpg.Driver:
				_, err = drover.NewClient(d, cfg)
			case *droverfleet.Driver[pgx.Tx]:
				_, err = drover.NewClient(d, cfg)
			case *droversqlite.Driver:
				_, err = drover.NewClient(d, cfg)
			}
			if !errors.Is(err, drover.ErrInvalid) || !strings.Contains(err.Error(), "config: ID") {
				t.Errorf("NewClient with ID %.20q = %v, want an input error naming the ID", id, err)
			}
		}
	})
}
