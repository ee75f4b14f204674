package drover_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/internal/driver"
)

// storedParts reads the partition the store gave each job, straight from
// its jobs table, so that the tests below check partitioned claims against
// what is stored rather than against how a store picks partitions.
func storedParts(t *testing.T, d driver.Driver) map[int64]int {
	t.Helper()
	ctx := context.Background()
	parts := make(map[int64]int)
	switch d := d.(type) {
	case *droverpg.Driver:
		rows, err := d.Pool().Query(ctx, "SELECT id, part FROM "+pgx.Identifier{d.Schema(), "jobs"}.Sanitize())
		if err != nil {
			t.Fatal(err)
		}
		var id int64
		var part int16
		if _, err := pgx.ForEachRow(rows, []any{&id, &part}, func() error {
			parts[id] = int(part)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	case *droversqlite.Driver:
		rows, err := d.DB().QueryContext(ctx, `SELECT id, part FROM "`+d.Schema()+`_jobs"`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var part int
			if err := rows.Scan(&id, &part); err != nil {
				t.Fatal(err)
			}
			parts[id] = part
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("no way to read partitions of a %T", d)
	}
	return parts
}

// TestClaimPartition checks ClaimParams.Part: a partitioned claim takes, in
// claim order, only jobs stored in its partition; a global claim then sees
// every other job; a partition out of range, or with a position, is
// refused and claims nothing.
func TestClaimPartition(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		d := s.open(t)
		const jobs = 96
		params := make([]driver.InsertParams, jobs)
		for i := range params {
			// Priorities against insertion order, so that claim order
			// differs from ID order.
			params[i] = driver.InsertParams{Queue: "q", Kind: "k", Args: []byte(`{}`), Priority: 2 - i%3, MaxAttempts: 1}
		}
		ids, err := d.JobInsertMany(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		parts := storedParts(t, d)
		if len(parts) != jobs {
			t.Fatalf("read %d partitions, want %d", len(parts), jobs)
		}
		perPart := make(map[int]int)
		for _, p := range parts {
			if p < 0 || p >= driver.Partitions {
				t.Fatalf("stored partition %d is out of range", p)
			}
			perPart[p]++
		}
		if len(perPart) < 2 {
			t.Fatalf("all %d jobs share one partition: %v", jobs, perPart)
		}

		first, err := d.JobGet(ctx, ids[0])
		if err != nil {
			t.Fatal(err)
		}
		after := &driver.ClaimPosition{Priority: first.Priority, RunAt: first.RunAt, ID: first.ID}
		low, high, zero := -1, driver.Partitions, 0
		for _, bad := range []struct {
			part  *int
			after *driver.ClaimPosition
			want  string
		}{
			{&low, nil, "partition -1 is out of range"},
			{&high, nil, fmt.Sprintf("partition %d is out of range", driver.Partitions)},
			{&zero, after, "a partition or a position, not both"},
		} {
			_, err := d.JobClaim(ctx, driver.ClaimParams{Queue: "q", Max: jobs, Owner: "x", Lease: time.Minute, Part: bad.part, After: bad.after})
			if err == nil || !strings.Contains(err.Error(), bad.want) {
				t.Fatalf("claim of partition %d after %v: %v; want an error saying %q", *bad.part, bad.after, err, bad.want)
			}
		}
		if n, err := d.JobCountByState(ctx, "q"); err != nil || n[driver.StateAvailable] != jobs {
			t.Fatalf("after refused claims: %v, %v; want %d available", n, err, jobs)
		}

		prio := make(map[int64]int, jobs)
		for i, id := range ids {
			prio[id] = params[i].Priority
		}
		inOrder := func(want []int64) []int64 {
			slices.SortFunc(want, func(a, b int64) int {
				if prio[a] != prio[b] {
					return prio[a] - prio[b]
				}
				return int(a - b)
			})
			return want
		}
		// The fullest partition, so that it holds several jobs.
		part := 0
		for p, n := range perPart {
			if n > perPart[part] {
				part = p
			}
		}
		var want, rest []int64
		for _, id := range ids {
			if parts[id] == part {
				want = append(want, id)
			} else {
				rest = append(rest, id)
			}
		}
		want, rest = inOrder(want), inOrder(rest)
		claim := func(owner string, part *int, max int) []int64 {
			t.Helper()
			rows, err := d.JobClaim(ctx, driver.ClaimParams{Queue: "q", Max: max, Owner: owner, Lease: time.Minute, Part: part})
			if err != nil {
				t.Fatal(err)
			}
			return rowIDs(rows)
		}

		// The head of the partition, then the rest of it, and nothing of
		// any other partition.
		if got := claim("a", &part, 2); fmt.Sprint(got) != fmt.Sprint(want[:2]) {
			t.Fatalf("claim of 2 of partition %d: got %v, want %v", part, got, want[:2])
		}
		if got := claim("b", &part, jobs); fmt.Sprint(got) != fmt.Sprint(want[2:]) {
			t.Fatalf("claim of partition %d: got %v, want %v", part, got, want[2:])
		}
		if got := claim("c", &part, jobs); len(got) != 0 {
			t.Fatalf("claim of drained partition %d: got %v, want nothing", part, got)
		}
		if got := claim("d", nil, jobs); fmt.Sprint(got) != fmt.Sprint(rest) {
			t.Fatalf("global claim after the partitioned ones: got %v, want %v", got, rest)
		}
	})
}

func rowIDs(rows []*driver.JobRow) []int64 {
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids
}

// TestPartitionedClaimsRunEveryJobOnce works a backlog with clients that
// claim by partition (QueueConfig.PartitionedClaims) and checks from the
// store that every job completed and ran exactly once. Claims are small
// against the backlog, so they come back full and the producers switch to
// partitioned claims, then drain partitions and fall back to global ones.
func TestPartitionedClaimsRunEveryJobOnce(t *testing.T) {
	for _, clients := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d clients", clients), func(t *testing.T) {
			forEachStore(t, func(t *testing.T, s store) {
				const jobs = 3000
				partitioned := func(cfg *drover.Config) {
					cfg.Queues = map[string]drover.QueueConfig{drover.DefaultQueue: {MaxWorkers: 20, ClaimMax: 10, PartitionedClaims: true}}
				}
				b := setup(t, s, 20, partitioned)
				ctx := context.Background()
				params := make([]drover.InsertManyParams, jobs)
				for i := range params {
					params[i] = drover.InsertManyParams{Args: noopArgs{N: i}, Opts: &drover.InsertOpts{Priority: i % 4}}
				}
				ids, err := b.client.InsertMany(ctx, params)
				if err != nil {
					t.Fatal(err)
				}
				var wg sync.WaitGroup
				for range clients {
					cfg := fastConfig(b.rec, 20)
					partitioned(cfg)
					c := s.newClient(t, b.d, cfg)
					wg.Go(func() { startClient(t, c) })
				}
				wg.Wait()
				waitFor(t, "all jobs completed", func() bool {
					counts, err := b.client.JobCountByState(ctx, "")
					if err != nil {
						t.Fatal(err)
					}
					return counts[drover.JobStateCompleted] == jobs
				})
				_, runs := b.rec.snapshot()
				for _, id := range ids {
					if runs[id] != 1 {
						t.Fatalf("job %d ran %d times", id, runs[id])
					}
				}
				if len(runs) != jobs {
					t.Fatalf("%d distinct jobs ran, want %d", len(runs), jobs)
				}
				counts, err := b.client.JobCountByState(ctx, "")
				if err != nil || counts[drover.JobStateAvailable]+counts[drover.JobStateRunning] != 0 {
					t.Fatalf("jobs left behind: %v, %v", counts, err)
				}
			})
		})
	}
}
