package drover_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/drovertype"
)

// Conformance tests for keyed jobs (per-key FIFO and per-key limits) and
// unique jobs. Every check reads the store: which jobs finished, in which
// state, and the interval each ran in (attempted_at to finalized_at).

// allJobs pages through every job of the store.
func allJobs(t *testing.T, c client) []*drovertype.JobRow {
	t.Helper()
	var out []*drovertype.JobRow
	after := int64(0)
	for {
		page, err := c.JobList(context.Background(), drover.JobListParams{After: after, Limit: 10_000})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page...)
		if len(page) < 10_000 {
			return out
		}
		after = page[len(page)-1].ID
	}
}

// byTag groups finished script jobs by their args' tag (the tests tag each
// job with its key), each group in ID order, which is insert order.
// startTimes returns the jobs' attempted_at times, earliest first.
func startTimes(jobs []*drovertype.JobRow) []time.Time {
	starts := make([]time.Time, 0, len(jobs))
	for _, j := range jobs {
		starts = append(starts, *j.AttemptedAt)
	}
	sort.Slice(starts, func(i, k int) bool { return starts[i].Before(starts[k]) })
	return starts
}

// busiestWindow returns the most starts (sorted) that fall within period of
// one another, and the first of them: what a rate limit must bound.
func busiestWindow(starts []time.Time, period time.Duration) (n int, from time.Time) {
	for i := range starts {
		k := i
		for k < len(starts) && starts[k].Sub(starts[i]) < period {
			k++
		}
		if k-i > n {
			n, from = k-i, starts[i]
		}
	}
	return n, from
}

func byTag(t *testing.T, jobs []*drovertype.JobRow) map[string][]*drovertype.JobRow {
	t.Helper()
	groups := map[string][]*drovertype.JobRow{}
	for _, j := range jobs {
		var a struct{ Tag string }
		if err := json.Unmarshal(j.EncodedArgs, &a); err != nil {
			t.Fatal(err)
		}
		groups[a.Tag] = append(groups[a.Tag], j)
	}
	for _, g := range groups {
		sort.Slice(g, func(i, k int) bool { return g[i].ID < g[k].ID })
	}
	return groups
}

// maxOverlap returns the largest number of jobs whose stored run intervals
// [attempted_at, finalized_at] overlap at one instant. An interval that ends
// exactly when another starts does not overlap it: the store promotes the
// next job in the transaction that finishes the previous one.
func maxOverlap(t *testing.T, jobs []*drovertype.JobRow) int {
	t.Helper()
	type edge struct {
		at    int64
		delta int
	}
	var edges []edge
	for _, j := range jobs {
		if j.AttemptedAt == nil || j.FinalizedAt == nil {
			t.Fatalf("job %d is %s without a run interval", j.ID, j.State)
		}
		edges = append(edges, edge{j.AttemptedAt.UnixMicro(), 1}, edge{j.FinalizedAt.UnixMicro(), -1})
	}
	sort.Slice(edges, func(i, k int) bool {
		if edges[i].at != edges[k].at {
			return edges[i].at < edges[k].at
		}
		return edges[i].delta < edges[k].delta // ends before starts
	})
	n, most := 0, 0
	for _, e := range edges {
		n += e.delta
		most = max(most, n)
	}
	return most
}

// startFleet starts n more clients on b's store, sharing b's recorder.
func startFleet(t *testing.T, b *bundle, n, maxWorkers int) {
	t.Helper()
	for range n {
		startClient(t, b.s.newClient(t, b.d, fastConfig(b.rec, maxWorkers)))
	}
}

