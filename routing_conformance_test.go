package drover_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/testkit/waitfor"
	"github.com/droverhq/drover/internal/testsignal"
)

// Routing: Go clients and remote workers say what they are, jobs say where
// they may run (docs/routing.md). The driver suite covers the statements
// (droverdrivertest/routing.go); these tests cover the clients around
// them, on both stores.

// ranBy records which client ran each job.
type ranBy struct {
	mu  sync.Mutex
	who map[int64]string
	// ran is signalled by each run, once recorded.
	ran testsignal.Signal[int64]
}

func newRanBy() *ranBy {
	r := &ranBy{who: map[int64]string{}}
	r.ran.Init()
	return r
}

// waitFor waits until cond holds of the runs, checking after each.
func (r *ranBy) waitFor(t *testing.T, what string, cond func(map[int64]string) bool) {
	t.Helper()
	testsignal.Until(t, what, func() bool { return cond(r.get()) }, &r.ran)
}

func (r *ranBy) get() map[int64]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[int64]string, len(r.who))
	for k, v := range r.who {
		out[k] = v
	}
	return out
}

// routedClient starts a client on d named name, with worker w, working
// queue "default" with noop jobs it records in ran.
func routedClient(t *testing.T, s store, b *bundle, name string, w drover.WorkerConfig, ran *ranBy, mutate ...func(*drover.Config)) client {
	t.Helper()
	workers := drover.NewWorkers()
	drover.AddWorker(workers, drover.WorkFunc(func(ctx context.Context, j *drover.Job[noopArgs]) error {
		ran.mu.Lock()
		ran.who[j.ID] = name
		ran.mu.Unlock()
		ran.ran.Send(j.ID)
		return nil
	}))
	cfg := fastConfig(newRecorder(), 4)
	cfg.ID, cfg.Workers, cfg.Worker = name, workers, w
	for _, m := range mutate {
		m(cfg)
	}
	c := s.newClient(t, b.d, cfg)
	startClient(t, c)
	return c
}

func TestRoutedJobsRunOnMatchingClients(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 1)
		ran := newRanBy()
		routedClient(t, s, b, "gpu-1", drover.WorkerConfig{Type: "gpu"}, ran)
		routedClient(t, s, b, "cpu-eu", drover.WorkerConfig{Type: "cpu", Labels: map[string]string{"region": "eu"}}, ran)
		routedClient(t, s, b, "plain", drover.WorkerConfig{}, ran)
		want := map[int64][]string{} // the clients that may run each job
		for i := range 10 {
			for _, tc := range []struct {
				opts *drover.InsertOpts
				may  []string
			}{
				{&drover.InsertOpts{WorkerType: "gpu"}, []string{"gpu-1"}},
				{&drover.InsertOpts{WorkerType: "cpu", WorkerLabels: map[string]string{"region": "eu"}}, []string{"cpu-eu"}},
				{&drover.InsertOpts{WorkerNames: []string{"cpu-eu"}}, []string{"cpu-eu"}},
				{&drover.InsertOpts{WorkerNames: []string{"gpu-1", "plain"}}, []string{"gpu-1"}},
				{&drover.InsertOpts{WorkerLabels: map[string]string{"region": "eu"}}, []string{"cpu-eu"}},
				{nil, []string{"gpu-1", "cpu-eu", "plain"}},
			} {
				want[b.insert(t, noopArgs{N: i}, tc.opts)] = tc.may
			}
		}
		ran.waitFor(t, "every job to run", func(r map[int64]string) bool { return len(r) == len(want) })
		for id, who := range ran.get() {
			if !slices.Contains(want[id], who) {
				t.Errorf("job %d ran on %s, want one of %v", id, who, want[id])
			}
		}
	})
}

