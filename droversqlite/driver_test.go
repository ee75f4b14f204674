package droversqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/engine"
)

// setup returns a migrated driver on a fresh file.
func setup(t testing.TB, opts ...Option) *Driver {
	t.Helper()
	d, _ := setupFile(t, opts...)
	return d
}

// setupFile is setup that also returns the file, for tests that open it
// again.
func setupFile(t testing.TB, opts ...Option) (*Driver, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "drover.db")
	d := open(t, path, opts...)
	migrate(t, d)
	return d, path
}

func open(t testing.TB, path string, opts ...Option) *Driver {
	t.Helper()
	d, err := Open(context.Background(), path, opts...)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// migrate applies every migration the driver has not applied yet, the way
// the root package's migrate command does.
func migrate(t testing.TB, d *Driver) {
	t.Helper()
	if err := applyUpTo(context.Background(), d, math.MaxInt); err != nil {
		t.Fatalf("migrate: %v", err)
	}
}

// applyUpTo applies the migrations not applied yet up to version last.
func applyUpTo(ctx context.Context, d *Driver, last int) error {
	_, _, err := droverdriver.MigrateUpTo(ctx, d, last)
	return err
}

func job(queue string) droverdriver.InsertParams {
	return droverdriver.InsertParams{Queue: queue, Kind: "noop", Args: []byte(`{}`), MaxAttempts: 3}
}

func insert(t testing.TB, e droverdriver.Executor, jobs ...droverdriver.InsertParams) []int64 {
	t.Helper()
	ids, err := e.JobInsertMany(context.Background(), jobs)
	if err != nil {
		t.Fatalf("insert: %v", err)
	}
	return ids
}

func claim(t testing.TB, e droverdriver.Executor, queue string, n int, lease time.Duration) []*droverdriver.JobRow {
	t.Helper()
	jobs, err := e.JobClaim(context.Background(), droverdriver.ClaimParams{Queue: queue, Max: n, Owner: "w1", Lease: lease})
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	return jobs
}

func get(t testing.TB, e droverdriver.Executor, id int64) *droverdriver.JobRow {
	t.Helper()
	j, err := e.JobGet(context.Background(), id)
	if err != nil {
		t.Fatalf("get %d: %v", id, err)
	}
	return j
}

func ids(jobs []*droverdriver.JobRow) []int64 {
	out := make([]int64, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

// attemptErrors decodes a job's errors column.
func attemptErrors(t testing.TB, j *droverdriver.JobRow) []map[string]any {
	t.Helper()
	if j.Errors == nil {
		return nil
	}
	var errs []map[string]any
	if err := json.Unmarshal(j.Errors, &errs); err != nil {
		t.Fatalf("job %d errors %q: %v", j.ID, j.Errors, err)
	}
	return errs
}

func TestInsertAndClaimOrder(t *testing.T) {
	ctx := context.Background()
	d := setup(t)
	past := time.Now().Add(-time.Hour)
	in := []droverdriver.InsertParams{
		{Queue: "q", Kind: "a", Args: []byte(`{"n":0}`), Priority: 2, MaxAttempts: 3},
		{Queue: "q", Kind: "a", Args: []byte(`{"n":1}`), Priority: 1, MaxAttempts: 3},
		{Queue: "q", Kind: "a", Args: []byte(`{"n":2}`), Priority: 1, MaxAttempts: 3, RunAt: past},
		{Queue: "q", Kind: "a", Args: []byte(`{"n":3}`), Priority: 1, MaxAttempts: 3},
		{Queue: "q", Kind: "a", Args: []byte(`{"n":4}`), Priority: 0, MaxAttempts: 3, RunAt: time.Now().Add(time.Hour)},
		{Queue: "other", Kind: "a", Args: []byte(`{"n":5}`), MaxAttempts: 3},
	}
	got := insert(t, d, in...)
	if len(got) != len(in) || !slices.IsSorted(got) {
		t.Fatalf("ids %v: want %d ascending", got, len(in))
	}

	// Priority first, then run_at, then ID; the future job and the other
	// queue are not claimable.
	jobs := claim(t, d, "q", 3, time.Minute)
	if want := []int64{got[2], got[1], got[3]}; !slices.Equal(ids(jobs), want) {
		t.Fatalf("claimed %v, want %v", ids(jobs), want)
	}
	jobs = append(jobs, claim(t, d, "q", 10, time.Minute)...)
	if want := []int64{got[2], got[1], got[3], got[0]}; !slices.Equal(ids(jobs), want) {
		t.Fatalf("claimed %v, want %v", ids(jobs), want)
	}
	if more := claim(t, d, "q", 10, time.Minute); len(more) != 0 {
		t.Fatalf("claimed future job %v", ids(more))
	}

	j := jobs[0]
	if j.State != droverdriver.StateRunning || j.Attempt != 1 || j.LeaseOwner != "w1" || j.AttemptedAt == nil ||
		j.LeaseExpiresAt == nil || j.FinalizedAt != nil || j.CancelRequested {
		t.Fatalf("claimed row %+v", j)
	}
	if d := j.LeaseExpiresAt.Sub(*j.AttemptedAt); d != time.Minute {
		t.Errorf("lease %v, want 1m", d)
	}
	if !j.RunAt.Equal(past.Truncate(time.Microsecond)) {
		t.Errorf("run_at %v, want %v", j.RunAt, past)
	}
	if string(j.Args) != `{"n":2}` || string(j.Metadata) != `{}` || j.Tags == nil || len(j.Tags) != 0 || j.Errors != nil {
		t.Errorf("payload args=%s metadata=%s tags=%v errors=%s", j.Args, j.Metadata, j.Tags, j.Errors)
	}
	if n, err := d.JobCountByState(ctx, "q"); err != nil || n[droverdriver.StateRunning] != 4 || n[droverdriver.StateScheduled] != 1 {
		t.Errorf("counts %v %v", n, err)
	}
}

func TestInsertRoundTrip(t *testing.T) {
	d := setup(t)
	runAt := time.Date(2030, 1, 2, 3, 4, 5, 678912345, time.UTC)
	in := droverdriver.InsertParams{
		Queue: "q\"uote", Kind: "kind\\\n\t", Args: []byte(`{ "s": "é \u0001 \"x\"",  "n": [1, 2] }`),
		Metadata: []byte(`{"m":true}`), Tags: []string{"a", "b,c", `"q"`}, Priority: 3, MaxAttempts: 7,
		RunAt: runAt, Timeout: 1500 * time.Millisecond,
	}
	id := insert(t, d, in)[0]
	j := get(t, d, id)
	want := droverdriver.JobRow{ID: id, State: droverdriver.StateScheduled, Queue: in.Queue, Kind: in.Kind, Priority: 3,
		Args: in.Args, Metadata: in.Metadata, Tags: in.Tags, MaxAttempts: 7, Timeout: in.Timeout,
		RunAt: runAt.Truncate(time.Microsecond)}
	if j.Queue != want.Queue || j.Kind != want.Kind || j.State != want.State || j.Priority != want.Priority ||
		string(j.Args) != string(want.Args) || string(j.Metadata) != string(want.Metadata) ||
		!slices.Equal(j.Tags, want.Tags) || j.MaxAttempts != want.MaxAttempts || j.Timeout != want.Timeout ||
		!j.RunAt.Equal(want.RunAt) || j.Attempt != 0 || j.AttemptedAt != nil {
		t.Fatalf("got %+v\nwant %+v", j, want)
	}
	if time.Since(j.CreatedAt) > time.Minute || j.CreatedAt.Location() != time.UTC {
		t.Errorf("created_at %v", j.CreatedAt)
	}
}

// TestInsertManyIDs checks that the IDs of a batch cut into statements of
// several sizes come back in input order, each naming its own job.
func TestInsertManyIDs(t *testing.T) {
	ctx := context.Background()
	d := setup(t)
	for _, n := range []int{1, 7, 9, 500, 1234} {
		in := make([]droverdriver.InsertParams, n)
		for i := range in {
			in[i] = job("q")
			in[i].Args = []byte(fmt.Sprintf(`{"i":%d}`, i))
		}
		got := insert(t, d, in...)
		if len(got) != n {
			t.Fatalf("%d jobs: %d IDs", n, len(got))
		}
		for i, id := range got {
			if i > 0 && id <= got[i-1] {
				t.Fatalf("%d jobs: IDs not ascending at %d: %v", n, i, got[i-1:i+1])
			}
			if i%97 == 0 || i == n-1 {
				if j := get(t, d, id); string(j.Args) != string(in[i].Args) {
					t.Fatalf("%d jobs: ID %d holds %s, want %s", n, id, j.Args, in[i].Args)
				}
			}
		}
	}
	if n, err := d.JobCountByState(ctx, "q"); err != nil || n[droverdriver.StateAvailable] != 1+7+9+500+1234 {
		t.Fatalf("counts %v %v", n, err)
	}
}

// TestInsertWakesListenersWithRoom checks who an insert wakes among the
// listeners of one process: in turn, from one further on each time, until
// those woken have room for the inserted jobs, and every listener when a
// finish promotes a key's next job (a count the driver does not keep).
func TestInsertWakesListenersWithRoom(t *testing.T) {
	keyed := func(key string) droverdriver.InsertParams {
		j := job("q")
		j.Key, j.KeyLimit = key, 1
		return j
	}
	tests := []struct {
		name  string
		rooms []int
		act   func(t *testing.T, d *Driver)
		want  []int
	}{
		{"one job at a time, in turn", []int{10, 10, 10}, func(t *testing.T, d *Driver) {
			for range 4 {
				insert(t, d, job("q"))
			}
		}, []int{2, 1, 1}},
		{"more jobs than one listener has room for", []int{2, 2, 2}, func(t *testing.T, d *Driver) {
			insert(t, d, job("q"), job("q"), job("q"))
		}, []int{1, 1, 0}},
		{"listeners without room are passed over", []int{0, 0, 5}, func(t *testing.T, d *Driver) {
			insert(t, d, job("q"))
		}, []int{1, 1, 1}},
		{"jobs scheduled later wake nobody", []int{10, 10}, func(t *testing.T, d *Driver) {
			later := job("q")
			later.RunAt = time.Now().Add(time.Hour)
			insert(t, d, later)
		}, []int{0, 0}},
		{"a promoted key wakes every listener", []int{10, 10}, func(t *testing.T, d *Driver) {
			insert(t, d, keyed("a"), keyed("a")) // wakes one
			rows := claim(t, d, "q", 1, time.Minute)
			if _, err := engine.Finish(context.Background(), d, fenced(t, d, []droverdriver.Result{{ID: rows[0].ID, Attempt: rows[0].Attempt,
				Outcome: droverdriver.OutcomeCompleted, Key: rows[0].Key, Queue: "q"}})); err != nil {
				t.Fatal(err)
			}
		}, []int{2, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := setup(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var mu sync.Mutex
			woken := make([]int, len(tc.rooms))
			for i, room := range tc.rooms {
				connected := make(chan struct{})
				go d.NewListener().Listen(ctx, func() { close(connected) }, func(q string) int {
					mu.Lock()
					defer mu.Unlock()
					woken[i]++
					return room
				})
				<-connected
			}
			tc.act(t, d)
			// Delivery is synchronous: the calls above returned after it.
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(woken, tc.want) {
				t.Fatalf("wake-ups per listener %v, want %v", woken, tc.want)
			}
		})
	}
}

func TestInsertWakesListeners(t *testing.T) {
	d, path := setupFile(t)
	// A second driver on the same file shares the hub, as two clients in
	// one process would.
	other := open(t, path)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	connected := make(chan struct{})
	got := make(chan string, 10)
	go d.NewListener().Listen(ctx, func() { close(connected) }, func(q string) int { got <- q; return 1 })
	<-connected

	insert(t, other, job("later"))
	insert(t, other, droverdriver.InsertParams{Queue: "future", Kind: "k", Args: []byte(`{}`), MaxAttempts: 1, RunAt: time.Now().Add(time.Hour)})
	insert(t, other, job("now"), job("now"))
	// The queues of one insert are woken in no defined order.
	seen := map[string]bool{}
	for len(seen) < 2 {
		select {
		case q := <-got:
			if q != "later" && q != "now" {
				t.Fatalf("notification %q, want later and now (future jobs wake nobody)", q)
			}
			seen[q] = true
		case <-time.After(5 * time.Second):
			t.Fatalf("notifications so far %v, want later and now", seen)
		}
	}
}

func TestFinish(t *testing.T) {
	ctx := context.Background()
	errJSON := []byte(`{"attempt":1,"at":"2024-01-01T00:00:00Z","error":"boom"}`)
	later := time.Now().Add(time.Hour)
	tests := []struct {
		name    string
		outcome droverdriver.Outcome
		err     []byte
		runAt   time.Time
		cancel  bool // request a cancel before finishing
		state   droverdriver.State
		attempt int
		errs    int
	}{
		{name: "completed", outcome: droverdriver.OutcomeCompleted, state: droverdriver.StateCompleted, attempt: 1},
		{name: "completed after cancel request", outcome: droverdriver.OutcomeCompleted, cancel: true, state: droverdriver.StateCompleted, attempt: 1},
		{name: "retry", outcome: droverdriver.OutcomeRetry, err: errJSON, runAt: later, state: droverdriver.StateRetryable, attempt: 1, errs: 1},
		{name: "retry now", outcome: droverdriver.OutcomeRetry, err: errJSON, runAt: time.Now().Add(-time.Second), state: droverdriver.StateAvailable, attempt: 1, errs: 1},
		{name: "retry after cancel request", outcome: droverdriver.OutcomeRetry, err: errJSON, runAt: later, cancel: true, state: droverdriver.StateCancelled, attempt: 1, errs: 1},
		{name: "discarded", outcome: droverdriver.OutcomeDiscarded, err: errJSON, state: droverdriver.StateDiscarded, attempt: 1, errs: 1},
		{name: "cancelled", outcome: droverdriver.OutcomeCancelled, err: errJSON, state: droverdriver.StateCancelled, attempt: 1, errs: 1},
		{name: "released", outcome: droverdriver.OutcomeReleased, state: droverdriver.StateAvailable, attempt: 0},
		{name: "released with error", outcome: droverdriver.OutcomeReleased, err: errJSON, state: droverdriver.StateAvailable, attempt: 0, errs: 1},
		{name: "released after cancel request", outcome: droverdriver.OutcomeReleased, cancel: true, state: droverdriver.StateCancelled, attempt: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := setup(t)
			id := insert(t, d, job("q"))[0]
			j := claim(t, d, "q", 1, time.Minute)[0]
			if tt.cancel {
				if _, err := engine.Cancel(ctx, d, id, time.Now()); err != nil {
					t.Fatal(err)
				}
			}
			// A stale attempt is fenced off and changes nothing.
			acc, err := engine.Finish(ctx, d, fenced(t, d, []droverdriver.Result{{ID: id, Attempt: j.Attempt + 1, Outcome: tt.outcome, Error: tt.err, RunAt: tt.runAt}}))
			if err != nil || len(acc) != 0 {
				t.Fatalf("stale finish accepted %v, %v", acc, err)
			}
			if got := get(t, d, id); got.State != droverdriver.StateRunning {
				t.Fatalf("stale finish moved job to %s", got.State)
			}
			acc, err = engine.Finish(ctx, d, fenced(t, d, []droverdriver.Result{{ID: id, Attempt: j.Attempt, Outcome: tt.outcome, Error: tt.err, RunAt: tt.runAt}}))
			if err != nil || !slices.Equal(acc, []int64{id}) {
				t.Fatalf("finish accepted %v, %v", acc, err)
			}
			got := get(t, d, id)
			if got.State != tt.state || got.Attempt != tt.attempt || len(attemptErrors(t, got)) != tt.errs {
				t.Fatalf("state %s attempt %d errors %s, want %s %d %d", got.State, got.Attempt, got.Errors, tt.state, tt.attempt, tt.errs)
			}
			if tt.errs > 0 && attemptErrors(t, got)[0]["error"] != "boom" {
				t.Errorf("errors %s", got.Errors)
			}
			if got.State.Finished() != (got.FinalizedAt != nil) || got.LeaseOwner != "" || got.LeaseExpiresAt != nil {
				t.Errorf("finalized_at %v lease %q %v", got.FinalizedAt, got.LeaseOwner, got.LeaseExpiresAt)
			}
			if tt.state == droverdriver.StateRetryable && !got.RunAt.Equal(tt.runAt.Truncate(time.Microsecond)) {
				t.Errorf("run_at %v, want %v", got.RunAt, tt.runAt)
			}
			// A second result for the same attempt is fenced off too.
			acc, err = engine.Finish(ctx, d, fenced(t, d, []droverdriver.Result{{ID: id, Attempt: j.Attempt, Outcome: droverdriver.OutcomeCompleted}}))
			if err != nil || len(acc) != 0 {
				t.Fatalf("second finish accepted %v, %v", acc, err)
			}
		})
	}
}

func TestFinishBatch(t *testing.T) {
	ctx := context.Background()
	d := setup(t)
	insert(t, d, job("q"), job("q"), job("q"), job("q"))
	jobs := claim(t, d, "q", 4, time.Minute)
	e1 := []byte(`{"error":"one"}`)
	acc, err := engine.Finish(ctx, d, fenced(t, d, []droverdriver.Result{
		{ID: jobs[0].ID, Attempt: 1, Outcome: droverdriver.OutcomeCompleted},
		{ID: jobs[1].ID, Attempt: 1, Outcome: droverdriver.OutcomeRetry, Error: e1, RunAt: time.Now().Add(time.Hour)},
		{ID: jobs[2].ID, Attempt: 2, Outcome: droverdriver.OutcomeCompleted}, // stale
		{ID: jobs[3].ID, Attempt: 1, Outcome: droverdriver.OutcomeDiscarded, Error: e1},
		{ID: 999999, Attempt: 1, Outcome: droverdriver.OutcomeCompleted}, // unknown
	}))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(acc)
	if want := []int64{jobs[0].ID, jobs[1].ID, jobs[3].ID}; !slices.Equal(acc, want) {
		t.Fatalf("accepted %v, want %v", acc, want)
	}
	// The retried job keeps its errors across attempts.
	if _, err := d.JobRetry(ctx, jobs[1].ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	j := claim(t, d, "q", 1, time.Minute)[0]
	if j.ID != jobs[1].ID || j.Attempt != 2 {
		t.Fatalf("reclaimed %d attempt %d", j.ID, j.Attempt)
	}
	if _, err := engine.Finish(ctx, d, fenced(t, d, []droverdriver.Result{{ID: j.ID, Attempt: 2, Outcome: droverdriver.OutcomeDiscarded, Error: []byte(`{"error":"two"}`)}})); err != nil {
		t.Fatal(err)
	}
	errs := attemptErrors(t, get(t, d, j.ID))
	if len(errs) != 2 || errs[0]["error"] != "one" || errs[1]["error"] != "two" {
		t.Fatalf("errors %v", errs)
	}
}

func TestFinishDuplicatesAndStale(t *testing.T) {
	ctx := context.Background()
	d := setup(t)
	insert(t, d, job("q"), job("q"), job("q"))
	jobs := claim(t, d, "q", 3, time.Minute)
	acc, err := engine.Finish(ctx, d, fenced(t, d, []droverdriver.Result{
		{ID: jobs[0].ID, Attempt: 1, Outcome: droverdriver.OutcomeCompleted},
		{ID: jobs[0].ID, Attempt: 1, Outcome: droverdriver.OutcomeDiscarded},                  // duplicate: ignored
		{ID: jobs[1].ID, Attempt: 7, Outcome: droverdriver.OutcomeRetry, Error: []byte(`{}`)}, // stale
		{ID: jobs[2].ID, Attempt: 1, Outcome: droverdriver.OutcomeReleased},
		{ID: jobs[1].ID, Attempt: 1, Outcome: droverdriver.OutcomeCompleted}, // same job, current attempt: a duplicate too
	}))
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{jobs[0].ID, jobs[2].ID}; !slices.Equal(acc, want) {
		t.Fatalf("accepted %v, want %v", acc, want)
	}
	for id, want := range map[int64]droverdriver.State{jobs[0].ID: droverdriver.StateCompleted, jobs[1].ID: droverdriver.StateRunning, jobs[2].ID: droverdriver.StateAvailable} {
		if j := get(t, d, id); j.State != want {
			t.Errorf("job %d: %s, want %s", id, j.State, want)
		}
	}
}

func TestHeartbeat(t *testing.T) {
	ctx := context.Background()
	d := setup(t)
	insert(t, d, job("q"), job("q"), job("q"), job("q"))
	jobs := claim(t, d, "q", 4, time.Second)
	if _, err := engine.Cancel(ctx, d, jobs[1].ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := engine.Finish(ctx, d, fenced(t, d, []droverdriver.Result{{ID: jobs[2].ID, Attempt: 1, Outcome: droverdriver.OutcomeCompleted}})); err != nil {
		t.Fatal(err)
	}
	ids := []int64{jobs[0].ID, jobs[1].ID, jobs[2].ID, jobs[3].ID}
	res, err := d.JobHeartbeat(ctx, droverdriver.HeartbeatParams{
		IDs:      ids,
		Attempts: []int{1, 1, 1, 2}, // jobs[3]: wrong attempt
		Tokens:   tokensOf(t, d, ids),
		Lease:    time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{jobs[2].ID, jobs[3].ID}; !slices.Equal(res.Lost, want) {
		t.Errorf("lost %v, want %v", res.Lost, want)
	}
	if want := []int64{jobs[1].ID}; !slices.Equal(res.CancelRequested, want) {
		t.Errorf("cancel requested %v, want %v", res.CancelRequested, want)
	}
	j := get(t, d, jobs[0].ID)
	if time.Until(*j.LeaseExpiresAt) < 50*time.Minute {
		t.Errorf("lease not extended: %v", j.LeaseExpiresAt)
	}
	if j := get(t, d, jobs[3].ID); time.Until(*j.LeaseExpiresAt) > time.Minute {
		t.Errorf("lease of a lost attempt extended: %v", j.LeaseExpiresAt)
	}
}

func TestRescue(t *testing.T) {
	ctx := context.Background()
	d := setup(t)
	in := []droverdriver.InsertParams{job("q"), job("q"), job("q"), job("q")}
	in[1].MaxAttempts = 1
	got := insert(t, d, in...)
	expired := claim(t, d, "q", 3, -time.Second) // leases already over
	claim(t, d, "q", 1, time.Hour)               // got[3]: lease still running
	if _, err := engine.Cancel(ctx, d, got[2], time.Now()); err != nil {
		t.Fatal(err)
	}
	if len(expired) != 3 {
		t.Fatalf("claimed %d", len(expired))
	}

	n, err := engine.Rescue(ctx, d, droverdriver.RescueParams{Now: time.Now(), Limit: 2})
	if err != nil || n != 2 {
		t.Fatalf("rescued %d, %v; want 2 (limit)", n, err)
	}
	n, err = engine.Rescue(ctx, d, droverdriver.RescueParams{Now: time.Now(), Limit: 100})
	if err != nil || n != 1 {
		t.Fatalf("rescued %d, %v; want 1", n, err)
	}
	if n, _ := engine.Rescue(ctx, d, droverdriver.RescueParams{Now: time.Now(), Limit: 100}); n != 0 {
		t.Fatalf("rescued %d again", n)
	}

	for _, tt := range []struct {
		id      int64
		state   droverdriver.State
		attempt int
	}{
		{got[0], droverdriver.StateRetryable, 1}, // back to available with an error recorded
		{got[1], droverdriver.StateDiscarded, 1}, // out of attempts
		{got[2], droverdriver.StateCancelled, 1}, // cancel was requested
		{got[3], droverdriver.StateRunning, 1},   // lease not expired
	} {
		j := get(t, d, tt.id)
		state := j.State
		if state == droverdriver.StateRetryable || state == droverdriver.StateAvailable {
			// Rescued jobs are claimable at once: available, or retryable
			// only in the microsecond it takes to read them back.
			state = droverdriver.StateRetryable
		}
		if state != tt.state || j.Attempt != tt.attempt {
			t.Errorf("job %d: %s attempt %d, want %s %d", tt.id, j.State, j.Attempt, tt.state, tt.attempt)
		}
		if tt.state == droverdriver.StateRunning {
			continue
		}
		errs := attemptErrors(t, j)
		if len(errs) != 1 || !strings.HasPrefix(errs[0]["error"].(string), "lease expired") || errs[0]["attempt"] != 1.0 {
			t.Errorf("job %d errors %s", tt.id, j.Errors)
		}
		if at, err := time.Parse(time.RFC3339Nano, errs[0]["at"].(string)); err != nil || time.Since(at) > time.Minute {
			t.Errorf("job %d error time %v %v", tt.id, errs[0]["at"], err)
		}
		if j.LeaseOwner != "" || j.LeaseExpiresAt != nil {
			t.Errorf("job %d keeps its lease", tt.id)
		}
	}
	if j := claim(t, d, "q", 10, time.Minute); !slices.Equal(ids(j), []int64{got[0]}) {
		t.Errorf("claimable after rescue: %v", ids(j))
	}
}

func TestPrune(t *testing.T) {
	ctx := context.Background()
	d := setup(t)
	got := insert(t, d, job("q"), job("q"), job("q"), job("q"), job("q"))
	jobs := claim(t, d, "q", 3, time.Minute)
	if _, err := engine.Finish(ctx, d, fenced(t, d, []droverdriver.Result{
		{ID: jobs[0].ID, Attempt: 1, Outcome: droverdriver.OutcomeCompleted},
		{ID: jobs[1].ID, Attempt: 1, Outcome: droverdriver.OutcomeCompleted},
		{ID: jobs[2].ID, Attempt: 1, Outcome: droverdriver.OutcomeDiscarded},
	})); err != nil {
		t.Fatal(err)
	}
	if _, err := engine.Cancel(ctx, d, got[3], time.Now()); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Add(time.Hour)
	tests := []struct {
		name                            string
		completed, cancelled, discarded time.Duration
		limit, want                     int
	}{
		{"too recent", 2 * time.Hour, 2 * time.Hour, 2 * time.Hour, 100, 0},
		{"kept forever", -1, -1, -1, 100, 0},
		{"limit", 0, -1, -1, 1, 1},
		{"completed", 0, -1, -1, 100, 1},
		{"rest", -1, time.Minute, 0, 100, 2},
	}
	for _, tt := range tests {
		n, err := d.JobPrune(ctx, droverdriver.PruneParams{Now: now, CompletedRetention: tt.completed,
			CancelledRetention: tt.cancelled, DiscardedRetention: tt.discarded, Limit: tt.limit})
		if err != nil || n != tt.want {
			t.Fatalf("%s: pruned %d, %v; want %d", tt.name, n, err, tt.want)
		}
	}
	counts, err := d.JobCountByState(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[droverdriver.State]int64{droverdriver.StateAvailable: 1}; !maps.Equal(counts, want) {
		t.Fatalf("counts %v, want %v", counts, want)
	}
}

func TestGetAndList(t *testing.T) {
	ctx := context.Background()
	d := setup(t)
	future := time.Now().Add(time.Hour)
	got := insert(t, d,
		job("a"),
		droverdriver.InsertParams{Queue: "a", Kind: "other", Args: []byte(`{}`), MaxAttempts: 3, RunAt: future},
		job("b"),
		job("b"),
		job("a"),
		job("a"),
	)
	// got[2] running; got[3] retryable; got[4] completed; got[5] stays available.
	if j := claim(t, d, "b", 2, time.Minute); len(j) != 2 {
		t.Fatal("claim b")
	}
	if j := claim(t, d, "a", 2, time.Minute); !slices.Equal(ids(j), []int64{got[0], got[4]}) {
		t.Fatalf("claim a: %v", ids(j))
	}
	if _, err := engine.Finish(ctx, d, fenced(t, d, []droverdriver.Result{
		{ID: got[3], Attempt: 1, Outcome: droverdriver.OutcomeRetry, Error: []byte(`{}`), RunAt: future},
		{ID: got[4], Attempt: 1, Outcome: droverdriver.OutcomeCompleted},
		{ID: got[0], Attempt: 1, Outcome: droverdriver.OutcomeReleased},
	})); err != nil {
		t.Fatal(err)
	}

	states := map[int64]droverdriver.State{
		got[0]: droverdriver.StateAvailable, got[1]: droverdriver.StateScheduled, got[2]: droverdriver.StateRunning,
		got[3]: droverdriver.StateRetryable, got[4]: droverdriver.StateCompleted, got[5]: droverdriver.StateAvailable,
	}
	for id, want := range states {
		if j := get(t, d, id); j.State != want {
			t.Errorf("job %d: %s, want %s", id, j.State, want)
		}
	}
	if _, err := d.JobGet(ctx, 424242); !errors.Is(err, droverdriver.ErrNotFound) || !strings.Contains(err.Error(), "424242") {
		t.Errorf("missing job: %v", err)
	}

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
		{"available", droverdriver.ListParams{States: []droverdriver.State{droverdriver.StateAvailable}, Limit: 100}, []int64{got[0], got[5]}},
		{"scheduled or retryable", droverdriver.ListParams{States: []droverdriver.State{droverdriver.StateScheduled, droverdriver.StateRetryable}, Limit: 100}, []int64{got[1], got[3]}},
		{"completed in a", droverdriver.ListParams{Queue: "a", States: []droverdriver.State{droverdriver.StateCompleted}, Limit: 100}, got[4:5]},
		{"running and completed, paged", droverdriver.ListParams{States: []droverdriver.State{droverdriver.StateRunning, droverdriver.StateCompleted}, Limit: 1, AfterID: got[2]}, got[4:5]},
		{"waiting jobs are available later", droverdriver.ListParams{States: []droverdriver.State{droverdriver.StateAvailable}, Now: future.Add(time.Minute), Limit: 100}, []int64{got[0], got[1], got[3], got[5]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs, err := d.JobList(ctx, tt.p)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(jobs), tt.want) {
				t.Fatalf("got %v, want %v", ids(jobs), tt.want)
			}
			for _, j := range jobs {
				if want := states[j.ID]; j.State != want && tt.p.Now.IsZero() {
					t.Errorf("job %d listed as %s, want %s", j.ID, j.State, want)
				}
			}
		})
	}
}

func TestCancelAndRetry(t *testing.T) {
	ctx := context.Background()
	d := setup(t)
	future := time.Now().Add(time.Hour)
	in := []droverdriver.InsertParams{job("q"), job("q"), job("q")}
	in[1].RunAt = future
	in[2].MaxAttempts = 1
	got := insert(t, d, in...)
	running := claim(t, d, "q", 1, time.Minute)[0]
	if running.ID != got[0] {
		t.Fatalf("claimed %d", running.ID)
	}

	// Cancel: a waiting job is finished at once, a running one flagged.
	now := time.Now()
	j, err := engine.Cancel(ctx, d, got[1], now)
	if err != nil || j.State != droverdriver.StateCancelled || j.FinalizedAt == nil || !j.FinalizedAt.Equal(now.Truncate(time.Microsecond)) {
		t.Fatalf("cancel scheduled: %+v %v", j, err)
	}
	j, err = engine.Cancel(ctx, d, got[0], now)
	if err != nil || j.State != droverdriver.StateRunning || !j.CancelRequested {
		t.Fatalf("cancel running: %+v %v", j, err)
	}
	// Cancelling a finished job changes nothing.
	j, err = engine.Cancel(ctx, d, got[1], now.Add(time.Minute))
	if err != nil || j.State != droverdriver.StateCancelled || !j.FinalizedAt.Equal(now.Truncate(time.Microsecond)) {
		t.Fatalf("cancel cancelled: %+v %v", j, err)
	}
	if _, err := engine.Cancel(ctx, d, 999999, now); !errors.Is(err, droverdriver.ErrNotFound) {
		t.Fatalf("cancel missing: %v", err)
	}

	// Retry: a running job is left alone.
	j, err = d.JobRetry(ctx, got[0], now)
	if err != nil || j.State != droverdriver.StateRunning || !j.CancelRequested {
		t.Fatalf("retry running: %+v %v", j, err)
	}

	// A finished job returns to the hot table, claimable at once, with an
	// attempt to spare; listeners hear of it.
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	connected, woken := make(chan struct{}), make(chan string, 10)
	go d.NewListener().Listen(lctx, func() { close(connected) }, func(q string) int { woken <- q; return 1 })
	<-connected
	if acc, err := engine.Finish(ctx, d, fenced(t, d, []droverdriver.Result{{ID: got[0], Attempt: 1, Outcome: droverdriver.OutcomeRetry, RunAt: future}})); err != nil || len(acc) != 1 {
		t.Fatalf("finish: %v %v", acc, err)
	}
	claim(t, d, "q", 1, time.Minute)
	if _, err := engine.Finish(ctx, d, fenced(t, d, []droverdriver.Result{{ID: got[2], Attempt: 1, Outcome: droverdriver.OutcomeDiscarded, Error: []byte(`{"error":"x"}`)}})); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{got[0], got[1], got[2]} {
		before := get(t, d, id)
		j, err := d.JobRetry(ctx, id, time.Now())
		if err != nil || j.State != droverdriver.StateAvailable || j.FinalizedAt != nil || j.CancelRequested {
			t.Fatalf("retry %d (%s): %+v %v", id, before.State, j, err)
		}
		if j.Attempt != before.Attempt || j.MaxAttempts != max(before.MaxAttempts, before.Attempt+1) ||
			string(j.Errors) != string(before.Errors) || j.Queue != "q" {
			t.Errorf("retry %d: %+v, before %+v", id, j, before)
		}
		select {
		case q := <-woken:
			if q != "q" {
				t.Errorf("woken for %q", q)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("retry %d woke nobody", id)
		}
	}
	if j := claim(t, d, "q", 10, time.Minute); len(j) != 3 {
		t.Fatalf("claimable after retry: %v", ids(j))
	}
	if _, err := d.JobRetry(ctx, 999999, now); !errors.Is(err, droverdriver.ErrNotFound) {
		t.Fatalf("retry missing: %v", err)
	}
	// IDs stay unique after jobs went through finished_jobs and back.
	next := insert(t, d, job("q"))[0]
	if next <= got[2] {
		t.Fatalf("new ID %d reuses an old one (last %d)", next, got[2])
	}
}

func TestIDsNotReused(t *testing.T) {
	ctx := context.Background()
	d := setup(t)
	first := insert(t, d, job("q"), job("q"))
	jobs := claim(t, d, "q", 2, time.Minute)
	if _, err := engine.Finish(ctx, d, fenced(t, d, []droverdriver.Result{
		{ID: jobs[0].ID, Attempt: 1, Outcome: droverdriver.OutcomeCompleted},
		{ID: jobs[1].ID, Attempt: 1, Outcome: droverdriver.OutcomeCompleted},
	})); err != nil {
		t.Fatal(err)
	}
	// The hot table is empty now; a plain rowid table would start over.
	if next := insert(t, d, job("q"))[0]; next <= first[1] {
		t.Fatalf("ID %d reused (finished jobs hold %v)", next, first)
	}
}

func TestLeaderElection(t *testing.T) {
	ctx := context.Background()
	d := setup(t)
	elect := func(id string, ttl time.Duration) bool {
		t.Helper()
		ok, err := d.LeaderElect(ctx, droverdriver.LeaderParams{Name: "maint", ID: id, TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !elect("a", time.Hour) {
		t.Fatal("a not elected on a free role")
	}
	if elect("b", time.Hour) {
		t.Fatal("b took an unexpired lease")
	}
	if !elect("a", 50*time.Millisecond) {
		t.Fatal("a could not keep its lease")
	}
	if elect("b", time.Hour) {
		t.Fatal("b took the lease before it expired")
	}
	time.Sleep(60 * time.Millisecond)
	if !elect("b", time.Hour) {
		t.Fatal("b not elected after expiry")
	}
	if elect("a", time.Hour) {
		t.Fatal("a took b's lease")
	}
	if err := d.LeaderResign(ctx, "maint", "a"); err != nil { // not a's to give up
		t.Fatal(err)
	}
	if elect("a", time.Hour) {
		t.Fatal("a's resignation released b's lease")
	}
	if err := d.LeaderResign(ctx, "maint", "b"); err != nil {
		t.Fatal(err)
	}
	if !elect("a", time.Hour) {
		t.Fatal("a not elected after b resigned")
	}
}

func TestMigrations(t *testing.T) {
	ctx := context.Background()
	d := open(t, filepath.Join(t.TempDir(), "m.db"))
	if v, err := d.SchemaVersion(ctx); err != nil || v != 0 {
		t.Fatalf("fresh version %d, %v", v, err)
	}
	migrate(t, d)
	migrate(t, d) // idempotent
	want := d.Migrations()[len(d.Migrations())-1].Version
	if v, err := d.SchemaVersion(ctx); err != nil || v != want {
		t.Fatalf("version %d, %v; want %d", v, err, want)
	}
	if ms := d.Migrations(); ms[0].Version != 1 || ms[0].Name != "init" || !strings.Contains(ms[0].SQL, "drover_jobs") {
		t.Fatalf("migrations %+v", ms[0])
	}

	// Two drivers migrating one file at once apply each migration once.
	path := filepath.Join(t.TempDir(), "race.db")
	drivers := []*Driver{open(t, path), open(t, path), open(t, path)}
	errs := make(chan error, len(drivers))
	for _, d := range drivers {
		go func() { errs <- applyUpTo(ctx, d, math.MaxInt) }()
	}
	for range drivers {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent migrate: %v", err)
		}
	}
	var n int
	if err := open(t, path).reader.QueryRowContext(ctx, "SELECT count(*) FROM drover_schema_migrations").Scan(&n); err != nil || n != len(d.Migrations()) {
		t.Fatalf("recorded %d migrations, %v", n, err)
	}
}

// TestMigrationKeepsUniqueKeys stores an unfinished unique job the way
// migration 003 did (the key on the hot row), applies migration 004 and
// checks that the job still holds its key, is flagged so at claim, and
// gives the key up when it completes.
func TestMigrationKeepsUniqueKeys(t *testing.T) {
	ctx := context.Background()
	d := open(t, filepath.Join(t.TempDir(), "m.db"))
	if err := applyUpTo(ctx, d, 3); err != nil {
		t.Fatal(err)
	}
	const key = "noop\x1fk"
	now := micros(time.Now())
	if _, err := d.writer.ExecContext(ctx, `INSERT INTO drover_jobs (queue, kind, args, max_attempts, created_at, run_at, unique_key)
		VALUES ('default', 'noop', '{}', 3, ?, ?, ?)`, now, now, key); err != nil {
		t.Fatal(err)
	}
	migrate(t, d)
	dup := job("default")
	dup.UniqueKey = key
	if ids := insert(t, d, dup); ids[0] != 0 {
		t.Fatalf("insert of a key held before the migration stored job %d", ids[0])
	}
	jobs := claim(t, d, "default", 10, time.Minute)
	if len(jobs) != 1 || jobs[0].Flow&droverdriver.FlowUnique == 0 {
		t.Fatalf("claimed %+v, want the old unique job flagged unique", jobs)
	}
	if _, err := engine.Finish(ctx, d, fenced(t, d, []droverdriver.Result{{ID: jobs[0].ID, Attempt: 1, Outcome: droverdriver.OutcomeCompleted, Flow: jobs[0].Flow}})); err != nil {
		t.Fatal(err)
	}
	if ids := insert(t, d, dup); ids[0] == 0 {
		t.Fatal("key still held after the old unique job completed")
	}
}

// TestMigrationRebuildsStateChecks applies migration 007, which rebuilds
// both job tables, to a store holding a waiting, a running and a finished
// job: every row keeps every column, the running job is rescued (it holds
// no lease token, which migration 009 added, so no upgraded process can
// finish it), new IDs continue past the old ones and both tables still
// refuse a state that is not theirs. The rows are written in SQL, since
// the driver's statements are those of the latest schema.
func TestMigrationRebuildsStateChecks(t *testing.T) {
	ctx := context.Background()
	d := open(t, filepath.Join(t.TempDir(), "m.db"))
	if err := applyUpTo(ctx, d, 6); err != nil {
		t.Fatal(err)
	}
	now := micros(time.Now())
	for _, q := range []string{
		`INSERT INTO drover_jobs (id, queue, kind, args, max_attempts, created_at, run_at, state, attempt, attempted_at,
			lease_owner, lease_expires_at) VALUES (2, 'q', 'noop', '{}', 3, ?1, ?1, 'running', 1, ?1, 'w1', ?1 + 60000000)`,
		`INSERT INTO drover_jobs (id, queue, kind, args, max_attempts, created_at, run_at, tags, metadata, ordering_key,
			key_limit) VALUES (3, 'q', 'noop', '{}', 3, ?1, ?1, '["a"]', '{"m":1}', 'k', 1)`,
		`INSERT INTO drover_finished_jobs (id, state, queue, kind, priority, timeout_ms, tags, metadata, args, max_attempts, attempt, created_at, run_at,
			attempted_at, finalized_at) VALUES (1, 'completed', 'q', 'noop', 1, 0, '[]', '{}', '{}', 3, 1, ?1, ?1, ?1, ?1)`,
		`INSERT INTO sqlite_sequence (name, seq) VALUES ('drover_jobs', 3)`,
	} {
		if _, err := d.writer.ExecContext(ctx, q, now); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	ids := []int64{1, 2, 3}
	before := rawRows(t, d)

	// Up to 009: every column kept. 010 then gives the keyed job its
	// flow bit (FlowKeyed), checked below.
	if err := applyUpTo(ctx, d, 9); err != nil {
		t.Fatal(err)
	}
	after := rawRows(t, d)
	migrate(t, d)
	var flow int
	if err := d.writer.QueryRowContext(ctx, "SELECT flow FROM drover_jobs WHERE id = 3").Scan(&flow); err != nil || flow != droverdriver.FlowKeyed {
		t.Fatalf("keyed job's flow after migration 010: %d, %v; want %d", flow, err, droverdriver.FlowKeyed)
	}
	for table, rows := range before {
		for i, row := range rows {
			for col, v := range row {
				got, kept := after[table][i][col]
				if !kept {
					continue // dropped by a later migration (008: part)
				}
				if !reflect.DeepEqual(got, v) {
					t.Errorf("%s row %d column %s after the migration: %v, before %v", table, i, col, got, v)
				}
			}
		}
	}
	if n, err := engine.Rescue(ctx, d, droverdriver.RescueParams{Now: time.Now().Add(time.Hour), Limit: 10}); err != nil || n != 1 {
		t.Fatalf("rescuing the job that ran across the migration: %d, %v", n, err)
	}
	if j := get(t, d, ids[1]); j.State != droverdriver.StateAvailable || j.ErrorCount != 1 {
		t.Fatalf("job that ran across the migration: %+v", j)
	}
	if next := insert(t, d, job("q"))[0]; next <= ids[2] {
		t.Fatalf("new job got ID %d, not past %d", next, ids[2])
	}
	for _, bad := range []string{
		"UPDATE drover_jobs SET state = 'completed'",
		"UPDATE drover_finished_jobs SET state = 'running'",
	} {
		if _, err := d.writer.ExecContext(ctx, bad); err == nil || !strings.Contains(err.Error(), "CHECK") {
			t.Errorf("%s: %v, want a CHECK constraint error", bad, err)
		}
	}
}

// rawRows reads every row of both job tables by column name, in ID order.
func rawRows(t *testing.T, d *Driver) map[string][]map[string]any {
	t.Helper()
	out := map[string][]map[string]any{}
	for _, table := range []string{"drover_jobs", "drover_finished_jobs"} {
		rows, err := d.writer.QueryContext(context.Background(), "SELECT * FROM "+table+" ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			row := map[string]any{}
			for i, c := range cols {
				row[c] = vals[i]
			}
			out[table] = append(out[table], row)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return out
}

func TestSchemaMissing(t *testing.T) {
	ctx := context.Background()
	d := open(t, filepath.Join(t.TempDir(), "empty.db"), WithSchema("acme"))
	calls := map[string]func() error{
		"insert": func() error { _, err := d.JobInsertMany(ctx, []droverdriver.InsertParams{job("q")}); return err },
		"claim":  func() error { _, err := d.JobClaim(ctx, droverdriver.ClaimParams{Queue: "q", Max: 1}); return err },
		"get":    func() error { _, err := d.JobGet(ctx, 1); return err },
		"list":   func() error { _, err := d.JobList(ctx, droverdriver.ListParams{Limit: 1}); return err },
		"finish": func() error {
			_, err := engine.Finish(ctx, d, []droverdriver.Result{{ID: 1, Attempt: 1, Outcome: 1}})
			return err
		},
		"elect": func() error {
			_, err := d.LeaderElect(ctx, droverdriver.LeaderParams{Name: "x", ID: "y", TTL: time.Second})
			return err
		},
	}
	for name, call := range calls {
		err := call()
		if !errors.Is(err, droverdriver.ErrSchemaMissing) || !strings.Contains(err.Error(), `schema "acme" is not at the current version, run: drover migrate`) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestWithSchema(t *testing.T) {
	if _, err := Open(context.Background(), filepath.Join(t.TempDir(), "x.db"), WithSchema("Bad-Name")); err == nil {
		t.Fatal("invalid schema accepted")
	}
	path := filepath.Join(t.TempDir(), "shared.db")
	a, b := open(t, path, WithSchema("alpha")), open(t, path, WithSchema("beta"))
	migrate(t, a)
	migrate(t, b)
	insert(t, a, job("q"))
	if jobs := claim(t, b, "q", 10, time.Minute); len(jobs) != 0 {
		t.Fatalf("beta claimed alpha's jobs")
	}
	if jobs := claim(t, a, "q", 10, time.Minute); len(jobs) != 1 {
		t.Fatalf("alpha claimed %d", len(jobs))
	}
	if a.Schema() != "alpha" || a.Name() != "sqlite" {
		t.Fatalf("schema %q name %q", a.Schema(), a.Name())
	}
}

func TestMemory(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, "sqlite::memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	other, err := Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	migrate(t, d)
	id := insert(t, d, job("q"))[0]
	if j := get(t, d, id); j.State != droverdriver.StateAvailable {
		t.Fatalf("state %s", j.State)
	}
	// Every :memory: driver has a database of its own.
	if v, err := other.SchemaVersion(ctx); err != nil || v != 0 {
		t.Fatalf("second memory database is at version %d, %v", v, err)
	}
}

func TestNewAndCallerTransaction(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tx.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d, err := New(db)
	if err != nil {
		t.Fatal(err)
	}
	migrate(t, d)

	// Rolled back: nothing stays.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	rolled := insert(t, d.UnwrapExecutor(tx), job("q"))
	if j := get(t, d.UnwrapExecutor(tx), rolled[0]); j.State != droverdriver.StateAvailable {
		t.Fatalf("job not visible in its transaction: %s", j.State)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.JobGet(ctx, rolled[0]); !errors.Is(err, droverdriver.ErrNotFound) {
		t.Fatalf("rolled back job found: %v", err)
	}

	// Committed: the job is there, for this driver and for one Open made.
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "CREATE TABLE app_users (name TEXT)"); err != nil {
		t.Fatal(err)
	}
	committed := insert(t, d.UnwrapExecutor(tx), job("q"), job("q"))
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	// The rolled-back ID was seen once and names no other job later, as
	// with a PostgreSQL sequence.
	if committed[0] <= rolled[0] {
		t.Fatalf("IDs %v reuse the rolled-back %d", committed, rolled[0])
	}
	opened := open(t, path)
	if jobs := claim(t, opened, "q", 10, time.Minute); !slices.Equal(ids(jobs), committed) {
		t.Fatalf("claimed %v, want %v", ids(jobs), committed)
	}
	// Finishing in the caller's transaction, with a stale result that makes
	// the driver roll back to its savepoint, leaves the transaction usable.
	running := claim(t, opened, "q", 10, time.Minute)
	if len(running) != 0 {
		t.Fatalf("claimed %d jobs twice", len(running))
	}
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	acc, err := engine.Finish(ctx, d.UnwrapExecutor(tx), fenced(t, d, []droverdriver.Result{
		{ID: committed[0], Attempt: 1, Outcome: droverdriver.OutcomeCompleted},
		{ID: committed[1], Attempt: 2, Outcome: droverdriver.OutcomeCompleted},
	}))
	if err != nil || !slices.Equal(acc, committed[:1]) {
		t.Fatalf("finish in transaction: %v %v", acc, err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO app_users VALUES ('ann')"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if j := get(t, d, committed[0]); j.State != droverdriver.StateCompleted {
		t.Fatalf("state after commit %s", j.State)
	}

	// Close leaves the caller's database open.
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("caller's db closed: %v", err)
	}
}

// TestConcurrentClaimsAcrossDrivers runs two drivers on one file, each with
// its own writer connection as two processes would have, claiming from
// several goroutines: the write lock must hand every job out exactly once.
func TestConcurrentClaimsAcrossDrivers(t *testing.T) {
	ctx := context.Background()
	const total = 20000
	path := filepath.Join(t.TempDir(), "race.db")
	a := open(t, path)
	migrate(t, a)
	b := open(t, path)
	in := make([]droverdriver.InsertParams, total)
	for i := range in {
		in[i] = job("q")
	}
	insert(t, a, in...)

	var mu sync.Mutex
	seen := make(map[int64]int, total)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		d := []*Driver{a, b}[i%2]
		wg.Go(func() {
			for {
				jobs, err := d.JobClaim(ctx, droverdriver.ClaimParams{Queue: "q", Max: 37, Owner: fmt.Sprint("w", i), Lease: time.Minute})
				if err != nil {
					errs <- err
					return
				}
				if len(jobs) == 0 {
					return
				}
				res := make([]droverdriver.Result, len(jobs))
				for k, j := range jobs {
					res[k] = droverdriver.Result{ID: j.ID, Attempt: j.Attempt, LeaseToken: j.LeaseToken, Outcome: droverdriver.OutcomeCompleted}
				}
				if acc, err := engine.Finish(ctx, d, res); err != nil || len(acc) != len(res) {
					errs <- fmt.Errorf("finish: accepted %d of %d: %v", len(acc), len(res), err)
					return
				}
				mu.Lock()
				for _, j := range jobs {
					seen[j.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(seen) != total {
		t.Fatalf("claimed %d distinct jobs, want %d", len(seen), total)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("job %d claimed %d times", id, n)
		}
	}
	counts, err := b.JobCountByState(ctx, "q")
	if err != nil || counts[droverdriver.StateCompleted] != total || len(counts) != 1 {
		t.Fatalf("counts %v %v", counts, err)
	}
}

func TestParseTarget(t *testing.T) {
	abs, _ := filepath.Abs("rel.db")
	tests := []struct {
		in, path string
		memory   bool
	}{
		{"sqlite::memory:", "", true},
		{":memory:", "", true},
		{"sqlite:///tmp/x.db", "/tmp/x.db", false},
		{"sqlite://rel.db", abs, false},
		{"/tmp/x.db", "/tmp/x.db", false},
		{"file:/tmp/x.db?_pragma=foreign_keys(1)", "/tmp/x.db", false},
	}
	for _, tt := range tests {
		got, err := parseTarget(tt.in)
		if err != nil || got.memory != tt.memory || (!tt.memory && got.path != tt.path) {
			t.Errorf("%s: %+v %v", tt.in, got, err)
		}
	}
	if _, err := parseTarget("sqlite:"); err == nil {
		t.Error("empty target accepted")
	}

	// A caller's settings survive unless Drover owns them.
	got, err := parseTarget("file:/tmp/x.db?_pragma=foreign_keys(1)&_pragma=busy_timeout(5)&_journal_mode=DELETE&_txlock=deferred&cache=private")
	if err != nil {
		t.Fatal(err)
	}
	dsn, err := url.ParseQuery(strings.SplitN(got.dsn(false), "?", 2)[1])
	if err != nil {
		t.Fatal(err)
	}
	pragmas := dsn["_pragma"]
	if !slices.Contains(pragmas, "foreign_keys(1)") || slices.Contains(pragmas, "busy_timeout(5)") ||
		!slices.Contains(pragmas, "busy_timeout(10000)") || dsn.Get("_journal_mode") != "WAL" ||
		dsn.Get("_txlock") != "immediate" || dsn.Get("cache") != "private" {
		t.Errorf("writer DSN %v", dsn)
	}
	reader, _ := url.ParseQuery(strings.SplitN(got.dsn(true), "?", 2)[1])
	if !slices.Contains(reader["_pragma"], "query_only(1)") || reader.Get("_txlock") != "" {
		t.Errorf("reader DSN %v", reader)
	}
}

func TestFileSettings(t *testing.T) {
	d := setup(t)
	for pragma, want := range map[string]string{
		"journal_mode": "wal", "page_size": "16384", "synchronous": "1", "busy_timeout": "10000",
	} {
		var got string
		if err := d.writer.QueryRow("PRAGMA " + pragma).Scan(&got); err != nil || got != want {
			t.Errorf("writer %s = %q, %v; want %s", pragma, got, err, want)
		}
	}
	var ro string
	if err := d.reader.QueryRow("PRAGMA query_only").Scan(&ro); err != nil || ro != "1" {
		t.Errorf("reader query_only = %q, %v", ro, err)
	}
	if _, err := d.reader.Exec("DELETE FROM drover_jobs"); err == nil {
		t.Error("reader connection wrote")
	}
}

func TestListener(t *testing.T) {
	d := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	connects := 0
	done := make(chan error)
	go func() {
		done <- d.NewListener().Listen(ctx, func() { connects++ }, func(string) int { return 1 })
	}()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || connects != 1 {
			t.Fatalf("Listen returned %v after %d connects", err, connects)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Listen did not return when its context ended")
	}
	if d.PollInterval() <= 0 || d.PollInterval() > time.Second {
		t.Errorf("poll interval %v", d.PollInterval())
	}
}