// waitAllFinished waits until want jobs of b's store completed or were
// discarded.
func waitAllFinished(t *testing.T, b *bundle, want int64) {
	t.Helper()
	b.s.untilWorked(t, fmt.Sprintf("%d jobs to finish", want), func() bool {
		counts, err := b.client.JobCountByState(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		return counts[drovertype.JobStateCompleted]+counts[drovertype.JobStateDiscarded] == want
	})
}

// TestKeyedFIFOUnderConcurrency inserts interleaved jobs of several keys,
// some failing once so that they are retried, and works them with three
// clients. Each key's jobs must have run one at a time, in insert order,
// retries included.
func TestKeyedFIFOUnderConcurrency(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		const keys, perKey = 8, 25
		b := setup(t, s, 8)
		ctx := context.Background()
		var params []drover.InsertManyParams
		for i := range perKey {
			for k := range keys {
				key := fmt.Sprintf("k%d", k)
				a := scriptArgs{Tag: key, Sleep: "1ms"}
				if i%7 == 3 {
					a.Fail = 1 // retried once: must keep its place in the key
				}
				params = append(params, drover.InsertManyParams{Args: a, Opts: &drover.InsertOpts{Key: key}})
			}
		}
		// Several calls, so that keys already have waiting jobs when more
		// arrive.
		for start := 0; start < len(params); start += 50 {
			if _, err := b.client.InsertMany(ctx, params[start:min(start+50, len(params))]); err != nil {
				t.Fatal(err)
			}
		}
		counts, err := b.client.JobCountByState(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if counts[drovertype.JobStateAvailable] != keys || counts[drovertype.JobStateBlocked] != keys*(perKey-1) {
			t.Fatalf("before work: %v, want %d available (one per key) and the rest blocked", counts, keys)
		}
		b.start(t)
		startFleet(t, b, 2, 8)
		waitAllFinished(t, b, keys*perKey)

		groups := byTag(t, allJobs(t, b.client))
		if len(groups) != keys {
			t.Fatalf("%d keys finished, want %d", len(groups), keys)
		}
		for key, jobs := range groups {
			for i, j := range jobs {
				if j.State != drovertype.JobStateCompleted {
					t.Fatalf("key %s: job %d is %s", key, j.ID, j.State)
				}
				if i > 0 && j.AttemptedAt.Before(*jobs[i-1].FinalizedAt) {
					t.Fatalf("key %s: job %d started at %s, before job %d ahead of it finished at %s",
						key, j.ID, j.AttemptedAt, jobs[i-1].ID, jobs[i-1].FinalizedAt)
				}
			}
		}
		// The workers saw each key's first attempts in insert order too.
		order, _ := b.rec.snapshot()
		seen := map[int64]bool{}
		last := map[string]int64{}
		keyOf := map[int64]string{}
		for key, jobs := range groups {
			for _, j := range jobs {
				keyOf[j.ID] = key
			}
		}
		for _, id := range order {
			if seen[id] {
				continue
			}
			seen[id] = true
			if k := keyOf[id]; id < last[k] {
				t.Fatalf("key %s: job %d started after job %d", k, id, last[k])
			}
			last[keyOf[id]] = id
		}
	})
}

// TestKeyLimitNeverExceeded gives every key a limit of two and checks from
// the stored run intervals that no key ever ran more than two at once.
func TestKeyLimitNeverExceeded(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		const keys, perKey, limit = 4, 30, 2
		b := setup(t, s, 16)
		var params []drover.InsertManyParams
		for i := range keys * perKey {
			key := fmt.Sprintf("c%d", i%keys)
			params = append(params, drover.InsertManyParams{
				Args: scriptArgs{Tag: key, Sleep: "5ms"},
				Opts: &drover.InsertOpts{Key: key, KeyLimit: limit},
			})
		}
		if _, err := b.client.InsertMany(context.Background(), params); err != nil {
			t.Fatal(err)
		}
		b.start(t)
		startFleet(t, b, 2, 16)
		waitAllFinished(t, b, keys*perKey)
		all := allJobs(t, b.client)
		for key, jobs := range byTag(t, all) {
			if got := maxOverlap(t, jobs); got > limit {
				t.Fatalf("key %s: %d jobs ran at once, limit %d", key, got, limit)
			}
		}
		// Across keys the work did run in parallel: the limit is per key.
		if got := maxOverlap(t, all); got <= limit {
			t.Fatalf("at most %d jobs ran at once across %d keys", got, keys)
		}
	})
}

