package drover_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverfleet"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/clientapi"
	"github.com/droverhq/drover/internal/engine"
	"github.com/droverhq/drover/internal/testkit/testdb"
	"github.com/droverhq/drover/internal/testkit/waitfor"
	"github.com/droverhq/drover/internal/testsignal"
)

// client is what the conformance suite needs of a drover.Client, whatever
// its transaction type.
type client interface {
	// What drover serve and the CLI call of it.
	clientapi.Client

	ID() string

	Insert(ctx context.Context, args drover.Args, opts *drover.InsertOpts) (*drovertype.JobRow, error)
	InsertChain(ctx context.Context, jobs []drover.InsertManyParams) ([]int64, error)

	BatchResults(ctx context.Context, batchID int64, fn func(drovertype.JobResult) error) error
	LeaseOwners(ctx context.Context) ([]drovertype.LeaseOwner, error)

	// Routing (routing.go).
	SetWorkerLabels(ctx context.Context, labels map[string]string) error
}

// store is one driver under test. Everything store-specific lives in these
// constructors; the tests below are the same for every store.
type store struct {
	name string
	// open returns a migrated driver on a store of its own.
	open func(t *testing.T) droverdriver.Driver
	// newClient makes a client on d.
	newClient func(t *testing.T, d droverdriver.Driver, cfg *drover.Config) client
	// insertTx inserts args in a transaction of the store's own type and
	// commits or rolls back.
	insertTx func(t *testing.T, d droverdriver.Driver, c client, args drover.Args, commit bool) int64
	// made are the clients newClient made for one test (withSignals).
	made *madeClients
}

var stores = []store{pgStore, sqliteStore, fleetStore}