func TestSetWorkerLabels(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 1)
		ran := newRanBy()
		c := routedClient(t, s, b, "w", drover.WorkerConfig{Labels: map[string]string{"zone": "x"}}, ran)
		ctx := context.Background()
		id := b.insert(t, noopArgs{}, &drover.InsertOpts{WorkerLabels: map[string]string{"zone": "y"}})
		// The running client cannot take it, and says so.
		waitfor.Cond(t, "the job to show as unroutable", func() bool {
			j, err := c.JobGet(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			return j.Unroutable
		})
		if err := c.SetWorkerLabels(ctx, map[string]string{"zone": "y"}); err != nil {
			t.Fatal(err)
		}
		waitState(t, c, id, drovertype.JobStateCompleted)
		ws, err := c.Workers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ws) != 1 || ws[0].Name != "w" || ws[0].Labels["zone"] != "y" || !ws[0].Live || ws[0].Source != "go" ||
			!slices.Equal(ws[0].Queues, []string{drover.DefaultQueue}) {
			t.Fatalf("registry %+v, want w with its new labels", ws)
		}
		if err := c.SetWorkerLabels(ctx, map[string]string{"bad key": "v"}); err == nil || !strings.Contains(err.Error(), "bad key") {
			t.Fatalf("bad label: %v", err)
		}
	})
}

func TestRemoteClaimRouting(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := remoteSetup(t, s)
		ctx := context.Background()
		gpu := b.insert(t, remoteRaw, &drover.InsertOpts{Queue: "r", WorkerType: "gpu"})
		named := b.insert(t, remoteRaw, &drover.InsertOpts{Queue: "r", WorkerNames: []string{"py-gpu"}})
		plain := b.insert(t, remoteRaw, &drover.InsertOpts{Queue: "r"})
		claim := func(p drover.ClaimParams) []int64 {
			t.Helper()
			p.Queue, p.Max, p.Lease = "r", 10, time.Minute
			jobs, err := b.remote.Claim(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for _, j := range jobs {
				ids = append(ids, j.ID)
			}
			slices.Sort(ids)
			return ids
		}
		// A remote worker that says nothing takes plain jobs only; its ID
		// is not a name jobs aim at until it says so.
		if got := claim(drover.ClaimParams{Owner: "py-gpu"}); !slices.Equal(got, []int64{plain}) {
			t.Fatalf("plain remote worker claimed %v, want [%d]", got, plain)
		}
		if got := claim(drover.ClaimParams{Owner: "py-gpu", WorkerType: "gpu"}); !slices.Equal(got, []int64{gpu, named}) {
			t.Fatalf("gpu remote worker named by its ID claimed %v, want [%d %d]", got, gpu, named)
		}
		if _, err := b.remote.Claim(ctx, drover.ClaimParams{Queue: "r", Max: 1, Owner: "x", Lease: time.Minute, WorkerType: "bad type"}); err == nil {
			t.Fatal("a bad worker type was accepted")
		}
		ws, err := b.client.Workers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ws) != 1 || ws[0].Name != "py-gpu" || ws[0].Type != "gpu" || ws[0].Source != "http" || ws[0].JobsHeld != 3 ||
			!slices.Equal(ws[0].Queues, []string{"r"}) || !ws[0].Live {
			t.Fatalf("registry %+v", ws)
		}
	})
}