// TestSlowKeyDoesNotStallOthers blocks the first job of one key forever and
// checks that every other key's jobs complete while that key's later jobs
// wait as blocked.
func TestSlowKeyDoesNotStallOthers(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 4)
		ctx := context.Background()
		stuck := b.insert(t, scriptArgs{Tag: "slow", Block: true}, &drover.InsertOpts{Key: "slow"})
		behind := b.insert(t, scriptArgs{Tag: "slow"}, &drover.InsertOpts{Key: "slow"})
		var params []drover.InsertManyParams
		for i := range 200 {
			key := fmt.Sprintf("fast%d", i%5)
			params = append(params, drover.InsertManyParams{Args: scriptArgs{Tag: key}, Opts: &drover.InsertOpts{Key: key}})
		}
		if _, err := b.client.InsertMany(ctx, params); err != nil {
			t.Fatal(err)
		}
		b.start(t)
		waitState(t, b.client, stuck, drovertype.JobStateRunning)
		s.untilWorked(t, "the other keys' jobs to complete", func() bool {
			counts, err := b.client.JobCountByState(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			return counts[drovertype.JobStateCompleted] == 200
		})
		if row, err := b.client.JobGet(ctx, behind); err != nil || row.State != drovertype.JobStateBlocked {
			t.Fatalf("job behind the stuck one: %+v, %v; want blocked", row, err)
		}
		// Cancelling the stuck job frees its key: the next one runs.
		if _, err := b.client.JobCancel(ctx, stuck); err != nil {
			t.Fatal(err)
		}
		waitState(t, b.client, stuck, drovertype.JobStateCancelled)
		waitState(t, b.client, behind, drovertype.JobStateCompleted)
	})
}

// TestKeyFreedWithoutResult cancels a keyed job that waits to run and a
// blocked one: no result ends them, but the cancel promotes their key from
// the stored row in its own transaction, so the last job is available at
// once, before any client (and so any leader's sweep) runs, then runs.
func TestKeyFreedWithoutResult(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 2)
		ctx := context.Background()
		opts := &drover.InsertOpts{Key: "k"}
		head := b.insert(t, scriptArgs{Tag: "k"}, opts)
		middle := b.insert(t, scriptArgs{Tag: "k"}, opts)
		last := b.insert(t, scriptArgs{Tag: "k"}, opts)
		for _, id := range []int64{head, middle} {
			if row, err := b.client.JobCancel(ctx, id); err != nil || row.State != drovertype.JobStateCancelled {
				t.Fatalf("cancel job %d: %+v, %v", id, row, err)
			}
		}
		if row, _ := b.client.JobGet(ctx, last); row.State != drovertype.JobStateAvailable {
			t.Fatalf("last job is %s after the cancels, want available", row.State)
		}
		b.start(t)
		waitState(t, b.client, last, drovertype.JobStateCompleted)
	})
}