var pgStore = store{
	name: "postgres",
	open: func(t *testing.T) droverdriver.Driver {
		d, err := droverpg.New(testdb.NewPool(t), droverpg.WithSchema(testdb.NewSchema(t)))
		if err != nil {
			t.Fatal(err)
		}
		migrate(t, d)
		return d
	},
	newClient: func(t *testing.T, d droverdriver.Driver, cfg *drover.Config) client {
		c, err := drover.NewClient(d.(*droverpg.Driver), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return c
	},
	insertTx: func(t *testing.T, d droverdriver.Driver, c client, args drover.Args, commit bool) int64 {
		ctx := context.Background()
		tx, err := pgPool(d).Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		row, err := c.(*drover.Client[pgx.Tx]).InsertTx(ctx, tx, args, nil)
		if err != nil {
			t.Fatal(err)
		}
		if commit {
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
		}
		return row.ID
	},
}

// fleetStore is a fleet of two PostgreSQL shards, each with its own pool
// as a fleet's databases have (schemas of one database, so that a
// caller's transaction on either pool reaches both): every test runs
// through droverfleet's placement, routing and merging. The tests
// that cannot hold across shards skip it, saying why (acrossShards).
var fleetStore = store{
	name: "fleet",
	open: func(t *testing.T) droverdriver.Driver {
		test, _, _ := strings.Cut(t.Name(), "/")
		if why, ok := acrossShards[test]; ok {
			t.Skipf("does not hold across shards: %s", why)
		}
		var shards []droverdriver.TxDriver[pgx.Tx]
		for range 2 {
			d, err := droverpg.New(testdb.NewPool(t), droverpg.WithSchema(testdb.NewSchema(t)))
			if err != nil {
				t.Fatal(err)
			}
			shards = append(shards, d)
		}
		f, err := droverfleet.New(context.Background(), shards, droverfleet.Options{})
		if err != nil {
			t.Fatal(err)
		}
		migrate(t, f)
		return f
	},
	newClient: func(t *testing.T, d droverdriver.Driver, cfg *drover.Config) client {
		c, err := drover.NewClient(d.(*droverfleet.Driver[pgx.Tx]), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return c
	},
	insertTx: pgStore.insertTx,
}

// acrossShards are the tests that cannot hold on a fleet, with why; each
// is what docs/scaling.md lists under "What does not hold across shards".
var acrossShards = map[string]string{
	// A workflow lives on one shard, keyed jobs with their key.
	"TestWorkflowDependsOnStoredJobs":        "one workflow depends on stored jobs that live on two shards, which is refused",
	"TestKeyedWorkflowStepHoldsItsPlace":     "a keyed step's key and its stored parent live on different shards, which is refused",
	"TestKeyedWorkflowStepCancelledFreesKey": "a keyed step's key and its stored parent live on different shards, which is refused",
	"TestKeyedWorkflowsUnderConcurrency":     "one workflow has keyed jobs of keys that live on different shards, which is refused",
	// IDs name shards, so lists in ID order are not in insert order.
	"TestJobListFiltersAndPages": "expects pages in insert order; across shards ID order is not insert order",
	"TestJobSearch":              "expects results in insert order; across shards ID order is not insert order",
	"TestUnroutableJobs":         "expects the lowest ID of a group of jobs on two shards to be the first inserted",
	// Claim order holds within a shard; a claim takes from every shard.
	"TestPriorityOrder":               "expects one claim order over jobs that live on two shards",
	"TestRemoteClaimRouting":          "expects one claim order over jobs that live on two shards",
	"TestUniqueStatesAfterTheJobEnds": "claims one job of a queue whose jobs live on two shards and expects the oldest",
	"TestJobSearchLargeStore":         "claims one job of a queue whose two jobs live on two shards and expects the oldest",
	"TestUnroutableKinds":             "claims one job of a queue whose jobs live on two shards and expects the oldest",
	// A queue is pinned to its shard once its limits are stored.
	"TestQueueHeadOf": "inserts into a strict queue before its client starts and stores its settings, " +
		"so its jobs are placed on two shards before the queue is pinned to one",
	// Percentiles of several shards cannot be merged from theirs.
	"TestFinishedStats": "expects the pickup percentiles of jobs that ran on two shards to be exact",
}

// pgPool returns the pool of a PostgreSQL store: the driver's, or the one
// a fleet's shards share.
func pgPool(d droverdriver.Driver) *pgxpool.Pool {
	if f, ok := d.(*droverfleet.Driver[pgx.Tx]); ok {
		d = f.Shard(0)
	}
	return d.(*droverpg.Driver).Pool()
}

var sqliteStore = store{
	name: "sqlite",
	open: func(t *testing.T) droverdriver.Driver {
		d, err := droversqlite.Open(context.Background(), filepath.Join(t.TempDir(), "drover.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		migrate(t, d)
		return d
	},
	newClient: func(t *testing.T, d droverdriver.Driver, cfg *drover.Config) client {
		c, err := drover.NewClient(d.(*droversqlite.Driver), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return c
	},
	insertTx: func(t *testing.T, d droverdriver.Driver, c client, args drover.Args, commit bool) int64 {
		ctx := context.Background()
		tx, err := d.(*droversqlite.Driver).DB().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		row, err := c.(*drover.Client[*sql.Tx]).InsertTx(ctx, tx, args, nil)
		if err != nil {
			t.Fatal(err)
		}
		if commit {
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
		}
		return row.ID
	},
}

func migrate(t *testing.T, d droverdriver.Driver) {
	t.Helper()
	if _, err := drover.Migrate(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

// forEachStore runs fn as a parallel subtest per store, whose clients
// have their test signals on.
func forEachStore(t *testing.T, fn func(t *testing.T, s store)) {
	t.Helper()
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			fn(t, s.withSignals())
		})
	}
}

// withSignals returns s for one test, making clients whose test signals
// are on (drover.InitTestSignals) and remembering them, so that the test
// waits on their services' work rather than on a timer (untilWorked).
func (s store) withSignals() store {
	newClient := s.newClient
	made := &madeClients{}
	s.made = made
	s.newClient = func(t *testing.T, d droverdriver.Driver, cfg *drover.Config) client {
		c := newClient(t, d, cfg)
		drover.InitTestSignals(c)
		made.mu.Lock()
		made.clients = append(made.clients, c)
		made.mu.Unlock()
		madeWith.Store(c, made)
		t.Cleanup(func() { madeWith.Delete(c) })
		return c
	}
	return s
}

// madeClients are the clients a store made for one test.
type madeClients struct {
	mu      sync.Mutex
	clients []client
}

// madeWith maps each client withSignals made to the clients of its test,
// so that a wait given one of them (waitState) takes every one's work.
var madeWith sync.Map

// sources are the units of work (worked) of every client made so far.
func (m *madeClients) sources() []testsignal.Source {
	m.mu.Lock()
	defer m.mu.Unlock()
	var sources []testsignal.Source
	for _, c := range m.clients {
		sources = append(sources, worked(c)...)
	}
	return sources
}

// untilWorked waits until cond holds, checking it again after each unit of
// work (worked) of any client the test made so far.
func (s store) untilWorked(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testsignal.Until(t, what, cond, s.made.sources()...)
}

// workedAround are the units of work of every client made in c's test so
// far, or of c alone when the suite did not make it.
func workedAround(c client) []testsignal.Source {
	if m, ok := madeWith.Load(c); ok {
		return m.(*madeClients).sources()
	}
	return worked(c)
}

// signals are c's test signals, on when the suite made it
// (store.withSignals) or the test turned them on.
func signals(c client) *drover.TestSignals { return drover.SignalsOf(c) }

// worked are the units of work of c's services that can change a job or
// a subscription, or add a job: a claim, a flush of results, the leader's
// rescue, promotion and absent-worker passes, its periodic inserts, and
// the topic consumer's acks.
func worked(c client) []testsignal.Source {
	s := signals(c)
	return []testsignal.Source{&s.Producer.Claimed, &s.Completer.Flushed, &s.Rescuer.Passed, &s.Promoter.Passed,
		&s.Router.Passed, &s.Periodic.Inserted, &s.Topics.Acked}
}

// Test job kinds.

type noopArgs struct {
	N int `json:"n"`
}

func (noopArgs) Kind() string { return "test.noop" }

type scriptArgs struct {
	// Fail is how many attempts fail before one succeeds; -1 always.
	Fail   int    `json:"fail"`
	Panic  bool   `json:"panic,omitempty"`
	Cancel bool   `json:"cancel,omitempty"`
	Block  bool   `json:"block,omitempty"` // wait for ctx to end
	Sleep  string `json:"sleep,omitempty"`
	Tag    string `json:"tag,omitempty"`
}

func (scriptArgs) Kind() string { return "test.script" }

// recorder remembers which jobs ran, in which order, how often.
type recorder struct {
	mu    sync.Mutex
	order []int64
	runs  map[int64]int
	// ran is signalled by each run, once recorded.
	ran testsignal.Signal[int64]
}

func newRecorder() *recorder {
	r := &recorder{runs: map[int64]int{}}
	r.ran.Init()
	return r
}

func (r *recorder) record(id int64) {
	r.mu.Lock()
	r.order = append(r.order, id)
	r.runs[id]++
	r.mu.Unlock()
	r.ran.Send(id)
}

// distinct counts the jobs that ran, each once however often it ran.
func (r *recorder) distinct() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.runs)
}

// waitRuns waits until n runs are recorded, checking after each.
func (r *recorder) waitRuns(t *testing.T, what string, n int) {
	t.Helper()
	testsignal.Until(t, what, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.order) == n
	}, &r.ran)
}

