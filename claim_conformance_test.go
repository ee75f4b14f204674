package drover_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/engine"
)

// named is p as engine.Claim hands it to a driver
// (engine.ClaimStatement).
func named(p droverdriver.ClaimParams) droverdriver.ClaimParams {
	return engine.ClaimStatement(p, false)
}

// TestClaimOrder checks that claims return their jobs in claim order
// (priority, run_at, id), which differs here from the order the rows were
// written in: the head of the queue first, then the rest of it, then,
// from a position (ClaimParams.After), only what sorts after it.
func TestClaimOrder(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		d := s.open(t)
		const jobs = 48
		params := make([]droverdriver.InsertParams, jobs)
		for i := range params {
			// Priorities against insertion order, so that claim order
			// differs from ID order and from the order on disk.
			params[i] = droverdriver.InsertParams{Queue: "q", Kind: "k", Args: []byte(`{}`), Priority: 2 - i%3, MaxAttempts: 1}
		}
		ids, err := d.Executor().JobInsertMany(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		prio := make(map[int64]int, jobs)
		for i, id := range ids {
			prio[id] = params[i].Priority
		}
		want := slices.Clone(ids)
		slices.SortFunc(want, func(a, b int64) int {
			if prio[a] != prio[b] {
				return prio[a] - prio[b]
			}
			return int(a - b)
		})
		claim := func(owner string, max int, after *droverdriver.ClaimPosition) []*drovertype.JobRow {
			t.Helper()
			rows, err := d.Executor().JobClaim(ctx, named(droverdriver.ClaimParams{Queue: "q", Max: max, Owner: owner, Lease: time.Minute, After: after}))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				if r.Queue != "q" || r.LeaseOwner != owner || r.State != drovertype.JobStateRunning || r.Attempt != 1 {
					t.Fatalf("claimed row %d: queue %q, owner %q, state %s, attempt %d; want q, %s, running, 1",
						r.ID, r.Queue, r.LeaseOwner, r.State, r.Attempt, owner)
				}
			}
			return rows
		}

		if got := rowIDs(claim("a", 2, nil)); fmt.Sprint(got) != fmt.Sprint(want[:2]) {
			t.Fatalf("claim of 2: got %v, want %v", got, want[:2])
		}
		// Skip ten jobs of the claim order: a claim past the position of
		// the twelfth takes only what follows it.
		pos, err := d.Executor().JobGet(ctx, want[11])
		if err != nil {
			t.Fatal(err)
		}
		after := droverdriver.PositionOf(pos)
		if got := rowIDs(claim("b", jobs, &after)); fmt.Sprint(got) != fmt.Sprint(want[12:]) {
			t.Fatalf("claim past job %d: got %v, want %v", want[11], got, want[12:])
		}
		if got := rowIDs(claim("c", jobs, nil)); fmt.Sprint(got) != fmt.Sprint(want[2:12]) {
			t.Fatalf("claim of the rest: got %v, want %v", got, want[2:12])
		}
	})
}

func rowIDs(rows []*drovertype.JobRow) []int64 {
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids
}
