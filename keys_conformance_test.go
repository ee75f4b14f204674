package drover_test

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverfleet"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/engine"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// Conformance tests for what keys do beyond order and limits (issue 7):
// retries of finished keyed jobs, per-key rate limits, fairness across keys
// and catch-up of periodic jobs. Every check reads the store.

// TestJobRetryKeyedJobRejoinsKey retries a finished keyed job while its
// key is full: it waits as blocked behind the running job, then runs
// before the key's job that was blocked before it (its ID is older), one
// at a time. Retried while the key has room, it is available at once.
func TestJobRetryKeyedJobRejoinsKey(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 4)
		b.start(t)
		ctx := context.Background()
		key := &drover.InsertOpts{Key: "k"}
		first := b.insert(t, scriptArgs{Tag: "k"}, key)
		waitState(t, b.client, first, drovertype.JobStateCompleted)
		holder := b.insert(t, scriptArgs{Tag: "k", Block: true}, key)
		waitState(t, b.client, holder, drovertype.JobStateRunning)
		behind := b.insert(t, scriptArgs{Tag: "k"}, key)

		row, err := b.client.JobRetry(ctx, first)
		if err != nil {
			t.Fatal(err)
		}
		if row.State != drovertype.JobStateBlocked || row.Key != "k" {
			t.Fatalf("retried while the key is full: %s with key %q, want blocked in key k", row.State, row.Key)
		}
		assertStates(t, b.client, map[int64]drovertype.JobState{
			first: drovertype.JobStateBlocked, holder: drovertype.JobStateRunning, behind: drovertype.JobStateBlocked,
		})

		if _, err := b.client.JobCancel(ctx, holder); err != nil {
			t.Fatal(err)
		}
		waitState(t, b.client, behind, drovertype.JobStateCompleted)
		// From the store: the retried job ran after the holder ended and
		// before the job behind it started, and the key ran one at a time.
		assertKeyOrder(t, b.client, first, behind)
		h, f := getJob(t, b.client, holder), getJob(t, b.client, first)
		if h.State != drovertype.JobStateCancelled || f.AttemptedAt.Before(*h.FinalizedAt) {
			t.Fatalf("holder %s, finished at %s; retried job started at %s, want after the holder was cancelled",
				h.State, h.FinalizedAt, f.AttemptedAt)
		}
		if f.State != drovertype.JobStateCompleted || f.Attempt != 2 || f.Key != "k" {
			t.Fatalf("retried job = %s, attempt %d, key %q; want completed on attempt 2 in key k", f.State, f.Attempt, f.Key)
		}
		var keyed []*drovertype.JobRow
		for _, id := range []int64{holder, first, behind} {
			keyed = append(keyed, getJob(t, b.client, id))
		}
		if got := maxOverlap(t, keyed); got != 1 {
			t.Fatalf("%d jobs of key k ran at once, limit 1", got)
		}

		// The key is idle now: a retry makes the job available at once.
		row, err = b.client.JobRetry(ctx, behind)
		if err != nil {
			t.Fatal(err)
		}
		if row.State != drovertype.JobStateAvailable || row.Key != "k" {
			t.Fatalf("retried while the key is idle: %s with key %q, want available in key k", row.State, row.Key)
		}
		row = waitState(t, b.client, behind, drovertype.JobStateCompleted)
		if row.Attempt != 2 {
			t.Fatalf("attempt = %d, want 2", row.Attempt)
		}
	})
}