func (r *recorder) snapshot() ([]int64, map[int64]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	runs := make(map[int64]int, len(r.runs))
	for k, v := range r.runs {
		runs[k] = v
	}
	return append([]int64(nil), r.order...), runs
}

func testWorkers(rec *recorder) *drover.Workers {
	w := drover.NewWorkers()
	drover.AddWorker(w, drover.WorkFunc(func(ctx context.Context, j *drover.Job[noopArgs]) error {
		rec.record(j.ID)
		return nil
	}))
	drover.AddWorker(w, drover.WorkFunc(func(ctx context.Context, j *drover.Job[scriptArgs]) error {
		rec.record(j.ID)
		a := j.Args
		if err := sleepFor(ctx, a.Sleep); err != nil {
			return err
		}
		if a.Block {
			<-ctx.Done()
			return ctx.Err()
		}
		if a.Panic {
			panic("boom")
		}
		if a.Cancel {
			return drover.Cancel(errors.New("not wanted"))
		}
		if a.Fail < 0 || j.Attempt <= a.Fail {
			return fmt.Errorf("attempt %d failed on purpose", j.Attempt)
		}
		return nil
	}))
	return w
}

type bundle struct {
	s      store
	d      droverdriver.Driver
	rec    *recorder
	client client
	// remote is the client's Remote, for the tests of remote workers.
	remote *drover.Remote
}

// setup returns a store of its own and an unstarted client on it with fast
// timings, working queue "default" with the given concurrency.
func setup(t *testing.T, s store, maxWorkers int, mutate ...func(*drover.Config)) *bundle {
	t.Helper()
	d := s.open(t)
	rec := newRecorder()
	cfg := fastConfig(rec, maxWorkers)
	for _, m := range mutate {
		m(cfg)
	}
	c := s.newClient(t, d, cfg)
	return &bundle{s: s, d: d, rec: rec, client: c, remote: c.Remote()}
}

func fastConfig(rec *recorder, maxWorkers int) *drover.Config {
	return &drover.Config{
		Queues:        map[string]drover.QueueConfig{drover.DefaultQueue: {MaxWorkers: maxWorkers}},
		Workers:       testWorkers(rec),
		Logger:        slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
		RetryPolicy:   func(int) time.Duration { return 10 * time.Millisecond },
		LeaseDuration: 2 * time.Second,
		PollInterval:  50 * time.Millisecond,
		StopTimeout:   2 * time.Second,
		LeaderTTL:     2 * time.Second,
	}
}

func (b *bundle) start(t *testing.T) {
	t.Helper()
	startClient(t, b.client)
}

func startClient(t *testing.T, c client) {
	t.Helper()
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Stop(ctx) // already stopped is fine
	})
}

func (b *bundle) insert(t *testing.T, args drover.Args, opts *drover.InsertOpts) int64 {
	t.Helper()
	row, err := b.client.Insert(context.Background(), args, opts)
	if err != nil {
		t.Fatal(err)
	}
	return row.ID
}

// waitState waits until job id is in state want, reading it from the
// store again after each unit of work of c or of the other clients of its
// test (workedAround).
func waitState(t *testing.T, c client, id int64, want drovertype.JobState) *drovertype.JobRow {
	t.Helper()
	var row *drovertype.JobRow
	testsignal.Until(t, fmt.Sprintf("job %d to be %s", id, want), func() bool {
		var err error
		row, err = c.JobGet(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return row.State == want
	}, workedAround(c)...)
	return row
}

func TestInsertAndWork(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 4)
		id := b.insert(t, noopArgs{N: 7}, &drover.InsertOpts{Tags: []string{"a", "b"}, Metadata: json.RawMessage(`{"k":"v"}`)})
		row, err := b.client.JobGet(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if row.State != drovertype.JobStateAvailable || row.Kind != "test.noop" || row.Queue != "default" || row.Attempt != 0 {
			t.Fatalf("inserted row = %+v", row)
		}
		if string(row.EncodedArgs) != `{"n": 7}` && string(row.EncodedArgs) != `{"n":7}` {
			t.Fatalf("args = %s", row.EncodedArgs)
		}
		if strings.Join(row.Tags, ",") != "a,b" {
			t.Fatalf("tags = %v", row.Tags)
		}
		b.start(t)
		done := waitState(t, b.client, id, drovertype.JobStateCompleted)
		if done.Attempt != 1 || done.FinalizedAt == nil || len(done.Errors) != 0 {
			t.Fatalf("completed row = %+v", done)
		}
		var meta map[string]string
		if err := json.Unmarshal(done.Metadata, &meta); err != nil || meta["k"] != "v" {
			t.Fatalf("metadata = %s (%v)", done.Metadata, err)
		}
		if _, runs := b.rec.snapshot(); runs[id] != 1 {
			t.Fatalf("job ran %d times, want 1", runs[id])
		}
	})
}

func TestInsertManyOrderAndIDs(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 1)
		params := make([]drover.InsertManyParams, 12_000)
		for i := range params {
			params[i] = drover.InsertManyParams{Args: noopArgs{N: i}}
		}
		ids, err := b.client.InsertMany(context.Background(), params)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) != len(params) {
			t.Fatalf("got %d ids, want %d", len(ids), len(params))
		}
		for i := 1; i < len(ids); i++ {
			if ids[i] <= ids[i-1] {
				t.Fatalf("ids not increasing in input order at %d: %d, %d", i, ids[i-1], ids[i])
			}
		}
		row, err := b.client.JobGet(context.Background(), ids[4321])
		if err != nil {
			t.Fatal(err)
		}
		var a noopArgs
		if err := json.Unmarshal(row.EncodedArgs, &a); err != nil || a.N != 4321 {
			t.Fatalf("job %d args = %s", ids[4321], row.EncodedArgs)
		}
	})
}