func TestUnroutableJobs(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 1)
		ctx := context.Background()
		id := b.insert(t, noopArgs{}, &drover.InsertOpts{Queue: "render", WorkerType: "gpu"})
		b.insert(t, noopArgs{}, &drover.InsertOpts{Queue: "render", WorkerType: "gpu"})
		b.insert(t, noopArgs{}, &drover.InsertOpts{Queue: "render"})
		un, err := b.client.Unroutable(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(un) != 1 || un[0].Queue != "render" || un[0].Routing.Type != "gpu" || un[0].Jobs != 2 || un[0].FirstID != id {
			t.Fatalf("unroutable %+v, want the two gpu jobs of render", un)
		}
		if j, err := b.client.JobGet(ctx, id); err != nil || !j.Unroutable || j.Routing == nil || j.Routing.Type != "gpu" {
			t.Fatalf("job detail: %+v, %v", j, err)
		}
		// A gpu worker of another queue changes nothing; one of render's
		// does, even with the queue paused.
		ran := newRanBy()
		routedClient(t, s, b, "gpu-other", drover.WorkerConfig{Type: "gpu"}, ran)
		if un, err = b.client.Unroutable(ctx); err != nil || len(un) != 1 {
			t.Fatalf("with a gpu worker of another queue: %+v, %v", un, err)
		}
		if err := b.client.QueuePause(ctx, "render"); err != nil {
			t.Fatal(err)
		}
		c := routedClient(t, s, b, "gpu-render", drover.WorkerConfig{Type: "gpu"}, ran, func(cfg *drover.Config) {
			cfg.Queues = map[string]drover.QueueConfig{"render": {MaxWorkers: 1}}
		})
		if un, err = b.client.Unroutable(ctx); err != nil || len(un) != 0 {
			t.Fatalf("with a gpu worker of render: %+v, %v", un, err)
		}
		if j, err := b.client.JobGet(ctx, id); err != nil || j.Unroutable {
			t.Fatalf("job detail with a worker: %+v, %v", j, err)
		}
		// A worker that stops leaves the registry at once.
		if err := c.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if un, err = b.client.Unroutable(ctx); err != nil || len(un) != 1 {
			t.Fatalf("after the worker stopped: %+v, %v", un, err)
		}
	})
}

func TestNamedWorkerAbsentPolicies(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 1)
		ctx := context.Background()
		aimed := func(policy drovertype.AbsentPolicy) int64 {
			return b.insert(t, noopArgs{}, &drover.InsertOpts{WorkerType: "gpu", WorkerNames: []string{"gpu-7"},
				OnWorkerAbsent: policy, WorkerAbsentAfter: 50 * time.Millisecond})
		}
		fallback, fail, wait := aimed(drovertype.AbsentFallback), aimed(drovertype.AbsentFail), aimed(drovertype.AbsentWait)
		// gpu-7 never comes; another gpu worker runs, and the leader (its
		// own client) applies the policies.
		ran := newRanBy()
		c := routedClient(t, s, b, "gpu-2", drover.WorkerConfig{Type: "gpu"}, ran)
		j := waitState(t, c, fallback, drovertype.JobStateCompleted)
		if ran.get()[fallback] != "gpu-2" || j.Routing == nil || !slices.Equal(j.Routing.FellBackFrom, []string{"gpu-7"}) {
			t.Fatalf("fallback job ran on %q with routing %+v", ran.get()[fallback], j.Routing)
		}
		j = waitState(t, c, fail, drovertype.JobStateDiscarded)
		if len(j.Errors) != 1 || !strings.Contains(j.Errors[0].Error, "gpu-7") {
			t.Fatalf("failed job's errors: %+v", j.Errors)
		}
		if j, err := c.JobGet(ctx, wait); err != nil || j.State != drovertype.JobStateAvailable || !j.Unroutable {
			t.Fatalf("waiting job: %+v, %v; want it waiting, unroutable", j, err)
		}
		if _, ok := ran.get()[wait]; ok {
			t.Fatal("the job that waits for gpu-7 ran elsewhere")
		}
	})
}