// TestJobRetryRefusesSettledFlowJobs: a finished batch member and a
// finished workflow step with dependants cannot be retried (their end was
// counted and settled) and stay as they were; a step without dependants
// can.
func TestJobRetryRefusesSettledFlowJobs(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		rec := newRecorder()
		b := setup(t, s, 4, flowWorkers(rec))
		b.start(t)
		ctx := context.Background()
		batch, err := b.client.InsertBatch(ctx, []drover.InsertManyParams{{Args: stepArgs{N: 1}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		chain, err := b.client.InsertChain(ctx, []drover.InsertManyParams{{Args: stepArgs{N: 2}}, {Args: stepArgs{N: 3, Parent: true}}})
		if err != nil {
			t.Fatal(err)
		}
		member, parent, leaf := batch.JobIDs[0], chain[0], chain[1]
		for _, id := range []int64{member, parent, leaf} {
			waitState(t, b.client, id, drovertype.JobStateCompleted)
		}
		cases := []struct {
			name string
			id   int64
			want string
		}{
			{"batch member", member, "batch member"},
			{"step with dependants", parent, "dependants"},
		}
		for _, tc := range cases {
			_, err := b.client.JobRetry(ctx, tc.id)
			if !errors.Is(err, drover.ErrNotRetryable) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%s: error %v, want ErrNotRetryable naming %q", tc.name, err, tc.want)
			}
			if row := getJob(t, b.client, tc.id); row.State != drovertype.JobStateCompleted || row.Attempt != 1 {
				t.Fatalf("%s after the refused retry: %s, attempt %d", tc.name, row.State, row.Attempt)
			}
		}
		prog, err := b.client.BatchGet(ctx, batch.ID)
		if err != nil {
			t.Fatal(err)
		}
		if prog.Completed != 1 || !prog.Finished() {
			t.Fatalf("batch after the refused retry = %+v", prog)
		}
		if _, err := b.client.JobRetry(ctx, leaf); err != nil {
			t.Fatal(err)
		}
		if row := waitState(t, b.client, leaf, drovertype.JobStateCompleted); row.Attempt != 2 {
			t.Fatalf("leaf step attempt = %d, want 2", row.Attempt)
		}
	})
}

// TestKeyRateLimit runs three clients on one key limited to 5 starts per
// 500 ms (and 2 at once) and another key without a rate. From the stored
// attempted_at times: a token bucket of 5 refilled at 5 per 500 ms gives
// at most 10 jobs their tokens in any 500 ms (a full bucket and its
// refill), and the jobs that got theirs earlier but start late, claimable
// meanwhile, are at most the key limit: no 500 ms may hold more than 12
// starts. 30 jobs need at least 2.5 s from their insert, when the bucket
// starts full (5 at once, then one every 100 ms).
// The key without a rate, inserted after, finished before the rated key's
// last job started.
func TestKeyRateLimit(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		const jobs, rate, limit, period = 30, 5, 2, 500 * time.Millisecond
		b := setup(t, s, 10)
		ctx := context.Background()
		var rated, free []drover.InsertManyParams
		for range jobs {
			rated = append(rated, drover.InsertManyParams{Args: scriptArgs{Tag: "rated"},
				Opts: &drover.InsertOpts{Key: "rated", KeyLimit: limit, KeyRate: rate, KeyRatePeriod: period}})
			free = append(free, drover.InsertManyParams{Args: scriptArgs{Tag: "free"},
				Opts: &drover.InsertOpts{Key: "free", KeyLimit: 10}})
		}
		for _, p := range [][]drover.InsertManyParams{rated, free} {
			if _, err := b.client.InsertMany(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		b.start(t)
		startFleet(t, b, 2, 10)
		waitAllFinished(t, b.client, 2*jobs)
		groups := byTag(t, allJobs(t, b.client))
		starts := startTimes(groups["rated"])
		if n, from := busiestWindow(starts, period); n > 2*rate+limit {
			t.Fatalf("%d jobs of the rated key started within %s of %s, more than %d", n, period, from, 2*rate+limit)
		}
		// The bucket starts full when the jobs are inserted and the jobs the
		// key limit lets run at once spend their tokens then: a client that
		// starts later finds it refilled, so the bound holds from the insert,
		// not from the first start.
		inserted := groups["rated"][0].CreatedAt
		for _, j := range groups["rated"] {
			if j.CreatedAt.Before(inserted) {
				inserted = j.CreatedAt
			}
		}
		if span := starts[len(starts)-1].Sub(inserted); span < 2400*time.Millisecond {
			t.Fatalf("%d rated jobs inserted at %s all started within %s, faster than 5 per 500 ms allows", jobs, inserted, span)
		}
		last := starts[len(starts)-1]
		for _, j := range groups["free"] {
			if !j.FinalizedAt.Before(last) {
				t.Fatalf("job %d of the key without a rate finished at %s, not before the rated key's last start at %s",
					j.ID, j.FinalizedAt, last)
			}
		}
	})
}