type unknownArgs struct{}

func (unknownArgs) Kind() string { return "test.unknown" }

func TestInsertRejectsBadInput(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 1)
		ctx := context.Background()
		cases := []struct {
			name string
			args drover.Args
			opts *drover.InsertOpts
			want string
		}{
			{"unknown kind", unknownArgs{}, nil, `unknown job kind "test.unknown"`},
			{"bad queue", noopArgs{}, &drover.InsertOpts{Queue: "no spaces"}, `queue "no spaces"`},
			{"priority range", noopArgs{}, &drover.InsertOpts{Priority: 40000}, "priority 40000"},
			{"negative attempts", noopArgs{}, &drover.InsertOpts{MaxAttempts: -1}, "max attempts -1"},
			{"metadata not object", noopArgs{}, &drover.InsertOpts{Metadata: json.RawMessage(`[1]`)}, "metadata: must be a JSON object"},
			{"metadata invalid", noopArgs{}, &drover.InsertOpts{Metadata: json.RawMessage(`{"a":}`)}, "metadata: invalid JSON at offset"},
			{"tag comma", noopArgs{}, &drover.InsertOpts{Tags: []string{"a,b"}}, `tag "a,b"`},
			{"run at range", noopArgs{}, &drover.InsertOpts{RunAt: time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC)}, "run at"},
		}
		for _, tc := range cases {
			_, err := b.client.Insert(ctx, tc.args, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: err = %v, want it to contain %q", tc.name, err, tc.want)
			}
		}
		// A bad job in the middle of a batch stores nothing at all.
		_, err := b.client.InsertMany(ctx, []drover.InsertManyParams{
			{Args: noopArgs{N: 1}}, {Args: noopArgs{N: 2}, Opts: &drover.InsertOpts{Queue: "bad queue"}},
		})
		if err == nil || !strings.Contains(err.Error(), "job 2 of 2") {
			t.Fatalf("InsertMany err = %v", err)
		}
		counts, err := b.client.JobCountByState(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(counts) != 0 {
			t.Fatalf("store holds jobs after rejected inserts: %v", counts)
		}
	})
}

func TestRetriesThenCompletes(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 2)
		b.start(t)
		id := b.insert(t, scriptArgs{Fail: 2}, nil)
		row := waitState(t, b.client, id, drovertype.JobStateCompleted)
		if row.Attempt != 3 || len(row.Errors) != 2 {
			t.Fatalf("attempt = %d, errors = %d; want 3 and 2", row.Attempt, len(row.Errors))
		}
		for i, e := range row.Errors {
			if e.Attempt != i+1 || !strings.Contains(e.Error, "failed on purpose") {
				t.Fatalf("error %d = %+v", i, e)
			}
		}
	})
}

func TestDiscardAfterMaxAttempts(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 2)
		b.start(t)
		id := b.insert(t, scriptArgs{Fail: -1}, &drover.InsertOpts{MaxAttempts: 3})
		row := waitState(t, b.client, id, drovertype.JobStateDiscarded)
		if row.Attempt != 3 || len(row.Errors) != 3 {
			t.Fatalf("attempt = %d, errors = %d; want 3 and 3", row.Attempt, len(row.Errors))
		}
		if _, runs := b.rec.snapshot(); runs[id] != 3 {
			t.Fatalf("ran %d times, want 3", runs[id])
		}
	})
}

func TestPanicIsAnError(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 2)
		b.start(t)
		id := b.insert(t, scriptArgs{Panic: true}, &drover.InsertOpts{MaxAttempts: 1})
		row := waitState(t, b.client, id, drovertype.JobStateDiscarded)
		if len(row.Errors) != 1 || row.Errors[0].Error != "panic: boom" || !strings.Contains(row.Errors[0].Trace, "goroutine") {
			t.Fatalf("errors = %+v", row.Errors)
		}
		// The client survived and still works jobs.
		waitState(t, b.client, b.insert(t, noopArgs{}, nil), drovertype.JobStateCompleted)
	})
}

func TestWorkerCancel(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 2)
		b.start(t)
		id := b.insert(t, scriptArgs{Cancel: true}, nil)
		row := waitState(t, b.client, id, drovertype.JobStateCancelled)
		if row.Attempt != 1 || len(row.Errors) != 1 || !strings.Contains(row.Errors[0].Error, "not wanted") {
			t.Fatalf("row = %+v", row)
		}
	})
}

func TestTimeout(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 2)
		b.start(t)
		id := b.insert(t, scriptArgs{Block: true}, &drover.InsertOpts{Timeout: 50 * time.Millisecond, MaxAttempts: 1})
		row := waitState(t, b.client, id, drovertype.JobStateDiscarded)
		if len(row.Errors) != 1 || !strings.Contains(row.Errors[0].Error, "timed out after 50ms") {
			t.Fatalf("errors = %+v", row.Errors)
		}
	})
}

// scribbleArgs' worker (TestHandlerChangesItsRow) writes over the row of
// its Job.
type scribbleArgs struct{}

func (scribbleArgs) Kind() string { return "test.scribble" }