// TestUniqueUnderConcurrentInserts races inserts of one unique key, each in
// a batch with plain jobs: exactly one unique job is stored, the others are
// reported as skipped without failing their batches. Once that job
// finishes, the key is free again, unless its UniqueStates keep it held
// by the completed job.
func TestUniqueUnderConcurrentInserts(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		cases := []struct {
			name         string
			states       []drovertype.JobState
			heldAfterEnd bool
		}{
			{"default states", nil, false},
			{"completed listed", append(drovertype.UnfinishedStates(), drovertype.JobStateCompleted), true},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				const racers = 8
				b := setup(t, s, 2)
				ctx := context.Background()
				unique := &drover.InsertOpts{UniqueKey: "report-42", UniqueStates: tc.states}
				var wg sync.WaitGroup
				idsOf := make([][]int64, racers)
				errs := make([]error, racers)
				for r := range racers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						idsOf[r], errs[r] = b.client.InsertMany(ctx, []drover.InsertManyParams{
							{Args: noopArgs{N: r}},
							{Args: scriptArgs{Tag: "u"}, Opts: unique},
							{Args: noopArgs{N: r}},
						})
					}()
				}
				wg.Wait()
				stored := 0
				var winner int64
				for r := range racers {
					if errs[r] != nil {
						t.Fatalf("racer %d: %v", r, errs[r])
					}
					if idsOf[r][0] == 0 || idsOf[r][2] == 0 {
						t.Fatalf("racer %d: plain jobs not stored: %v", r, idsOf[r])
					}
					if idsOf[r][1] != 0 {
						stored++
						winner = idsOf[r][1]
					}
				}
				all := allJobs(t, b.client)
				if stored != 1 || len(all) != 2*racers+1 {
					t.Fatalf("%d racers stored the unique job, %d jobs in the store; want 1 and %d", stored, len(all), 2*racers+1)
				}
				row, err := b.client.Insert(ctx, scriptArgs{Tag: "u"}, unique)
				if err != nil || !row.UniqueSkippedAsDuplicate || row.ID != 0 {
					t.Fatalf("insert of a held unique key: %+v, %v; want skipped", row, err)
				}
				// Another kind may use the same unique key.
				if row, err := b.client.Insert(ctx, noopArgs{}, unique); err != nil || row.UniqueSkippedAsDuplicate {
					t.Fatalf("other kind, same unique key: %+v, %v; want stored", row, err)
				}
				b.start(t)
				waitState(t, b.client, winner, drovertype.JobStateCompleted)
				row, err = b.client.Insert(ctx, scriptArgs{Tag: "u"}, unique)
				if err != nil || row.UniqueSkippedAsDuplicate == (row.ID != 0) || row.UniqueSkippedAsDuplicate != tc.heldAfterEnd {
					t.Fatalf("insert after the holder completed: %+v, %v; want skipped = %v", row, err, tc.heldAfterEnd)
				}
				if n := len(byTag(t, allJobs(t, b.client))["u"]); tc.heldAfterEnd && n != 1 {
					t.Fatalf("%d jobs of the key stored while the completed one keeps it, want 1", n)
				}
			})
		}
	})
}