// TestKeyRateCountsRetries: ten jobs of a key limited to 5 starts per
// 500 ms each fail once and are retried after 10 ms. Twenty starts need at
// least 1.5 s (5 at once, then one every 100 ms); if retries did not spend
// tokens, the ten first starts would take 0.5 s and the retries follow at
// once. The store shows every job completed on its second attempt, the
// last one starting at least 1.4 s after the first insert.
func TestKeyRateCountsRetries(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		const jobs = 10
		b := setup(t, s, 10)
		var params []drover.InsertManyParams
		for range jobs {
			params = append(params, drover.InsertManyParams{Args: scriptArgs{Tag: "rated", Fail: 1},
				Opts: &drover.InsertOpts{Key: "rated", KeyLimit: jobs, KeyRate: 5, KeyRatePeriod: 500 * time.Millisecond}})
		}
		if _, err := b.client.InsertMany(context.Background(), params); err != nil {
			t.Fatal(err)
		}
		b.start(t)
		waitAllFinished(t, b.client, jobs)
		all := allJobs(t, b.client)
		first, last := all[0].CreatedAt, all[0].CreatedAt
		for _, j := range all {
			if j.State != drovertype.JobStateCompleted || j.Attempt != 2 {
				t.Fatalf("job %d is %s after %d attempts, want completed on the second", j.ID, j.State, j.Attempt)
			}
			if j.AttemptedAt.After(last) {
				last = *j.AttemptedAt
			}
		}
		if span := last.Sub(first); span < 1400*time.Millisecond {
			t.Fatalf("20 starts of the rated key took %s from the first insert, faster than 5 per 500 ms allows", span)
		}
	})
}

// TestKeyRateCountsRescues: a job of a key allowed one start per ten
// minutes is claimed by a worker that dies; its rescue makes it wait for
// its key's next token (twenty minutes away: the key's second job holds
// the first), where an uncounted restart would be claimable at once.
func TestKeyRateCountsRescues(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 1)
		ctx := context.Background()
		opts := &drover.InsertOpts{Key: "k", KeyLimit: 2, KeyRate: 1, KeyRatePeriod: 10 * time.Minute}
		first := b.insert(t, noopArgs{}, opts)
		second := b.insert(t, noopArgs{}, opts)
		assertStates(t, b.client, map[int64]drovertype.JobState{first: drovertype.JobStateAvailable, second: drovertype.JobStateScheduled})
		claimed, err := b.d.Executor().JobClaim(ctx, droverdriver.ClaimParams{Queue: drover.DefaultQueue, Max: 10, Owner: "dead-worker", Lease: time.Millisecond})
		if err != nil || len(claimed) != 1 || claimed[0].ID != first {
			t.Fatalf("claim = %v, %v", claimed, err)
		}
		now := time.Now()
		if n, err := engine.Rescue(ctx, b.d.Executor(), droverdriver.RescueParams{Now: now.Add(time.Second), Limit: 10, Error: []byte(`{}`)}); err != nil || n != 1 {
			t.Fatalf("rescue = %d, %v", n, err)
		}
		row := getJob(t, b.client, first)
		if row.State != drovertype.JobStateRetryable || row.RunAt.Before(now.Add(19*time.Minute)) {
			t.Fatalf("rescued job is %s to run at %s, want retryable about 20 minutes after %s", row.State, row.RunAt, now)
		}
	})
}

func TestKeyRateRejectsBadInput(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 1)
		cases := []struct {
			name string
			opts drover.InsertOpts
			want string
		}{
			{"rate without key", drover.InsertOpts{KeyRate: 5, KeyRatePeriod: time.Second}, "key rate 5: set Key too"},
			{"rate without period", drover.InsertOpts{Key: "k", KeyRate: 5}, "key rate period 0s"},
			{"period without rate", drover.InsertOpts{Key: "k", KeyRatePeriod: time.Second}, "set KeyRate too"},
			{"negative rate", drover.InsertOpts{Key: "k", KeyRate: -1, KeyRatePeriod: time.Second}, "key rate -1"},
			{"rate too high", drover.InsertOpts{Key: "k", KeyRate: drover.MaxKeyRate + 1, KeyRatePeriod: time.Second}, "key rate 1000001"},
			{"sub-millisecond period", drover.InsertOpts{Key: "k", KeyRate: 1, KeyRatePeriod: 1500 * time.Microsecond}, "whole number of milliseconds"},
		}
		for _, tc := range cases {
			_, err := b.client.InsertMany(context.Background(), []drover.InsertManyParams{
				{Args: noopArgs{}}, {Args: noopArgs{}, Opts: &tc.opts},
			})
			if !errors.Is(err, drover.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: error %v, want ErrInvalid mentioning %q", tc.name, err, tc.want)
			}
		}
		if jobs := allJobs(t, b.client); len(jobs) != 0 {
			t.Fatalf("%d jobs stored after rejected inserts", len(jobs))
		}
	})
}