// TestHandlerChangesItsRow checks that a handler that writes over its
// Job's row (the claimed row itself, not a copy of it) changes nothing the
// attempt's result is written from: the attempt, its limit, the lease
// token and the kind and queue it is counted under. Its first attempt
// fails after claiming to be the job's last: it must be retried, not
// discarded, and the error stored under attempt 1.
func TestHandlerChangesItsRow(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 2, func(cfg *drover.Config) {
			drover.AddWorker(cfg.Workers, drover.WorkFunc(func(ctx context.Context, j *drover.Job[scribbleArgs]) error {
				attempt := j.Attempt
				j.ID, j.Attempt, j.MaxAttempts, j.Timeout = j.ID+1000, 99, 1, time.Nanosecond
				j.Kind, j.Queue, j.Key, j.Flow = "test.other", "elsewhere", "key", 0xff
				j.LeaseToken = drovertype.LeaseToken{}
				if attempt == 1 {
					return errors.New("first attempt fails")
				}
				return nil
			}))
		})
		b.start(t)
		id := b.insert(t, scribbleArgs{}, &drover.InsertOpts{MaxAttempts: 2})
		row := waitState(t, b.client, id, drovertype.JobStateCompleted)
		if row.Attempt != 2 || len(row.Errors) != 1 || row.Errors[0].Attempt != 1 || row.Errors[0].Error != "first attempt fails" {
			t.Fatalf("completed row: attempt %d, errors %+v", row.Attempt, row.Errors)
		}
		metrics, ok := b.client.(interface{ JobMetrics() []drover.JobMetrics })
		if !ok {
			return
		}
		for _, m := range metrics.JobMetrics() {
			if m.Kind == "test.scribble" && (m.Queue != drover.DefaultQueue || m.Completed != 1 || m.Failed != 1) ||
				m.Kind == "test.other" || m.Queue == "elsewhere" {
				t.Errorf("metrics %s/%s: %d completed, %d failed", m.Queue, m.Kind, m.Completed, m.Failed)
			}
		}
	})
}

func TestScheduledJobWaitsForItsTime(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 2)
		b.start(t)
		at := time.Now().Add(700 * time.Millisecond)
		id := b.insert(t, noopArgs{}, &drover.InsertOpts{RunAt: at})
		row, err := b.client.JobGet(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if row.State != drovertype.JobStateScheduled {
			t.Fatalf("state = %s, want scheduled", row.State)
		}
		row = waitState(t, b.client, id, drovertype.JobStateCompleted)
		if row.AttemptedAt.Before(at) {
			t.Fatalf("ran at %s, before its time %s", row.AttemptedAt, at)
		}
	})
}

func TestPriorityOrder(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 1)
		var want []int64
		prios := []int{5, -3, 0, 5, -3, 32767, -32768}
		type ip struct {
			id   int64
			prio int
		}
		var ins []ip
		for _, p := range prios {
			ins = append(ins, ip{b.insert(t, noopArgs{}, &drover.InsertOpts{Priority: p}), p})
		}
		sort.SliceStable(ins, func(i, j int) bool { return ins[i].prio < ins[j].prio })
		for _, x := range ins {
			want = append(want, x.id)
		}
		b.start(t)
		b.rec.waitRuns(t, "all jobs", len(want))
		got, _ := b.rec.snapshot()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("run order %v, want %v", got, want)
		}
	})
}

func TestJobCancel(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 2)
		ctx := context.Background()
		waiting := b.insert(t, noopArgs{}, &drover.InsertOpts{RunAt: time.Now().Add(time.Hour)})
		row, err := b.client.JobCancel(ctx, waiting)
		if err != nil {
			t.Fatal(err)
		}
		if row.State != drovertype.JobStateCancelled {
			t.Fatalf("cancelled waiting job is %s", row.State)
		}
		b.start(t)
		running := b.insert(t, scriptArgs{Block: true}, nil)
		waitState(t, b.client, running, drovertype.JobStateRunning)
		if _, err := b.client.JobCancel(ctx, running); err != nil {
			t.Fatal(err)
		}
		// The heartbeat (every third of the 2 s lease) delivers the cancel.
		row = waitState(t, b.client, running, drovertype.JobStateCancelled)
		if row.Attempt != 1 {
			t.Fatalf("attempt = %d", row.Attempt)
		}
		if _, err := b.client.JobCancel(ctx, 1<<40); !errors.Is(err, drover.ErrNotFound) {
			t.Fatalf("cancel of missing job: %v", err)
		}
	})
}

func TestJobRetry(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 2)
		b.start(t)
		ctx := context.Background()
		id := b.insert(t, scriptArgs{Fail: 1}, &drover.InsertOpts{MaxAttempts: 1})
		waitState(t, b.client, id, drovertype.JobStateDiscarded)
		row, err := b.client.JobRetry(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if row.State.Finished() || row.MaxAttempts != 2 {
			t.Fatalf("retried row = %+v", row)
		}
		row = waitState(t, b.client, id, drovertype.JobStateCompleted)
		if row.Attempt != 2 || len(row.Errors) != 1 {
			t.Fatalf("attempt = %d errors = %d", row.Attempt, len(row.Errors))
		}
		later := b.insert(t, noopArgs{}, &drover.InsertOpts{RunAt: time.Now().Add(time.Hour)})
		if _, err := b.client.JobRetry(ctx, later); err != nil {
			t.Fatal(err)
		}
		waitState(t, b.client, later, drovertype.JobStateCompleted)
	})
}