func TestStrictOrderAcrossClients(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 1)
		ctx := context.Background()
		if st, err := b.client.QueueSetStrictOrder(ctx, "fifo", 2); err != nil || st.Strict != 2 {
			t.Fatalf("set strict order: %+v, %v", st, err)
		}
		var ids []int64
		for i := range 60 {
			ids = append(ids, b.insert(t, noopArgs{N: i}, &drover.InsertOpts{Queue: "fifo", Priority: i % 3}))
		}
		ran := newRanBy()
		for i := range 3 {
			routedClient(t, s, b, fmt.Sprint("c", i), drover.WorkerConfig{}, ran, func(cfg *drover.Config) {
				cfg.Queues = map[string]drover.QueueConfig{"fifo": {MaxWorkers: 4}}
			})
		}
		ran.waitFor(t, "every job to run", func(r map[int64]string) bool { return len(r) == len(ids) })
		jobs := make([]*drovertype.JobRow, len(ids))
		for i, id := range ids {
			jobs[i] = waitState(t, b.client, id, drovertype.JobStateCompleted)
		}
		slices.SortFunc(jobs, func(a, b *drovertype.JobRow) int {
			if a.Priority != b.Priority {
				return a.Priority - b.Priority
			}
			if c := a.RunAt.Compare(b.RunAt); c != 0 {
				return c
			}
			return int(a.ID - b.ID)
		})
		for i := 1; i < len(jobs); i++ {
			if jobs[i].AttemptedAt.Before(*jobs[i-1].AttemptedAt) {
				t.Fatalf("job %d started before job %d, which is ahead of it", jobs[i].ID, jobs[i-1].ID)
			}
		}
		for _, j := range jobs {
			running := 0
			for _, o := range jobs {
				if o != j && o.AttemptedAt.Before(*j.AttemptedAt) && o.FinalizedAt.After(*j.AttemptedAt) {
					running++
				}
			}
			if running >= 2 {
				t.Fatalf("job %d started with %d others running", j.ID, running)
			}
		}
	})
}

func TestRoutingInsertValidation(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 1)
		ctx := context.Background()
		for _, tc := range []struct {
			opts drover.InsertOpts
			want string
		}{
			{drover.InsertOpts{WorkerType: "bad type"}, "worker type"},
			{drover.InsertOpts{WorkerNames: []string{""}}, "worker name"},
			{drover.InsertOpts{WorkerLabels: map[string]string{"-k": "v"}}, "label"},
			{drover.InsertOpts{WorkerLabels: map[string]string{"k": strings.Repeat("v", 256)}}, "label k"},
			{drover.InsertOpts{WorkerNames: []string{"a"}, OnWorkerAbsent: drovertype.AbsentFallback}, "worker type"},
			{drover.InsertOpts{WorkerType: "gpu", OnWorkerAbsent: drovertype.AbsentFail}, "WorkerNames"},
			{drover.InsertOpts{WorkerType: "gpu", WorkerAbsentAfter: time.Second}, "WorkerNames"},
			{drover.InsertOpts{WorkerAbsentAfter: time.Second}, "WorkerNames"},
			{drover.InsertOpts{WorkerNames: []string{"a"}, OnWorkerAbsent: "later"}, "later"},
			{drover.InsertOpts{WorkerNames: []string{"a"}, OnWorkerAbsent: drovertype.AbsentFail, WorkerAbsentAfter: -time.Second}, "negative"},
		} {
			_, err := b.client.Insert(ctx, noopArgs{}, &tc.opts)
			if !errors.Is(err, drover.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("insert with %+v: %v; want an invalid-input error naming %q", tc.opts, err, tc.want)
			}
		}
		if n := countState(t, b.client, "", drovertype.JobStateAvailable); n != 0 {
			t.Fatalf("%d jobs stored by refused inserts", n)
		}
	})
}

