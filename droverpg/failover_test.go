package droverpg_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/testkit/pgha"
	"github.com/droverhq/drover/internal/testkit/testdb"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// The failover tests run Drover on a pg_auto_failover set (internal/testkit/pgha)
// through its multi-host URL and kill the primary's machine. They start a
// set each, so they run in parallel, and are skipped unless
// DROVER_TEST_FAILOVER is set (CI sets it).

type failoverArgs struct {
	Ms int `json:"ms"`
}

func (failoverArgs) Kind() string { return "test.failover" }

// runs counts each job's runs as the workers saw them. The store counts
// attempts, but a claim a failover lost leaves no attempt behind: only
// the workers know that its job ran.
type runs struct {
	mu sync.Mutex
	n  map[int64]int
}

func (r *runs) add(id int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n[id]++
}

func (r *runs) of(id int64) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[id]
}

// failoverSetup starts a set with opts and a client on it whose workers
// count their runs, with short leases (they expire during a failover) and
// the given poll interval.
func failoverSetup(t *testing.T, opts pgha.Options, queues map[string]drover.QueueConfig, poll time.Duration) (*pgha.Set, *drover.Client[pgx.Tx], *runs) {
	t.Helper()
	ctx := context.Background()
	opts.Dir, opts.Settings = t.TempDir(), map[string]string{"fsync": "off"}
	set := pgha.StartTest(t, opts)
	d, err := droverpg.New(testdb.PoolAt(t, set.URL(), 10))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if _, err := drover.Migrate(ctx, d); err != nil {
		t.Fatal(err)
	}
	r := &runs{n: map[int64]int{}}
	workers := drover.NewWorkers()
	drover.AddWorker(workers, drover.WorkFunc(func(ctx context.Context, j *drover.Job[failoverArgs]) error {
		r.add(j.ID)
		select {
		case <-time.After(time.Duration(j.Args.Ms) * time.Millisecond):
		case <-ctx.Done():
		}
		return nil
	}))
	client, err := drover.NewClient(d, &drover.Config{
		Queues:        queues,
		Workers:       workers,
		Logger:        slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
		LeaseDuration: 3 * time.Second,
		PollInterval:  poll,
		LeaderTTL:     3 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := client.Stop(stopCtx); err != nil {
			t.Error(err)
		}
	})
	return set, client, r
}