// keyRateBuckets counts the stored rate buckets (migration 005's
// key_rates), which no API shows.
func keyRateBuckets(t *testing.T, d droverdriver.Driver) int {
	t.Helper()
	var n int
	var err error
	switch d := d.(type) {
	case *droverfleet.Driver[pgx.Tx]:
		for _, s := range d.Shards() {
			n += keyRateBuckets(t, d.Shard(s.Index))
		}
	case *droverpg.Driver:
		table := pgx.Identifier{d.Schema(), "key_rates"}.Sanitize()
		err = d.Pool().QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n)
	case *droversqlite.Driver:
		table := `"` + d.Schema() + `_key_rates"`
		err = d.DB().QueryRowContext(context.Background(), "SELECT count(*) FROM "+table).Scan(&n)
	default:
		t.Fatalf("no bucket count for %T", d)
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestKeyRateBucketPruned: a key's rate bucket stays while the key has
// jobs and goes once the key is idle and its bucket full again, so the
// table follows the keys in use; a later insert with a rate starts anew.
func TestKeyRateBucketPruned(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 4)
		opts := &drover.InsertOpts{Key: "k", KeyRate: 2, KeyRatePeriod: 200 * time.Millisecond}
		first := b.insert(t, scriptArgs{Tag: "k"}, opts)
		if n := keyRateBuckets(t, b.d); n != 1 {
			t.Fatalf("%d buckets after a rated insert, want 1", n)
		}
		b.start(t)
		waitState(t, b.client, first, drovertype.JobStateCompleted)
		waitfor.Cond(t, "the idle key's bucket to be deleted", func() bool { return keyRateBuckets(t, b.d) == 0 })
		again := b.insert(t, scriptArgs{Tag: "k"}, opts)
		waitState(t, b.client, again, drovertype.JobStateCompleted)
	})
}

// TestKeyLimitIsFairAcrossKeys floods one key with 2,000 jobs, then
// inserts five jobs of another key, both with KeyLimit 2, for one client
// of four workers. Claims take the oldest claimable jobs first, so without
// the limit the whole flood would start before the late key's jobs; with
// it, the flood has at most two claimable jobs at any time, and the stored
// attempted_at order shows the late key's five jobs all started among the
// first few dozen starts after their insert.
func TestKeyLimitIsFairAcrossKeys(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		const flood, late, limit = 2000, 5, 2
		b := setup(t, s, 4)
		ctx := context.Background()
		var params []drover.InsertManyParams
		for range flood {
			params = append(params, drover.InsertManyParams{Args: scriptArgs{Tag: "flood"},
				Opts: &drover.InsertOpts{Key: "flood", KeyLimit: limit}})
		}
		if _, err := b.client.InsertMany(ctx, params); err != nil {
			t.Fatal(err)
		}
		b.start(t)
		// Let the flood get going before the late key arrives.
		waitfor.Cond(t, "the flood to start", func() bool {
			counts, err := b.client.JobCountByState(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			return counts[drovertype.JobStateCompleted] >= 20
		})
		var lateIDs []int64
		for range late {
			lateIDs = append(lateIDs, b.insert(t, scriptArgs{Tag: "late"}, &drover.InsertOpts{Key: "late", KeyLimit: limit}))
		}
		for _, id := range lateIDs {
			waitState(t, b.client, id, drovertype.JobStateCompleted)
		}
		inserted := getJob(t, b.client, lateIDs[0]).CreatedAt
		type start struct {
			at   time.Time
			late bool
		}
		var starts []start
		for tag, jobs := range byTag(t, allJobs(t, b.client)) {
			for _, j := range jobs {
				if j.AttemptedAt != nil && !j.AttemptedAt.Before(inserted) {
					starts = append(starts, start{*j.AttemptedAt, tag == "late"})
				}
			}
		}
		sort.Slice(starts, func(i, k int) bool { return starts[i].at.Before(starts[k].at) })
		seen, floodStarts := 0, 0
		for _, st := range starts {
			if st.late {
				if seen++; seen == late {
					break
				}
			} else {
				floodStarts++
			}
		}
		// The late key runs two at a time beside the flood's two: about as
		// many flood jobs start meanwhile as late ones. 50 leaves room for
		// scheduling noise and is still 40 times less than the flood.
		t.Logf("%d flood jobs started between the late key's insert and its last start", floodStarts)
		if seen != late || floodStarts > 50 {
			t.Fatalf("%d flood jobs started after the late key's insert and before its last of %d jobs (found %d)",
				floodStarts, late, seen)
		}
	})
}