// TestQueueHeadOf checks what an operator reads of a strict queue that
// stands still: the failed job waiting for its retry at the head, with its
// error and when it runs again, and nothing of the queue running.
func TestQueueHeadOf(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		b := setup(t, s, 2, func(cfg *drover.Config) {
			cfg.RetryPolicy = func(int) time.Duration { return time.Hour }
			cfg.Queues = map[string]drover.QueueConfig{"fifo": {MaxWorkers: 2, StrictOrder: 1}}
		})
		if h, err := b.client.QueueHeadOf(ctx, "fifo"); err != nil || h.Job != nil || h.Returned || h.Running != 0 {
			t.Fatalf("an empty queue: %+v, %v", h, err)
		}
		stuck := b.insert(t, scriptArgs{Fail: -1}, &drover.InsertOpts{Queue: "fifo"})
		behind := b.insert(t, noopArgs{}, &drover.InsertOpts{Queue: "fifo"})
		h, err := b.client.QueueHeadOf(ctx, "fifo")
		if err != nil || h.Job == nil || h.Job.ID != stuck || h.Returned {
			t.Fatalf("before any run: %+v, %v; want job %d first in claim order", h, err, stuck)
		}
		b.start(t)
		s.untilWorked(t, "the failed job to wait for its retry", func() bool {
			j, err := b.client.JobGet(ctx, stuck)
			return err == nil && j.State == drovertype.JobStateRetryable
		})
		h, err = b.client.QueueHeadOf(ctx, "fifo")
		if err != nil || h.Job == nil || h.Job.ID != stuck || !h.Returned || h.Running != 0 {
			t.Fatalf("after the failure: %+v, %v; want job %d returned at the head, none running", h, err, stuck)
		}
		if until := time.Until(h.Job.RunAt); until < 50*time.Minute || len(h.Job.Errors) != 1 {
			t.Fatalf("the head runs again in %s with errors %+v; want about an hour and its error", until, h.Job.Errors)
		}
		if j, err := b.client.JobGet(ctx, behind); err != nil || j.State != drovertype.JobStateAvailable {
			t.Fatalf("the job behind the head: %+v, %v; want it waiting", j, err)
		}
		if _, err := b.client.QueueHeadOf(ctx, "no such queue!"); !errors.Is(err, drover.ErrInvalid) {
			t.Fatalf("a bad queue name: %v, want ErrInvalid", err)
		}
	})
}