// testLog writes the client's log lines (outages and recoveries) to the
// test's log.
type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// TestFollowsFailover kills the primary's machine while producers insert
// and workers run jobs, and checks that every part of the client follows
// the multi-host URL to the new primary: no acknowledged insert is lost,
// every job completes (producers and the completer), no job runs twice
// but those whose lease expired, the leader's rescuer returns a job
// abandoned before the failover (leader election and maintenance), a job
// longer than two leases completes in one attempt (heartbeat), and an
// insert after the failover is claimed at once, with polls ten minutes
// apart (the notifier's LISTEN connection).
func TestFollowsFailover(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set, client, r := failoverSetup(t, pgha.Options{}, map[string]drover.QueueConfig{drover.DefaultQueue: {MaxWorkers: 20}}, 10*time.Minute)

	// The load: producers insert small batches until stopped, keeping
	// the IDs of the inserts that were acknowledged.
	var (
		mu       sync.Mutex
		acked    []int64
		failed   atomic.Int64
		stop     = make(chan struct{})
		loadDone sync.WaitGroup
	)
	for range 2 {
		loadDone.Add(1)
		go func() {
			defer loadDone.Done()
			batch := make([]drover.InsertManyParams, 5)
			for i := range batch {
				batch[i] = drover.InsertManyParams{Args: failoverArgs{Ms: 5}}
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
				if err != nil {
					failed.Add(1)
					continue
				}
				mu.Lock()
				acked = append(acked, ids...)
				mu.Unlock()
			}
		}()
	}
	ackedNow := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	waitCompleted(t, client, 300)

	// A job a remote worker claims just before the failover and never
	// finishes: only a leader's rescuer on the new primary can return it.
	abandoned, err := client.Insert(ctx, failoverArgs{}, &drover.InsertOpts{Queue: "abandoned"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := client.Remote().Claim(ctx, drover.ClaimParams{Queue: "abandoned", Max: 1, Owner: "gone", Lease: 2 * time.Second}); err != nil || len(got) != 1 {
		t.Fatalf("claiming the abandoned job: %v, %v", got, err)
	}

	f, err := set.FailPrimary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := ackedNow()
	waitfor.Cond(t, "300 inserts acknowledged after the failover", func() bool { return ackedNow() >= before+300 })
	close(stop)
	loadDone.Wait()

	// Heartbeat: a job of two and a half leases completes in one attempt
	// only if its leases are extended on the new primary.
	long, err := client.Insert(ctx, failoverArgs{Ms: 7500}, nil)
	if err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	ids := acked
	mu.Unlock()
	var counts map[drovertype.JobState]int64
	if !waitfor.Within(2*time.Minute, func() bool {
		counts, err = client.JobCountByState(ctx, drover.DefaultQueue)
		if err != nil {
			return false
		}
		j, err := client.JobGet(ctx, long.ID)
		if err != nil {
			return false
		}
		left := counts[drovertype.JobStateAvailable] + counts[drovertype.JobStateRunning]
		if !j.State.Finished() {
			left-- // the long job may still run
		}
		return left == 0
	}) {
		t.Fatalf("jobs not done 2 minutes after the failover: %v (last error %v)", counts, err)
	}

	// Notifier: once the client listens on the new primary, an insert
	// wakes its producer; the next poll is ten minutes away.
	waitfor.Cond(t, "the client's LISTEN connection on the new primary", func() bool {
		conn, err := pgx.Connect(ctx, set.NodeURL(f.To))
		if err != nil {
			return false
		}
		defer conn.Close(ctx)
		var n int
		err = conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'LISTEN %'").Scan(&n)
		return err == nil && n > 0
	})
	probe, err := client.Insert(ctx, failoverArgs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitJob(t, client, probe.ID, "the job inserted after the failover to complete (woken by a notification)", func(j *drovertype.JobRow) bool {
		return j.State == drovertype.JobStateCompleted
	})
	waitJob(t, client, long.ID, "the job longer than two leases to complete", func(j *drovertype.JobRow) bool {
		return j.State.Finished()
	})
	if j, err := client.JobGet(ctx, long.ID); err != nil || j.State != drovertype.JobStateCompleted || j.Attempt != 1 || len(j.Errors) != 0 {
		t.Fatalf("the long job: %+v, %v; want completed in its first attempt (its heartbeats reached the new primary)", j, err)
	}
	waitJob(t, client, abandoned.ID, "the abandoned job to be rescued on the new primary", func(j *drovertype.JobRow) bool {
		return j.State == drovertype.JobStateAvailable && len(j.Errors) == 1 && strings.HasPrefix(j.Errors[0].Error, "lease expired")
	})

	dup, firstClaim := checkJobs(t, client, drover.DefaultQueue, ids, r, f.Killed)
	t.Logf("failover %s -> %s: the URL took writes %s after the kill, the client's first claim on the new primary came %s after it; "+
		"%d acknowledged jobs, 0 lost, %d failed inserts, %d jobs ran twice after their lease expired",
		f.From.Name, f.To.Name, f.Writable.Round(time.Millisecond), firstClaim.Round(time.Millisecond),
		len(ids), failed.Load(), dup)
}

// TestFailoverKeepsStrictClaims kills the primary once claims of a
// strict-order queue were made that its standby did not receive (the
// standby hangs and its replication connection is cut, as behind a
// partition). A strict claim commits without waiting for the disk; had it
// not waited for the standby either, its jobs, running on the workers,
// would be waiting again on the new primary and run a second time at
// once, with no lease expired to explain it.
func TestFailoverKeepsStrictClaims(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set, client, r := failoverSetup(t, pgha.Options{UnhealthyAfter: 10 * time.Second},
		map[string]drover.QueueConfig{"strict": {MaxWorkers: 10}}, 100*time.Millisecond)
	if _, err := client.QueueSetStrictOrder(ctx, "strict", 5); err != nil {
		t.Fatal(err)
	}
	standby, err := set.Standby(ctx)
	if err != nil {
		t.Fatal(err)
	}
	primary, err := set.Primary(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// The jobs fall due 3 s from now, when a poll finds them: inserts wait
	// for the standby, which is about to hang, and their claims must come
	// after it hangs. The hang must stay short of the 10 s after which the
	// monitor would count the standby out, and no failover could promote
	// it.
	due := time.Now().Add(3 * time.Second)
	params := make([]drover.InsertManyParams, 100)
	for i := range params {
		params[i] = drover.InsertManyParams{Args: failoverArgs{Ms: 10}, Opts: &drover.InsertOpts{Queue: "strict", RunAt: due}}
	}
	ids, err := client.InsertMany(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	resume, err := set.Pause(standby)
	if err != nil {
		t.Fatal(err)
	}
	resumed := false
	defer func() {
		if !resumed {
			_ = resume()
		}
	}()
	paused := time.Now()
	// The WAL the primary has sent is in the hung standby's socket, where
	// it would still be read after the hang; cutting the connection makes
	// sure nothing written from now on reaches the standby, as behind a
	// partition.
	var cut int
	if query(t, set.NodeURL(primary), "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_replication", &cut); cut != 1 {
		t.Fatalf("cut %d replication connections, want the standby's one", cut)
	}
	waitfor.Cond(t, "the primary's replication connection to close", func() bool {
		var n int
		query(t, set.NodeURL(primary), "SELECT count(*) FROM pg_stat_replication", &n)
		return n == 0
	})
	if now := time.Now(); !now.Before(due) {
		t.Fatalf("inserting and cutting off the standby took until %s after the jobs fell due: too slow a machine for this test", now.Sub(due))
	}
	// Once the jobs are due, either a claim took them and they run (the
	// claim did not wait for the standby), or a claim waits for the
	// standby in the primary, holding back the claims after it: a strict
	// claim commits even when it finds nothing. The claim is known by its
	// leading comment (the statement is longer than what
	// pg_stat_activity keeps of it).
	waitfor.Cond(t, "the due jobs to run, or a strict claim to wait for the standby", func() bool {
		if time.Now().Before(due) {
			return false
		}
		if r.of(ids[0]) > 0 {
			return true
		}
		var n int
		query(t, set.NodeURL(primary), `SELECT count(*) FROM pg_stat_activity
			WHERE wait_event = 'SyncRep' AND query LIKE '-- The claim of a queue in strict order%'`, &n)
		return n > 0
	})
	t.Logf("jobs run before the kill: %d", r.of(ids[0]))
	if err := set.Kill(primary); err != nil {
		t.Fatal(err)
	}
	resumed = true
	if err := resume(); err != nil {
		t.Fatal(err)
	}
	t.Logf("the standby hung for %s", time.Since(paused).Round(time.Millisecond))
	if _, err := set.WaitWritable(ctx, primary); err != nil {
		t.Fatal(err)
	}
	var counts map[drovertype.JobState]int64
	if !waitfor.Within(2*time.Minute, func() bool {
		counts, err = client.JobCountByState(ctx, "strict")
		return err == nil && counts[drovertype.JobStateCompleted] == int64(len(ids))
	}) {
		t.Fatalf("strict jobs not all completed 2 minutes after the failover: %v (last error %v)", counts, err)
	}
	dup, _ := checkJobs(t, client, "strict", ids, r, time.Now())
	t.Logf("%d strict jobs completed; %d ran twice after their lease expired", len(ids), dup)
}

// waitJob waits until job id satisfies cond.
func waitJob(t *testing.T, c *drover.Client[pgx.Tx], id int64, what string, cond func(*drovertype.JobRow) bool) {
	t.Helper()
	var j *drovertype.JobRow
	var err error
	if !waitfor.Within(waitfor.Timeout, func() bool {
		j, err = c.JobGet(context.Background(), id)
		return err == nil && cond(j)
	}) {
		t.Fatalf("timed out waiting for %s: %+v (last error %v)", what, j, err)
	}
}

// checkJobs reads every job of queue and fails the test unless each
// acknowledged insert (ids) is there, every job completed, and no job ran
// more often than once plus its expired leases. It returns how many jobs
// ran again after an expired lease, and how long after killed the first
// claim on the new primary came.
func checkJobs(t *testing.T, c *drover.Client[pgx.Tx], queue string, ids []int64, r *runs, killed time.Time) (int, time.Duration) {
	t.Helper()
	ctx := context.Background()
	stored := map[int64]*drovertype.JobRow{}
	for after := int64(0); ; {
		page, err := c.JobList(ctx, drover.JobListParams{Queue: queue, After: after, Limit: 10_000})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range page {
			stored[j.ID] = j
		}
		if len(page) < 10_000 {
			break
		}
		after = page[len(page)-1].ID
	}
	lost := 0
	for _, id := range ids {
		if stored[id] == nil {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged jobs are not in the store", lost, len(ids))
	}
	dup, unexplained := 0, 0
	firstClaim := time.Duration(-1)
	for _, j := range stored {
		if j.State != drovertype.JobStateCompleted {
			t.Errorf("job %d is %s, want completed", j.ID, j.State)
		}
		expired := 0
		for _, e := range j.Errors {
			if strings.HasPrefix(e.Error, "lease expired") {
				expired++
			}
		}
		n := r.of(j.ID)
		if n > 1+expired {
			unexplained++
			if unexplained <= 5 {
				t.Errorf("job %d ran %d times, attempt %d, expired leases %d", j.ID, n, j.Attempt, expired)
			}
		}
		dup += min(expired, max(0, n-1))
		if j.AttemptedAt != nil && j.AttemptedAt.After(killed) {
			if d := j.AttemptedAt.Sub(killed); firstClaim < 0 || d < firstClaim {
				firstClaim = d
			}
		}
	}
	if unexplained > 0 {
		t.Errorf("%d jobs ran more often than once plus their expired leases", unexplained)
	}
	return dup, firstClaim
}

// query runs one statement on a fresh connection to url, scanning its row
// into dest.
func query(t *testing.T, url, sql string, dest ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, sql).Scan(dest...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
