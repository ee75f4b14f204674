package droverfleet_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverfleet"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/testkit/pgcluster"
	"github.com/droverhq/drover/internal/testkit/pgha"
	"github.com/droverhq/drover/internal/testkit/testdb"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// testLog writes log lines (a shard's outage and return) to the test's
// log.
type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// runLog records when each job ran.
type runLog struct {
	mu   sync.Mutex
	runs map[int64][]time.Time
}

func (r *runLog) add(id int64) {
	r.mu.Lock()
	r.runs[id] = append(r.runs[id], time.Now())
	r.mu.Unlock()
}

// ranBetween counts the runs of shard's jobs in [from, to).
func (r *runLog) ranBetween(shard int, from, to time.Time) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for id, ts := range r.runs {
		for _, at := range ts {
			if droverdriver.ShardOf(id) == shard && !at.Before(from) && at.Before(to) {
				n++
			}
		}
	}
	return n
}

// workingFleet migrates a fleet of two shards, shard 0 on the test
// cluster and shard 1 at url1, and starts a client on it whose workers
// record when each noop job ran (a run takes work); lease is the jobs'.
func workingFleet(t *testing.T, url1 string, work, lease time.Duration) (*drover.Client[pgx.Tx], *runLog) {
	t.Helper()
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	f := twoShards(t, url1, logger)
	r := &runLog{runs: map[int64][]time.Time{}}
	workers := drover.NewWorkers()
	drover.AddWorker(workers, drover.WorkFunc(func(ctx context.Context, j *drover.Job[noop]) error {
		r.add(j.ID)
		select {
		case <-time.After(work):
		case <-ctx.Done():
		}
		return nil
	}))
	client, err := drover.NewClient(f, &drover.Config{Workers: workers, Logger: logger,
		Queues:        map[string]drover.QueueConfig{drover.DefaultQueue: {MaxWorkers: 20}},
		LeaseDuration: lease, LeaderTTL: 3 * time.Second, PollInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = client.Stop(sctx)
	})
	return client, r
}

// twoShards migrates a fleet of two shards, shard 0 on the test cluster
// and shard 1 at url1.
func twoShards(t *testing.T, url1 string, logger *slog.Logger) *droverfleet.Driver[pgx.Tx] {
	t.Helper()
	ctx := context.Background()
	d0, err := droverpg.New(testdb.NewPool(t), droverpg.WithSchema(testdb.NewSchema(t)))
	if err != nil {
		t.Fatal(err)
	}
	d1, err := droverpg.New(testdb.PoolAt(t, url1, 10))
	if err != nil {
		t.Fatal(err)
	}
	f, err := droverfleet.New(ctx, []droverdriver.TxDriver[pgx.Tx]{d0, d1}, droverfleet.Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drover.Migrate(ctx, f); err != nil {
		t.Fatal(err)
	}
	return f
}

// shardServer starts a PostgreSQL server of its own for a shard that a
// test stops and starts, and returns its URL for the fleet, with a short
// connect timeout so that calls to it fail fast while it is stopped.
func shardServer(t *testing.T) (*pgcluster.Cluster, string) {
	t.Helper()
	c, err := pgcluster.Start(context.Background(), pgcluster.Options{Settings: map[string]string{"fsync": "off"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	return c, c.URL() + "&connect_timeout=2"
}

// TestShardFailover: one shard of two is a primary with a synchronous
// standby under pg_auto_failover; its primary's machine is killed while
// producers insert and workers run jobs on both shards. The other shard's
// jobs keep running through the failover, the failed-over shard's resume
// on its new primary, and no acknowledged job is lost; only jobs of the
// failed-over shard may run twice (after their lease expired there).
func TestShardFailover(t *testing.T) {
	t.Parallel()
	set := pgha.StartTest(t, pgha.Options{})
	ctx := context.Background()
	client, r := workingFleet(t, set.URL(), 5*time.Millisecond, 3*time.Second)

	var (
		mu    sync.Mutex
		acked []int64
		stop  = make(chan struct{})
		load  sync.WaitGroup
	)
	for range 2 {
		load.Go(func() {
			batch := make([]drover.InsertManyParams, 5)
			for i := range batch {
				batch[i] = drover.InsertManyParams{Args: noop{}}
			}
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
				ids, err := client.InsertMany(ictx, batch)
				cancel()
				if err == nil {
					mu.Lock()
					acked = append(acked, ids...)
					mu.Unlock()
				}
			}
		})
	}
	ackedOn := func(shard int) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, id := range acked {
			if droverdriver.ShardOf(id) == shard {
				n++
			}
		}
		return n
	}
	waitfor.Cond(t, "100 jobs acknowledged on each shard", func() bool { return ackedOn(0) >= 100 && ackedOn(1) >= 100 })

	fo, err := set.FailPrimary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	during := r.ranBetween(0, fo.Killed, fo.Killed.Add(fo.Writable))
	after0, after1 := ackedOn(0), ackedOn(1)
	waitfor.Cond(t, "100 more jobs acknowledged on each shard after the failover", func() bool {
		return ackedOn(0) >= after0+100 && ackedOn(1) >= after1+100
	})
	close(stop)
	load.Wait()

	mu.Lock()
	ids := acked
	mu.Unlock()
	if !waitfor.Within(2*time.Minute, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, id := range ids {
			if len(r.runs[id]) == 0 {
				return false
			}
		}
		return true
	}) {
		t.Fatal("acknowledged jobs did not all run within 2 minutes of the failover")
	}
	waitfor.Cond(t, "every acknowledged job completed", func() bool {
		for _, id := range ids {
			j, err := client.JobGet(ctx, id)
			if err != nil || j.State != drovertype.JobStateCompleted {
				return false
			}
		}
		return true
	})
	twice := 0
	r.mu.Lock()
	for id, ts := range r.runs {
		if len(ts) > 1 {
			if droverdriver.ShardOf(id) == 0 {
				t.Errorf("job %d of the shard that stayed up ran %d times", id, len(ts))
			}
			twice++
		}
	}
	r.mu.Unlock()
	if during == 0 {
		t.Errorf("no job of shard 0 ran during shard 1's failover (%s)", fo.Writable)
	}
	first := time.Duration(0)
	r.mu.Lock()
	for id, ts := range r.runs {
		for _, at := range ts {
			if droverdriver.ShardOf(id) == 1 && at.After(fo.Killed) && (first == 0 || at.Sub(fo.Killed) < first) {
				first = at.Sub(fo.Killed)
			}
		}
	}
	r.mu.Unlock()
	t.Logf("shard 1 failed over %s -> %s, writable %s after the kill, its first job ran %s after it; shard 0 ran %d jobs meanwhile; "+
		"%d acknowledged jobs, 0 lost, %d of shard 1 ran twice after their lease expired",
		fo.From.Name, fo.To.Name, fo.Writable.Round(time.Millisecond), first.Round(time.Millisecond), during, len(ids), twice)
}