// TestUnroutableKinds: a job of a kind no live worker of its queue runs
// waits and is reported, whoever the workers are (issue 38: a Go worker
// left it waiting unreported, an SDK worker claimed and failed it). Go
// clients claim and register their kinds; a remote worker that names its
// kinds claims only those and registers them; one that names none claims
// every kind, so that nothing in its queue is reported for its kind.
func TestUnroutableKinds(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 1, anyKind)
		ctx := context.Background()
		ran := newRanBy()
		routedClient(t, s, b, "go-gpu", drover.WorkerConfig{Type: "gpu"}, ran, func(cfg *drover.Config) {
			cfg.Queues = map[string]drover.QueueConfig{"mixed": {MaxWorkers: 4}, "legacy": {MaxWorkers: 4}}
		})
		orphan := drover.RawArgs{KindName: "orphan", JSON: []byte(`{}`)}
		noop := b.insert(t, noopArgs{}, &drover.InsertOpts{Queue: "mixed"})
		gpuNoop := b.insert(t, noopArgs{}, &drover.InsertOpts{Queue: "mixed", WorkerType: "gpu"})
		first := b.insert(t, orphan, &drover.InsertOpts{Queue: "mixed"})
		b.insert(t, orphan, &drover.InsertOpts{Queue: "mixed"})
		gpuOrphan := b.insert(t, orphan, &drover.InsertOpts{Queue: "mixed", WorkerType: "gpu"})
		ran.waitFor(t, "the Go worker runs the noop jobs", func(r map[int64]string) bool {
			return r[noop] != "" && r[gpuNoop] != ""
		})
		type group struct {
			queue, kind string
			routed      bool
			jobs, first int64
		}
		report := func() []group {
			t.Helper()
			un, err := b.client.Unroutable(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var out []group
			for _, g := range un {
				out = append(out, group{g.Queue, g.Kind, g.Routing != nil, g.Jobs, g.FirstID})
			}
			return out
		}
		want := []group{{"mixed", "orphan", true, 1, gpuOrphan}, {"mixed", "orphan", false, 2, first}}
		if got := report(); !slices.Equal(got, want) {
			t.Fatalf("unroutable %+v, want %+v", got, want)
		}
		for _, id := range []int64{first, gpuOrphan} {
			j, err := b.client.JobGet(ctx, id)
			if err != nil || j.State != drovertype.JobStateAvailable || j.Attempt != 0 || j.Unroutable != (id == gpuOrphan) {
				t.Fatalf("job %d: %+v, %v; want it waiting, never attempted, unroutable if routed", id, j, err)
			}
		}

		claim := func(queue, owner string, max int, kinds []string) []int64 {
			t.Helper()
			jobs, err := b.remote.Claim(ctx, drover.ClaimParams{Queue: queue, Max: max, Owner: owner, Lease: time.Minute, Kinds: kinds})
			if err != nil {
				t.Fatal(err)
			}
			return idsOf(jobs)
		}
		// A remote worker of other kinds claims none of them and changes
		// nothing; one that runs orphan claims one, and the other is no
		// longer unroutable (the routed one still is: it is plain).
		if got := claim("mixed", "py-email", 10, []string{"email"}); len(got) != 0 {
			t.Fatalf("a worker of kind email claimed %v", got)
		}
		if got := report(); !slices.Equal(got, want) {
			t.Fatalf("with a worker of kind email: unroutable %+v, want %+v", got, want)
		}
		if got := claim("mixed", "py-orphan", 1, []string{"orphan", "orphan"}); !slices.Equal(got, []int64{first}) {
			t.Fatalf("a worker of kind orphan claimed %v, want [%d]", got, first)
		}
		if got := report(); !slices.Equal(got, want[:1]) {
			t.Fatalf("with a worker of kind orphan: unroutable %+v, want %+v", got, want[:1])
		}
		ws, err := b.client.Workers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[string][]string{}
		for _, w := range ws {
			kinds[w.Name] = w.Kinds
		}
		if !slices.Equal(kinds["go-gpu"], []string{"test.noop"}) || !slices.Equal(kinds["py-email"], []string{"email"}) ||
			!slices.Equal(kinds["py-orphan"], []string{"orphan"}) {
			t.Fatalf("registered kinds %v", kinds)
		}

		// A worker that names no kinds claims every kind: its queue has
		// no kind no worker runs.
		b.insert(t, orphan, &drover.InsertOpts{Queue: "legacy"})
		b.insert(t, orphan, &drover.InsertOpts{Queue: "legacy"})
		if got := report(); len(got) != 2 || got[1].queue != "legacy" {
			t.Fatalf("legacy before its remote worker: %+v", got)
		}
		if got := claim("legacy", "py-any", 1, nil); len(got) != 1 {
			t.Fatalf("a worker of every kind claimed %v", got)
		}
		if got := report(); !slices.Equal(got, want[:1]) {
			t.Fatalf("with a worker of every kind in legacy: unroutable %+v, want %+v", got, want[:1])
		}
		if kinds, err := b.client.Workers(ctx); err != nil || !slices.ContainsFunc(kinds, func(w *drovertype.WorkerInfo) bool {
			return w.Name == "py-any" && w.Kinds == nil
		}) {
			t.Fatalf("py-any registered %+v, %v; want no kinds", kinds, err)
		}
		if _, err := b.remote.Claim(ctx, drover.ClaimParams{Queue: "mixed", Max: 1, Owner: "x", Lease: time.Minute, Kinds: []string{}}); !errors.Is(err, drover.ErrInvalid) {
			t.Fatalf("a claim naming an empty list of kinds: %v, want ErrInvalid", err)
		}
		if _, err := b.remote.Claim(ctx, drover.ClaimParams{Queue: "mixed", Max: 1, Owner: "x", Lease: time.Minute, Kinds: []string{"no spaces"}}); !errors.Is(err, drover.ErrInvalid) {
			t.Fatalf("a claim naming a bad kind: %v, want ErrInvalid", err)
		}
	})
}