func TestJobListFiltersAndPages(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 1)
		ctx := context.Background()
		var ids []int64
		for i := range 25 {
			opts := &drover.InsertOpts{}
			if i%5 == 0 {
				opts.RunAt = time.Now().Add(time.Hour)
			}
			if i%2 == 0 {
				opts.Queue = "other"
			}
			ids = append(ids, b.insert(t, noopArgs{N: i}, opts))
		}
		var got []int64
		var after int64
		for {
			page, err := b.client.JobList(ctx, drover.JobListParams{Limit: 7, After: after})
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			for _, r := range page {
				got = append(got, r.ID)
			}
			after = page[len(page)-1].ID
		}
		if fmt.Sprint(got) != fmt.Sprint(ids) {
			t.Fatalf("pages = %v, want %v", got, ids)
		}
		sched, err := b.client.JobList(ctx, drover.JobListParams{States: []drovertype.JobState{drovertype.JobStateScheduled}})
		if err != nil {
			t.Fatal(err)
		}
		if len(sched) != 5 {
			t.Fatalf("scheduled = %d, want 5", len(sched))
		}
		other, err := b.client.JobList(ctx, drover.JobListParams{Queue: "other", States: []drovertype.JobState{drovertype.JobStateAvailable}})
		if err != nil {
			t.Fatal(err)
		}
		if len(other) != 10 { // 13 even indexes, 3 of them scheduled
			t.Fatalf("available in other = %d, want 10", len(other))
		}
		if _, err := b.client.JobList(ctx, drover.JobListParams{States: []drovertype.JobState{"bogus"}}); err == nil {
			t.Fatal("bogus state accepted")
		}
	})
}

func TestInsertTxVisibleOnlyOnCommit(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 1)
		ctx := context.Background()
		rolledBack := s.insertTx(t, b.d, b.client, noopArgs{N: 1}, false)
		committed := s.insertTx(t, b.d, b.client, noopArgs{N: 2}, true)
		if _, err := b.client.JobGet(ctx, rolledBack); !errors.Is(err, drover.ErrNotFound) {
			t.Fatalf("rolled back job: err = %v, want not found", err)
		}
		b.start(t)
		waitState(t, b.client, committed, drovertype.JobStateCompleted)
	})
}

func TestStartNeedsMigration(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 1)
		ctx := context.Background()
		res, err := drover.Migrate(ctx, b.d)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Applied) != 0 || res.Version < 1 {
			t.Fatalf("second migrate = %+v, want nothing applied", res)
		}
		cur, latest, err := drover.MigrationStatus(ctx, b.d)
		if err != nil || cur != latest {
			t.Fatalf("status = %d/%d, %v", cur, latest, err)
		}
	})
}

// TestStartRefusesNewerSchema records a migration this binary does not know
// and checks that Migrate and Start refuse the store, naming the versions,
// rather than running statements written for an older schema.
func TestStartRefusesNewerSchema(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 1)
		ctx := context.Background()
		_, latest, err := drover.MigrationStatus(ctx, b.d)
		if err != nil {
			t.Fatal(err)
		}
		err = b.d.MigrateTx(ctx, func(ctx context.Context, m droverdriver.Migrator) error {
			return m.Apply(ctx, drovertype.Migration{Version: latest + 1, Name: "from_the_future", SQL: "SELECT 1"})
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := drover.Migrate(ctx, b.d); !errors.Is(err, drover.ErrSchemaNewer) {
			t.Fatalf("Migrate = %v, want ErrSchemaNewer", err)
		}
		err = b.client.Start(ctx)
		if !errors.Is(err, drover.ErrSchemaNewer) || !strings.Contains(err.Error(), fmt.Sprintf("version %d", latest+1)) {
			if err == nil {
				b.client.Stop(ctx)
			}
			t.Fatalf("Start = %v, want ErrSchemaNewer naming version %d", err, latest+1)
		}
	})
}

// TestLeaseExpiryRescueAndFencing claims a job as a worker that then dies,
// lets its lease expire, and checks that the rescuer returns it, that a
// live client completes it, and that the dead worker's late result is
// rejected.
func TestLeaseExpiryRescueAndFencing(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 2)
		ctx := context.Background()
		id := b.insert(t, noopArgs{}, nil)
		claimed, err := b.d.Executor().JobClaim(ctx, droverdriver.ClaimParams{Queue: "default", Max: 10, Owner: "dead-worker", Lease: 200 * time.Millisecond})
		if err != nil || len(claimed) != 1 || claimed[0].ID != id || claimed[0].Attempt != 1 {
			t.Fatalf("claim = %v, %v", claimed, err)
		}
		b.start(t)
		row := waitState(t, b.client, id, drovertype.JobStateCompleted)
		if row.Attempt != 2 || len(row.Errors) != 1 || !strings.Contains(row.Errors[0].Error, "lease expired") {
			t.Fatalf("rescued row = %+v", row)
		}
		accepted, err := engine.Finish(ctx, b.d.Executor(), []droverdriver.Result{{ID: id, Attempt: 1, LeaseToken: claimed[0].LeaseToken,
			Outcome: droverdriver.OutcomeDiscarded}})
		if err != nil || len(accepted) != 0 {
			t.Fatalf("late result accepted = %v, %v", accepted, err)
		}
		if row, _ := b.client.JobGet(ctx, id); row.State != drovertype.JobStateCompleted {
			t.Fatalf("late result changed the job to %s", row.State)
		}
	})
}

// TestHeartbeatKeepsLongJob runs a job longer than its lease: heartbeats
// must keep it from being rescued.
func TestHeartbeatKeepsLongJob(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 2, func(c *drover.Config) { c.LeaseDuration = 300 * time.Millisecond })
		b.start(t)
		id := b.insert(t, scriptArgs{Sleep: "1200ms"}, nil)
		row := waitState(t, b.client, id, drovertype.JobStateCompleted)
		if row.Attempt != 1 || len(row.Errors) != 0 {
			t.Fatalf("long job was rescued: %+v", row)
		}
	})
}