// TestPeriodicCatchUp stores the last ticks a previous leader left (hours
// ago, which the test cannot wait for) and starts a client: it inserts the
// latest MissedTicks ticks missed since then, each keyed and tagged with
// its tick, for an @every schedule and a cron expression, and nothing for
// a job without MissedTicks; the store then holds the new last ticks.
func TestPeriodicCatchUp(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		job := func(name, schedule string, missed int) *drover.PeriodicJob {
			return &drover.PeriodicJob{Name: name, Schedule: schedule, MissedTicks: missed,
				Construct: func() (drover.Args, *drover.InsertOpts) { return scriptArgs{Tag: name}, nil }}
		}
		b := setup(t, s, 4, func(cfg *drover.Config) {
			cfg.PeriodicJobs = []*drover.PeriodicJob{
				job("every", "@every 1h", 3), job("hourly", "0 * * * *", 2), job("skip", "@every 1h", 0),
			}
		})
		now := time.Now()
		every := now.Truncate(time.Second).Add(-5*time.Hour - time.Minute)
		hourly := now.Add(-10 * time.Hour)
		if err := b.d.Executor().PeriodicTicksRecord(ctx, []string{"every", "hourly", "skip"}, []time.Time{every, hourly, every}); err != nil {
			t.Fatal(err)
		}
		b.start(t)
		waitAllFinished(t, b.client, 5)

		local := now.In(time.Local)
		top := time.Date(local.Year(), local.Month(), local.Day(), local.Hour(), 0, 0, 0, time.Local)
		want := map[string][]time.Time{
			"every":  {every.Add(3 * time.Hour), every.Add(4 * time.Hour), every.Add(5 * time.Hour)},
			"hourly": {top.Add(-time.Hour), top},
		}
		got := map[string][]time.Time{}
		for _, j := range allJobs(t, b.client) {
			var m struct {
				Periodic string    `json:"periodic"`
				Tick     time.Time `json:"tick"`
			}
			if err := json.Unmarshal(j.Metadata, &m); err != nil {
				t.Fatal(err)
			}
			got[m.Periodic] = append(got[m.Periodic], m.Tick)
		}
		for name, ticks := range got {
			sort.Slice(ticks, func(i, k int) bool { return ticks[i].Before(ticks[k]) })
			if len(ticks) != len(want[name]) {
				t.Fatalf("%s: inserted ticks %v, want %v", name, ticks, want[name])
			}
			for i := range ticks {
				if !ticks[i].Equal(want[name][i]) {
					t.Fatalf("%s: inserted ticks %v, want %v", name, ticks, want[name])
				}
			}
		}
		if len(got) != 2 {
			t.Fatalf("periodic jobs inserted: %v, want every and hourly only", got)
		}
		last, err := b.d.Executor().PeriodicTicks(ctx, []string{"every", "hourly", "skip"})
		if err != nil {
			t.Fatal(err)
		}
		for name, w := range map[string]time.Time{"every": every.Add(5 * time.Hour), "hourly": top, "skip": every} {
			if !last[name].Equal(w) {
				t.Fatalf("stored last tick of %s = %s, want %s", name, last[name], w)
			}
		}
	})
}

func TestPeriodicMissedTicksRejected(t *testing.T) {
	d := sqliteStore.open(t)
	for _, missed := range []int{-1, drover.MaxMissedTicks + 1} {
		_, err := drover.NewClient(d.(*droversqlite.Driver), &drover.Config{PeriodicJobs: []*drover.PeriodicJob{{
			Name: "p", Schedule: "@hourly", MissedTicks: missed,
			Construct: func() (drover.Args, *drover.InsertOpts) { return noopArgs{}, nil },
		}}})
		if !errors.Is(err, drover.ErrInvalid) || !strings.Contains(err.Error(), "MissedTicks") {
			t.Errorf("MissedTicks %d: error %v, want ErrInvalid naming MissedTicks", missed, err)
		}
	}
}