// TestConcurrentOneJobRemoteClaims: typed remote workers that ask for one
// job at a time, all at once, through one client (whose claims of a group
// combine into one statement where the store can), each get only jobs they
// match, stored under their own owner and finished with their own token;
// no job goes to two and none is lost, also while some claimers give up
// before their claims are answered; and a strict queue's jobs start in
// order. (internal/engine's TestCombinerSharesOutOneClaim covers the job
// claimed for a claimer that leaves while its statement runs.)
func TestConcurrentOneJobRemoteClaims(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := remoteSetup(t, s)
		ctx := context.Background()
		if _, err := b.client.QueueSetStrictOrder(ctx, "fifo", 12); err != nil {
			t.Fatal(err)
		}
		type want struct {
			typ  string
			name string
		}
		jobs := map[int64]want{}
		for i := range 96 {
			var w want
			switch i % 4 {
			case 0, 1:
				w.typ = "gpu"
			case 2:
				w.typ = "cpu"
			}
			if i%16 == 5 {
				w = want{name: "g1"}
			}
			opts := &drover.InsertOpts{Queue: "r", WorkerType: w.typ}
			if w.name != "" {
				opts.WorkerNames = []string{w.name}
			}
			jobs[b.insert(t, remoteRaw, opts)] = w
			if i < 48 {
				jobs[b.insert(t, remoteRaw, &drover.InsertOpts{Queue: "fifo", WorkerType: w.typ})] = want{typ: w.typ}
			}
		}
		var mu sync.Mutex
		got := map[int64]string{}
		errs := make(chan error, 64)
		var wg sync.WaitGroup
		for i := range 12 {
			name, typ := fmt.Sprint("g", i), "gpu"
			if i >= 8 {
				name, typ = fmt.Sprint("c", i), "cpu"
			}
			for _, queue := range []string{"r", "fifo"} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for empty := 0; empty < 20; {
						cctx, cancel := context.WithCancel(ctx)
						if i%3 == 2 {
							// This claimer gives up at once every time: it
							// must neither get nor hold up a job.
							cancel()
						}
						claimed, err := b.remote.Claim(cctx, drover.ClaimParams{Queue: queue, Max: 1, Owner: name, Lease: time.Minute, WorkerType: typ})
						cancel()
						if err != nil {
							if errors.Is(err, context.Canceled) {
								empty++
								continue
							}
							errs <- err
							return
						}
						if len(claimed) == 0 {
							empty++
							continue
						}
						j := claimed[0]
						w := jobs[j.ID]
						mu.Lock()
						prev, dup := got[j.ID]
						got[j.ID] = name
						mu.Unlock()
						stored, err := b.client.JobGet(ctx, j.ID)
						switch {
						case dup:
							err = fmt.Errorf("job %d handed to %s and %s", j.ID, prev, name)
						case w.typ != "" && w.typ != typ || w.name != "" && w.name != name:
							err = fmt.Errorf("job %d (%+v) went to %s of type %s", j.ID, w, name, typ)
						case err == nil && (stored.LeaseOwner != name || j.LeaseOwner != name):
							err = fmt.Errorf("job %d claimed by %s is stored under %q, returned under %q", j.ID, name, stored.LeaseOwner, j.LeaseOwner)
						}
						if err != nil {
							errs <- err
							return
						}
						rep, err := b.remote.Finish(ctx, []drover.AttemptResult{{ID: j.ID, Attempt: j.Attempt, LeaseToken: j.LeaseToken, Outcome: drover.AttemptCompleted}})
						if err == nil && len(rep.Accepted) != 1 {
							err = fmt.Errorf("job %d: %s's result with its token rejected", j.ID, name)
						}
						if err != nil {
							errs <- err
							return
						}
						empty = 0
					}
				}()
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if t.Failed() {
			return
		}
		for id := range jobs {
			waitState(t, b.client, id, drovertype.JobStateCompleted)
		}
		var fifo []*drovertype.JobRow
		for id := range jobs {
			if j, err := b.client.JobGet(ctx, id); err != nil {
				t.Fatal(err)
			} else if j.Queue == "fifo" {
				fifo = append(fifo, j)
			}
		}
		slices.SortFunc(fifo, func(a, b *drovertype.JobRow) int { return int(a.ID - b.ID) })
		for i := 1; i < len(fifo); i++ {
			if fifo[i].AttemptedAt.Before(*fifo[i-1].AttemptedAt) {
				t.Fatalf("strict queue: job %d started before job %d, which is ahead of it", fifo[i].ID, fifo[i-1].ID)
			}
		}
	})
}