// TestGracefulStopReleases stops a client whose handlers ignore nothing but
// their context: after the soft timeout they are interrupted, and every
// claimed job (running or still buffered) is released for other clients at
// once, its attempt undone.
func TestGracefulStopReleases(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 2, func(c *drover.Config) {
			c.StopTimeout = 200 * time.Millisecond
			c.LeaseDuration = time.Minute // release must not wait for expiry
		})
		ctx := context.Background()
		var ids []int64
		for range 6 {
			ids = append(ids, b.insert(t, scriptArgs{Block: true}, nil))
		}
		b.start(t)
		b.rec.waitRuns(t, "two jobs running", 2)
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := b.client.Stop(stopCtx); err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			row, err := b.client.JobGet(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if row.State != drovertype.JobStateAvailable || row.Attempt != 0 || row.LeaseOwner != "" {
				t.Fatalf("job %d after stop = state %s attempt %d owner %q", id, row.State, row.Attempt, row.LeaseOwner)
			}
		}
		// Another client takes them over at once.
		rec := newRecorder()
		other := s.newClient(t, b.d, fastConfig(rec, 10))
		startClient(t, other)
		rec.waitRuns(t, "six jobs restarted elsewhere", 6)
	})
}

// TestExactlyOnceUnderConcurrency runs several clients with many workers
// over tens of thousands of jobs of mixed priorities (so that claim order
// is not insert order) and checks, from the store and from the handlers,
// that every job ran and completed exactly once.
func TestExactlyOnceUnderConcurrency(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		const jobs, clients = 20_000, 3
		b := setup(t, s, 50)
		ctx := context.Background()
		params := make([]drover.InsertManyParams, jobs)
		for i := range params {
			params[i] = drover.InsertManyParams{Args: noopArgs{N: i}, Opts: &drover.InsertOpts{Priority: i % 4}}
		}
		ids, err := b.client.InsertMany(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		rec := newRecorder()
		var started atomic.Int32
		for range clients {
			c := s.newClient(t, b.d, fastConfig(rec, 50))
			startClient(t, c)
			started.Add(1)
		}
		// The store is counted once every job ran, after each flush.
		s.untilWorked(t, "all jobs completed", func() bool {
			if rec.distinct() < jobs {
				return false
			}
			counts, err := b.client.JobCountByState(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			return counts[drovertype.JobStateCompleted] == jobs
		})
		_, runs := rec.snapshot()
		for _, id := range ids {
			if runs[id] != 1 {
				t.Fatalf("job %d ran %d times", id, runs[id])
			}
		}
		if len(runs) != jobs {
			t.Fatalf("%d distinct jobs ran, want %d", len(runs), jobs)
		}
		counts, _ := b.client.JobCountByState(ctx, "")
		if counts[drovertype.JobStateAvailable]+counts[drovertype.JobStateRunning] != 0 {
			t.Fatalf("jobs left behind: %v", counts)
		}
	})
}

// TestSingleJobStreamsRunOnce inserts jobs one per call from several
// goroutines while several clients of one process work them on one store
// (on SQLite their inserts, claims and finishes share write rounds and
// statements: droversqlite/shared.go), and checks that every job ran
// once, with the job it was inserted as, and completed, none left waiting
// or running.
func TestSingleJobStreamsRunOnce(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		const producers, each, clients = 8, 40, 6
		b := setup(t, s, 2)
		ctx := context.Background()
		rec := newRecorder()
		for range clients {
			startClient(t, s.newClient(t, b.d, fastConfig(rec, 2)))
		}
		inserted := make(chan *drovertype.JobRow, producers*each)
		var wg sync.WaitGroup
		for p := range producers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					row, err := b.client.Insert(ctx, noopArgs{N: p*each + i}, nil)
					if err != nil {
						t.Error(err)
						return
					}
					inserted <- row
				}
			}()
		}
		wg.Wait()
		close(inserted)
		if t.Failed() {
			return
		}
		ids := map[int64]bool{}
		for row := range inserted {
			var args noopArgs
			if err := json.Unmarshal(row.EncodedArgs, &args); err != nil || row.Kind != "test.noop" || ids[row.ID] {
				t.Fatalf("insert returned job %d of kind %s, args %s (%v), or an ID twice", row.ID, row.Kind, row.EncodedArgs, err)
			}
			ids[row.ID] = true
		}
		s.untilWorked(t, "every job completed", func() bool {
			counts, err := b.client.JobCountByState(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			return counts[drovertype.JobStateCompleted] == producers*each
		})
		_, runs := rec.snapshot()
		for id := range ids {
			if runs[id] != 1 {
				t.Errorf("job %d ran %d times", id, runs[id])
			}
		}
		if len(runs) != len(ids) {
			t.Errorf("%d distinct jobs ran, want the %d inserted", len(runs), len(ids))
		}
		counts, err := b.client.JobCountByState(ctx, "")
		if err != nil || counts[drovertype.JobStateAvailable]+counts[drovertype.JobStateRunning] != 0 {
			t.Errorf("jobs left behind: %v (%v)", counts, err)
		}
	})
}

// TestMaintenanceSurvivesLeaderStop stops the client that leads maintenance
// and checks that another one takes over: a job whose worker died is still
// rescued and completed.
func TestMaintenanceSurvivesLeaderStop(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 2)
		ctx := context.Background()
		b.start(t) // first to start: leads
		rec := newRecorder()
		follower := s.newClient(t, b.d, fastConfig(rec, 2))
		startClient(t, follower)
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := b.client.Stop(stopCtx); err != nil {
			t.Fatal(err)
		}
		id := b.insert(t, noopArgs{}, &drover.InsertOpts{Queue: "orphans"})
		if _, err := b.d.Executor().JobClaim(ctx, droverdriver.ClaimParams{Queue: "orphans", Max: 1, Owner: "dead", Lease: 100 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		// Nobody works "orphans"; only the rescuer can move the job.
		testsignal.Until(t, "rescue by the new leader", func() bool {
			row, err := follower.JobGet(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			return row.State == drovertype.JobStateAvailable && row.Attempt == 1 && len(row.Errors) == 1
		}, &signals(follower).Rescuer.Passed)
	})
}

