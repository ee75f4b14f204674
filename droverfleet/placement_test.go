package droverfleet_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverfleet"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/engine"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// migrated returns a migrated and attached fleet of n shards.
func migrated(t *testing.T, n int) *fleet {
	t.Helper()
	f := openFleet(t, n)
	if _, err := drover.Migrate(context.Background(), f.Driver); err != nil {
		t.Fatal(err)
	}
	return f
}

func job(queue string) droverdriver.InsertParams {
	return droverdriver.InsertParams{Queue: queue, Kind: "k", Args: []byte(`{}`), MaxAttempts: 3}
}

// insertEach inserts each job in a call of its own (each call places its
// free jobs on the next shard in turn) and returns their IDs.
func insertEach(t *testing.T, d droverdriver.Executor, jobs ...droverdriver.InsertParams) []int64 {
	t.Helper()
	var ids []int64
	for _, j := range jobs {
		got, err := d.JobInsertMany(context.Background(), []droverdriver.InsertParams{j})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, got...)
	}
	return ids
}

func shardsOf(ids []int64) map[int]int {
	m := map[int]int{}
	for _, id := range ids {
		m[droverdriver.ShardOf(id)]++
	}
	return m
}

// TestPlacement: what must live together does, and the rest spreads.
func TestPlacement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := migrated(t, 2)

	t.Run("spread", func(t *testing.T) {
		var jobs []droverdriver.InsertParams
		for range 10 {
			jobs = append(jobs, job("plain"))
		}
		if got := shardsOf(insertEach(t, f.ex, jobs...)); got[0] != 5 || got[1] != 5 {
			t.Fatalf("10 inserts of one queue by shard: %v, want 5 and 5", got)
		}
	})

	t.Run("keys", func(t *testing.T) {
		// Each key's jobs share a shard whatever call inserted them, keys
		// use both shards, and each key starts one job at a time, in
		// insert order, across the fleet.
		first := map[string]int64{}
		byKey := map[string][]int64{}
		for round := range 3 {
			for k := range 12 {
				key := fmt.Sprintf("key-%d", k)
				p := job("keyed")
				p.Key, p.KeyLimit = key, 1
				id := insertEach(t, f.ex, p)[0]
				byKey[key] = append(byKey[key], id)
				if round == 0 {
					first[key] = id
				}
			}
		}
		used := map[int]bool{}
		for key, ids := range byKey {
			if got := shardsOf(ids); len(got) != 1 {
				t.Fatalf("key %s's jobs %v are on shards %v", key, ids, got)
			}
			used[droverdriver.ShardOf(ids[0])] = true
		}
		if len(used) != 2 {
			t.Fatalf("12 keys use shards %v, want both", used)
		}
		rows, err := f.ex.JobClaim(ctx, droverdriver.ClaimParams{Queue: "keyed", Max: 100, Owner: "w", Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(first) {
			t.Fatalf("claimed %d jobs, want the first of each of %d keys", len(rows), len(first))
		}
		for _, r := range rows {
			if first[r.Key] != r.ID {
				t.Fatalf("claimed job %d of key %s, want its first, %d", r.ID, r.Key, first[r.Key])
			}
		}
	})

	t.Run("unique", func(t *testing.T) {
		// A unique key is held once across the fleet, whichever call
		// inserts it.
		for k := range 6 {
			p := job("u")
			p.UniqueKey = fmt.Sprintf("u-%d", k)
			ids := insertEach(t, f.ex, p, p, p)
			if ids[0] == 0 || ids[1] != 0 || ids[2] != 0 {
				t.Fatalf("three inserts of unique key %s: %v, want the first stored and the others skipped", p.UniqueKey, ids)
			}
		}
	})

	t.Run("workflow and batch", func(t *testing.T) {
		for range 4 {
			res, err := engine.InsertFlow(ctx, f.ex, droverdriver.FlowInsertParams{Batch: true, Callback: ptr(job("cb")),
				Jobs: []droverdriver.FlowJob{{InsertParams: job("w")}, {InsertParams: job("w"), After: []int{0}}, {InsertParams: job("w"), After: []int{0, 1}}}})
			if err != nil {
				t.Fatal(err)
			}
			home := droverdriver.ShardOf(res.BatchID)
			if got := shardsOf(append(res.IDs, res.CallbackID)); got[home] != 4 {
				t.Fatalf("batch %d on shard %d, its jobs %v and callback %d on %v", res.BatchID, home, res.IDs, res.CallbackID, got)
			}
			// A dependant inserted later joins its parents.
			more, err := engine.InsertFlow(ctx, f.ex, droverdriver.FlowInsertParams{
				Jobs: []droverdriver.FlowJob{{InsertParams: job("w"), DependsOn: []int64{res.IDs[2]}}}})
			if err != nil {
				t.Fatal(err)
			}
			if droverdriver.ShardOf(more.IDs[0]) != home {
				t.Fatalf("dependant %d of job %d is on another shard", more.IDs[0], res.IDs[2])
			}
		}
	})

	t.Run("strict and limited queues", func(t *testing.T) {
		// A queue in strict order, or with a limit, keeps its new jobs on
		// one shard, so that one shard's claims see all of them.
		one := 1
		for _, set := range []droverdriver.QueueSettingsSetParams{
			{Queue: "strict", Strict: &one},
			{Queue: "limited", Limit: &drovertype.QueueLimit{MaxRunning: 2}},
		} {
			if _, err := f.ex.QueueSettingsSet(ctx, set); err != nil {
				t.Fatal(err)
			}
			for i := range f.shards {
				s, err := f.Shard(i).Executor().QueueSettingsGet(ctx, set.Queue)
				if err != nil || !s.Limited() {
					t.Fatalf("shard %d's settings of %s: %+v, %v; want the change on every shard", i, set.Queue, s, err)
				}
			}
			var jobs []droverdriver.InsertParams
			for range 8 {
				jobs = append(jobs, job(set.Queue))
			}
			ids := insertEach(t, f.ex, jobs...)
			if got := shardsOf(ids); len(got) != 1 {
				t.Fatalf("jobs of %s on shards %v, want one", set.Queue, got)
			}
			if set.Strict != nil {
				var order []int64
				for range ids {
					rows, err := engine.Claim(ctx, f.ex, &engine.Settings{}, droverdriver.ClaimParams{Queue: "strict", Max: 5, Owner: "w", Lease: time.Minute})
					if err != nil || len(rows) != 1 {
						t.Fatalf("strict claim: %v, %v; want one job", rows, err)
					}
					order = append(order, rows[0].ID)
					if _, err := engine.Finish(ctx, f.ex, []droverdriver.Result{{ID: rows[0].ID, Attempt: 1, LeaseToken: rows[0].LeaseToken,
						Outcome: droverdriver.OutcomeCompleted}}); err != nil {
						t.Fatal(err)
					}
				}
				for i := range ids {
					if order[i] != ids[i] {
						t.Fatalf("strict queue ran %v, want insert order %v", order, ids)
					}
				}
			}
		}
	})
}

func ptr[T any](v T) *T { return &v }

// TestAddShard: a shard appended to the list is attached by Migrate, takes
// new jobs at once, and moves nothing: keys stay on their shards.
func TestAddShard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := migrated(t, 2)
	keyed := func(key string) droverdriver.InsertParams {
		p := job("q")
		p.Key, p.KeyLimit = key, 1
		return p
	}
	before := map[string]int{}
	for k := range 8 {
		key := fmt.Sprintf("k%d", k)
		before[key] = droverdriver.ShardOf(insertEach(t, f.ex, keyed(key))[0])
	}
	// The same two shards and a third.
	d := newShard(t)
	shards := []droverdriver.TxDriver[pgx.Tx]{f.shards[0], f.shards[1], d}
	g, err := droverfleet.New(ctx, shards, droverfleet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drover.Migrate(ctx, g); err != nil {
		t.Fatal(err)
	}
	if st := g.Shards()[2].Record; st == nil || st.Index != 2 || st.KeyShards != 2 || st.Fleet != g.Shards()[0].Record.Fleet {
		t.Fatalf("the new shard's record %+v, want shard 2 of the fleet, keys still over 2 shards", st)
	}
	if got := shardsOf(insertEach(t, g.Executor(), job("q"), job("q"), job("q"))); got[2] != 1 {
		t.Fatalf("3 inserts after adding a shard went to %v, want one on the new shard", got)
	}
	for key, was := range before {
		if now := droverdriver.ShardOf(insertEach(t, g.Executor(), keyed(key))[0]); now != was {
			t.Fatalf("key %s moved from shard %d to %d", key, was, now)
		}
	}
	// Draining the new shard stops its placements.
	if err := g.SetDraining(ctx, 2, true); err != nil {
		t.Fatal(err)
	}
	if got := shardsOf(insertEach(t, g.Executor(), job("q"), job("q"), job("q"), job("q"))); got[2] != 0 {
		t.Fatalf("inserts while shard 2 drains went to %v", got)
	}
}

// TestShardDownAtStart: a worker whose fleet has a shard it cannot reach
// starts, and the jobs of the shards that answer are inserted and run.
func TestShardDownAtStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := migrated(t, 2)
	dead, err := pgxpool.New(ctx, "postgres://u@127.0.0.1:1/db?connect_timeout=1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dead.Close)
	gone, err := droverpg.New(dead, droverpg.WithSchema(f.shards[1].Schema()))
	if err != nil {
		t.Fatal(err)
	}
	g, err := droverfleet.New(ctx, []droverdriver.TxDriver[pgx.Tx]{f.shards[0], gone}, droverfleet.Options{})
	if err != nil {
		t.Fatalf("a fleet with shard 1 down: %v, want it to start", err)
	}
	var mu sync.Mutex
	ran := map[int64]bool{}
	workers := drover.NewWorkers()
	drover.AddWorker(workers, drover.WorkFunc(func(ctx context.Context, j *drover.Job[noop]) error {
		mu.Lock()
		ran[j.ID] = true
		mu.Unlock()
		return nil
	}))
	c, err := drover.NewClient(g, &drover.Config{Workers: workers,
		Queues:       map[string]drover.QueueConfig{drover.DefaultQueue: {MaxWorkers: 10}},
		Logger:       slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
		PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start with shard 1 down: %v", err)
	}
	t.Cleanup(func() { _ = c.Stop(context.Background()) })
	var ids []int64
	for range 10 {
		row, err := c.Insert(ctx, noop{}, nil)
		if err != nil {
			t.Fatalf("insert with shard 1 down: %v", err)
		}
		ids = append(ids, row.ID)
	}
	if got := shardsOf(ids); got[0] != 10 {
		t.Fatalf("inserts went to shards %v, want all on shard 0", got)
	}
	waitfor.Cond(t, "every job to run", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(ran) == len(ids)
	})
	if _, err := g.Executor().JobGet(ctx, droverdriver.ShardBase(1)); err == nil || errors.Is(err, droverdriver.ErrNotFound) {
		t.Fatalf("a job of the shard that is down: %v, want the outage", err)
	}
}

type noop struct{}

func (noop) Kind() string { return "noop" }

// seqArgs is a keyed job of TestAddShardUnderLoad: its key and its place
// among the key's jobs.
type seqArgs struct {
	Key string `json:"key"`
	Seq int    `json:"seq"`
}

func (seqArgs) Kind() string { return "seq" }

// TestAddShardUnderLoad: while workers run keyed jobs, a third shard is
// attached and a second process works the three shards; inserts go on
// through the new fleet. Every job runs once, and each key's jobs run in
// the order they were inserted, across the change.
func TestAddShardUnderLoad(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := migrated(t, 2)
	var mu sync.Mutex
	order := map[string][]int{}
	runs := 0
	workers := drover.NewWorkers()
	drover.AddWorker(workers, drover.WorkFunc(func(ctx context.Context, j *drover.Job[seqArgs]) error {
		mu.Lock()
		order[j.Args.Key] = append(order[j.Args.Key], j.Args.Seq)
		runs++
		mu.Unlock()
		return nil
	}))
	start := func(d *droverfleet.Driver[pgx.Tx]) *drover.Client[pgx.Tx] {
		c, err := drover.NewClient(d, &drover.Config{Workers: workers,
			Logger:       slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
			Queues:       map[string]drover.QueueConfig{drover.DefaultQueue: {MaxWorkers: 10}},
			PollInterval: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Stop(context.Background()) })
		return c
	}
	old := start(f.Driver)
	const keys, perPhase = 6, 10
	seq := map[string]int{}
	insert := func(c *drover.Client[pgx.Tx]) {
		for range perPhase {
			var batch []drover.InsertManyParams
			for k := range keys {
				key := fmt.Sprintf("k%d", k)
				seq[key]++
				batch = append(batch, drover.InsertManyParams{Args: seqArgs{Key: key, Seq: seq[key]}, Opts: &drover.InsertOpts{Key: key}})
			}
			if _, err := c.InsertMany(ctx, batch); err != nil {
				t.Fatal(err)
			}
		}
	}
	insert(old)
	d := newShard(t)
	g, err := droverfleet.New(ctx, []droverdriver.TxDriver[pgx.Tx]{f.shards[0], f.shards[1], d}, droverfleet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drover.Migrate(ctx, g); err != nil {
		t.Fatal(err)
	}
	next := start(g)
	insert(next)
	insert(old)
	total := 3 * perPhase * keys
	waitfor.Cond(t, "every keyed job to run", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return runs >= total
	})
	mu.Lock()
	defer mu.Unlock()
	if runs != total {
		t.Fatalf("%d runs of %d jobs", runs, total)
	}
	for key, got := range order {
		for i, s := range got {
			if s != i+1 {
				t.Fatalf("key %s ran %v, want its jobs in insert order", key, got)
			}
		}
	}
}