// TestOrderOptionsRejectBadInput checks that bad key and uniqueness options
// fail with an error naming the problem and store nothing.
func TestOrderOptionsRejectBadInput(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 1)
		ctx := context.Background()
		cases := []struct {
			name string
			opts drover.InsertOpts
			want string
		}{
			{"limit without key", drover.InsertOpts{KeyLimit: 2}, "key limit 2: set Key too"},
			{"limit too high", drover.InsertOpts{Key: "k", KeyLimit: drover.MaxKeyLimit + 1}, "key limit 10001"},
			{"negative limit", drover.InsertOpts{Key: "k", KeyLimit: -1}, "key limit -1"},
			{"key too long", drover.InsertOpts{Key: strings.Repeat("x", 256)}, "at most 255 bytes"},
			{"NUL in unique key", drover.InsertOpts{UniqueKey: "a\x00b"}, "unique key"},
			{"period without unique key", drover.InsertOpts{UniquePeriod: time.Second}, "set UniqueKey too"},
			{"negative period", drover.InsertOpts{UniqueKey: "u", UniquePeriod: -1}, "unique period"},
			{"unknown unique state", drover.InsertOpts{UniqueKey: "u", UniqueStates: append(drovertype.UnfinishedStates(), "done")},
				`unknown state "done"`},
			{"unique states without unique key", drover.InsertOpts{UniqueStates: drovertype.UnfinishedStates()}, "set UniqueKey too"},
			{"unique states missing unfinished ones", drover.InsertOpts{UniqueKey: "u",
				UniqueStates: []drovertype.JobState{drovertype.JobStateAvailable, drovertype.JobStateRunning, drovertype.JobStateCompleted}},
				"missing [pending blocked scheduled retryable]"},
			{"empty unique states", drover.InsertOpts{UniqueKey: "u", UniqueStates: []drovertype.JobState{}},
				"must include every unfinished state"},
		}
		for _, tc := range cases {
			_, err := b.client.InsertMany(ctx, []drover.InsertManyParams{
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

// TestPeriodicOncePerTick runs three clients with the same periodic job on
// one store: only the leader inserts it, once per tick, which the store
// shows as one job per tick recorded in the jobs' metadata.
func TestPeriodicOncePerTick(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		periodic := []*drover.PeriodicJob{{
			Name:     "cleanup",
			Schedule: "@every 1s",
			Construct: func() (drover.Args, *drover.InsertOpts) {
				return scriptArgs{Tag: "cron"}, nil
			},
			RunOnStart: true,
		}}
		withPeriodic := func(cfg *drover.Config) { cfg.PeriodicJobs = periodic }
		b := setup(t, s, 2, withPeriodic)
		b.start(t)
		for range 2 {
			cfg := fastConfig(b.rec, 2)
			withPeriodic(cfg)
			startClient(t, s.newClient(t, b.d, cfg))
		}
		s.untilWorked(t, "three periodic jobs to complete", func() bool {
			counts, err := b.client.JobCountByState(context.Background(), "")
			if err != nil {
				t.Fatal(err)
			}
			return counts[drovertype.JobStateCompleted] >= 3
		})
		ticks := map[string]int64{}
		for _, j := range allJobs(t, b.client) {
			var m struct {
				Periodic string `json:"periodic"`
				Tick     string `json:"tick"`
			}
			if err := json.Unmarshal(j.Metadata, &m); err != nil || m.Periodic != "cleanup" || m.Tick == "" {
				t.Fatalf("job %d metadata %s: %v", j.ID, j.Metadata, err)
			}
			if other, dup := ticks[m.Tick]; dup {
				t.Fatalf("tick %s enqueued twice: jobs %d and %d", m.Tick, other, j.ID)
			}
			ticks[m.Tick] = j.ID
		}
	})
}

func TestPeriodicConfigRejected(t *testing.T) {
	construct := func() (drover.Args, *drover.InsertOpts) { return noopArgs{}, nil }
	cases := []struct {
		name string
		jobs []*drover.PeriodicJob
		want string
	}{
		{"bad schedule", []*drover.PeriodicJob{{Name: "a", Schedule: "61 * * * *", Construct: construct}}, `schedule "61 * * * *"`},
		{"six fields", []*drover.PeriodicJob{{Name: "a", Schedule: "0 0 * * * *", Construct: construct}}, "schedule"},
		{"no construct", []*drover.PeriodicJob{{Name: "a", Schedule: "@hourly"}}, "Construct"},
		{"duplicate name", []*drover.PeriodicJob{
			{Name: "a", Schedule: "@hourly", Construct: construct},
			{Name: "a", Schedule: "@daily", Construct: construct},
		}, `"a" is defined twice`},
	}
	d := sqliteStore.open(t)
	for _, tc := range cases {
		_, err := drover.NewClient(d.(*droversqlite.Driver), &drover.Config{PeriodicJobs: tc.jobs})
		if !errors.Is(err, drover.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want ErrInvalid mentioning %q", tc.name, err, tc.want)
		}
	}
}

// TestFloodingKeyDoesNotStarveOthers floods the queue with one tenant's
// jobs under a key limit, then inserts another tenant's: those complete
// while most of the flood still waits.
func TestFloodingKeyDoesNotStarveOthers(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 8)
		ctx := context.Background()
		var flood []drover.InsertManyParams
		for range 300 {
			flood = append(flood, drover.InsertManyParams{
				Args: scriptArgs{Tag: "flood", Sleep: "5ms"},
				Opts: &drover.InsertOpts{Key: "tenant-a", KeyLimit: 2},
			})
		}
		if _, err := b.client.InsertMany(ctx, flood); err != nil {
			t.Fatal(err)
		}
		b.start(t)
		var late []int64
		for range 3 {
			late = append(late, b.insert(t, scriptArgs{Tag: "b"}, &drover.InsertOpts{Key: "tenant-b", KeyLimit: 2}))
		}
		for _, id := range late {
			waitState(t, b.client, id, drovertype.JobStateCompleted)
		}
		counts, err := b.client.JobCountByState(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if counts[drovertype.JobStateBlocked] < 100 {
			t.Fatalf("tenant b finished only after the flood drained: %v", counts)
		}
	})
}