// TestPrunerRemovesExpiredFinishedJobs keeps completed jobs for a moment
// and discarded ones forever.
func TestPrunerRemovesExpiredFinishedJobs(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 2, func(c *drover.Config) {
			c.CompletedRetention = time.Millisecond
			c.DiscardedRetention = -1
			c.PruneInterval = 50 * time.Millisecond
		})
		b.start(t)
		ctx := context.Background()
		done := b.insert(t, noopArgs{}, nil)
		failed := b.insert(t, scriptArgs{Fail: -1}, &drover.InsertOpts{MaxAttempts: 1})
		pruned := &signals(b.client).Pruner.Passed
		testsignal.Until(t, "completed job pruned", func() bool {
			_, err := b.client.JobGet(ctx, done)
			return errors.Is(err, drover.ErrNotFound)
		}, pruned)
		if _, runs := b.rec.snapshot(); runs[done] != 1 {
			t.Fatalf("pruned job ran %d times", runs[done])
		}
		waitState(t, b.client, failed, drovertype.JobStateDiscarded)
		// A prune pass that completes after the discard leaves it alone.
		later := b.insert(t, noopArgs{}, nil)
		testsignal.Until(t, "second completed job pruned", func() bool {
			_, err := b.client.JobGet(ctx, later)
			return errors.Is(err, drover.ErrNotFound)
		}, pruned)
		if row, err := b.client.JobGet(ctx, failed); err != nil || row.State != drovertype.JobStateDiscarded {
			t.Fatalf("discarded job kept forever: %v, %v", row, err)
		}
	})
}

// TestStopReleasesBufferedJobsAtOnce stops a client whose two workers are
// busy and checks that the jobs it had claimed but not started are
// released while the running ones are still running, not after them.
func TestStopReleasesBufferedJobsAtOnce(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 2, func(c *drover.Config) {
			c.StopTimeout = 30 * time.Second
			c.LeaseDuration = time.Minute
		})
		ctx := context.Background()
		var running, buffered []int64
		for i := range 6 {
			id := b.insert(t, scriptArgs{Sleep: "3s"}, &drover.InsertOpts{Priority: i})
			if i < 2 {
				running = append(running, id)
			} else {
				buffered = append(buffered, id)
			}
		}
		b.start(t)
		b.rec.waitRuns(t, "two jobs running", 2)
		stopped := make(chan error, 1)
		go func() { stopped <- b.client.Stop(ctx) }()
		waitfor.Cond(t, "buffered jobs released", func() bool {
			for _, id := range buffered {
				row, err := b.client.JobGet(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if row.State != drovertype.JobStateAvailable {
					return false
				}
			}
			return true
		})
		for _, id := range running {
			if row, _ := b.client.JobGet(ctx, id); row.State != drovertype.JobStateRunning {
				t.Fatalf("job %d is %s while its handler still runs", id, row.State)
			}
		}
		if err := <-stopped; err != nil {
			t.Fatal(err)
		}
		for _, id := range running {
			if row, _ := b.client.JobGet(ctx, id); row.State != drovertype.JobStateCompleted {
				t.Fatalf("running job %d ended %s, want completed within the grace period", id, row.State)
			}
		}
	})
}

// TestClaimAfterPosition checks the claim-position variant of JobClaim that
// producers use while full claims are slow: it claims, in claim order, only
// rows past the position, and leaves the rows before it available.
func TestClaimAfterPosition(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		d := s.open(t)
		var params []droverdriver.InsertParams
		for _, prio := range []int{0, 0, 0, 1, 1, 2} {
			params = append(params, droverdriver.InsertParams{Queue: "q", Kind: "k", Args: []byte(`{}`), Priority: prio, MaxAttempts: 1})
		}
		ids, err := d.Executor().JobInsertMany(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		first, err := d.Executor().JobClaim(ctx, droverdriver.ClaimParams{Queue: "q", Max: 2, Owner: "a", Lease: time.Minute})
		if err != nil || len(first) != 2 || first[0].ID != ids[0] || first[1].ID != ids[1] {
			t.Fatalf("full claim: %v, %v; want jobs %v", first, err, ids[:2])
		}
		// Past the fourth job (priority 1): the fifth and sixth, in order,
		// and nothing of the third (priority 0, before the position).
		fourth, err := d.Executor().JobGet(ctx, ids[3])
		if err != nil {
			t.Fatal(err)
		}
		after := &droverdriver.ClaimPosition{Priority: fourth.Priority, RunAt: fourth.RunAt, ID: fourth.ID}
		got, err := d.Executor().JobClaim(ctx, named(droverdriver.ClaimParams{Queue: "q", Max: 10, Owner: "b", Lease: time.Minute, After: after}))
		if err != nil {
			t.Fatal(err)
		}
		var gotIDs []int64
		for _, r := range got {
			gotIDs = append(gotIDs, r.ID)
		}
		if fmt.Sprint(gotIDs) != fmt.Sprint(ids[4:]) {
			t.Fatalf("claim after job %d: got %v, want %v", fourth.ID, gotIDs, ids[4:])
		}
		rest, err := d.Executor().JobClaim(ctx, droverdriver.ClaimParams{Queue: "q", Max: 10, Owner: "c", Lease: time.Minute})
		if err != nil || len(rest) != 2 || rest[0].ID != ids[2] || rest[1].ID != ids[3] {
			t.Fatalf("full claim after the positional one: %v, %v; want jobs %v", rest, err, ids[2:4])
		}
	})
}

// sleepFor sleeps for the duration spec names ("" for none) unless ctx
// ends first, as the test handlers' scripted work.
func sleepFor(ctx context.Context, spec string) error {
	if spec == "" {
		return nil
	}
	d, _ := time.ParseDuration(spec)
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