// limitedConfig returns a fast config whose default queue has cluster-wide
// limits.
func limitedConfig(rec *recorder, maxWorkers int, q drover.QueueConfig) *drover.Config {
	cfg := fastConfig(rec, maxWorkers)
	q.MaxWorkers = maxWorkers
	cfg.Queues = map[string]drover.QueueConfig{drover.DefaultQueue: q}
	return cfg
}

// TestQueueLimitNeverExceeded runs three clients of ten workers each on a
// queue capped at three running jobs cluster-wide, and checks from the
// stored run intervals that no more than three ever overlapped.
func TestQueueLimitNeverExceeded(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		const jobs, limit = 120, 3
		b := setup(t, s, 10)
		var params []drover.InsertManyParams
		for range jobs {
			params = append(params, drover.InsertManyParams{Args: scriptArgs{Tag: "q", Sleep: "5ms"}})
		}
		if _, err := b.client.InsertMany(context.Background(), params); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			startClient(t, s.newClient(t, b.d, limitedConfig(b.rec, 10, drover.QueueConfig{GlobalMaxWorkers: limit})))
		}
		waitAllFinished(t, b, jobs)
		all := allJobs(t, b.client)
		if got := maxOverlap(t, all); got > limit {
			t.Fatalf("%d jobs ran at once, queue limit %d", got, limit)
		}
	})
}

// TestQueueRateLimit caps a queue at 20 job starts per 500 ms across two
// clients. A token bucket of that size lets at most 40 start in any 500 ms
// (a full bucket plus its refill), and 80 jobs cannot all start in less
// than 1.5 s; the stored attempted_at times must show both, exactly: each
// store spends a claim's tokens at the start it gives the claim's jobs, by
// a clock read under the queue's lock (an unlimited queue starts all 80 at
// once). The bound once allowed 10% for a bucket that ran behind the
// starts, and PostgreSQL still went past it under load (43 of 42): its
// bucket refilled to the claim transaction's start, before the wait for
// the lock (TestRateBucketClock in droverpg).
func TestQueueRateLimit(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		const jobs, rate, period = 80, 20, 500 * time.Millisecond
		b := setup(t, s, 10)
		var params []drover.InsertManyParams
		for range jobs {
			params = append(params, drover.InsertManyParams{Args: scriptArgs{Tag: "r"}})
		}
		if _, err := b.client.InsertMany(context.Background(), params); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			startClient(t, s.newClient(t, b.d, limitedConfig(b.rec, 10, drover.QueueConfig{RateLimit: rate, RatePeriod: period})))
		}
		waitAllFinished(t, b, jobs)
		starts := startTimes(allJobs(t, b.client))
		if n, from := busiestWindow(starts, period); n > 2*rate {
			t.Fatalf("%d jobs started within %s of %s, more than %d", n, period, from, 2*rate)
		}
		// 80 jobs: 20 from the full bucket, then 60 more at 20 per 500 ms.
		if span := starts[len(starts)-1].Sub(starts[0]); span < 1500*time.Millisecond {
			t.Fatalf("%d jobs started within %s, faster than the rate allows", jobs, span)
		}
	})
}

func TestQueueLimitConfigRejected(t *testing.T) {
	d := sqliteStore.open(t)
	cases := []struct {
		q    drover.QueueConfig
		want string
	}{
		{drover.QueueConfig{MaxWorkers: 1, GlobalMaxWorkers: -1}, "GlobalMaxWorkers -1"},
		{drover.QueueConfig{MaxWorkers: 1, RateLimit: 10}, "RatePeriod 0s must be at least 1ms"},
		{drover.QueueConfig{MaxWorkers: 1, RatePeriod: time.Second}, "needs a RateLimit"},
		{drover.QueueConfig{MaxWorkers: 1, RateLimit: -5, RatePeriod: time.Second}, "RateLimit -5"},
	}
	for _, tc := range cases {
		_, err := drover.NewClient(d.(*droversqlite.Driver), &drover.Config{
			Queues: map[string]drover.QueueConfig{"q": tc.q}, Workers: drover.NewWorkers(),
		})
		if !errors.Is(err, drover.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want ErrInvalid mentioning %q", tc.q, err, tc.want)
		}
	}
}
