package drover_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
)

// TestJobBulk applies bulk actions to a filter that spans more than one
// page, over jobs the actions change and jobs they leave alone, and checks
// that each reports the jobs it changed, not the jobs its filter matched.
func TestJobBulk(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		b := setup(t, s, 1)
		const total, running = 1500, 500
		params := make([]drover.InsertManyParams, total)
		for i := range params {
			params[i] = drover.InsertManyParams{Args: drover.RawArgs{KindName: "test.noop", JSON: json.RawMessage(`{}`)},
				Opts: &drover.InsertOpts{Queue: "bulk"}}
		}
		if _, err := b.client.InsertMany(ctx, params); err != nil {
			t.Fatal(err)
		}
		other := b.insert(t, noopArgs{}, nil)
		if rows, err := b.d.JobClaim(ctx, droverdriver.ClaimParams{Queue: "bulk", Max: running, Owner: "w", Lease: time.Hour}); err != nil || len(rows) != running {
			t.Fatalf("claimed %d, %v", len(rows), err)
		}

		for _, tc := range []struct {
			action  drover.BulkAction
			states  []drover.JobState
			changed int64
			after   map[drover.JobState]int64
		}{
			// Discard leaves the running jobs alone.
			{drover.BulkDiscard, nil, total - running,
				map[drover.JobState]int64{drover.JobStateDiscarded: total - running, drover.JobStateRunning: running}},
			// Cancel asks the running ones to stop; finished ones stay.
			{drover.BulkCancel, nil, running,
				map[drover.JobState]int64{drover.JobStateDiscarded: total - running, drover.JobStateRunning: running}},
			// Retry the discarded ones only.
			{drover.BulkRetry, []drover.JobState{drover.JobStateDiscarded}, total - running,
				map[drover.JobState]int64{drover.JobStateAvailable: total - running, drover.JobStateRunning: running}},
			// Nothing left to retry among the running.
			{drover.BulkRetry, []drover.JobState{drover.JobStateRunning}, 0,
				map[drover.JobState]int64{drover.JobStateAvailable: total - running, drover.JobStateRunning: running}},
		} {
			var pages int
			p, err := b.client.JobBulk(ctx, tc.action, drover.JobListParams{Queue: "bulk", States: tc.states},
				func(drover.BulkProgress) { pages++ })
			if err != nil {
				t.Fatalf("%s: %v", tc.action, err)
			}
			if p.Changed != tc.changed {
				t.Errorf("%s %v: changed %d of %d scanned, want %d changed", tc.action, tc.states, p.Changed, p.Scanned, tc.changed)
			}
			if tc.states == nil && (p.Scanned != total || pages != 2) {
				t.Errorf("%s: scanned %d in %d pages, want %d in 2", tc.action, p.Scanned, pages, total)
			}
			counts, err := b.client.JobCountByState(ctx, "bulk")
			if err != nil {
				t.Fatal(err)
			}
			for st, n := range tc.after {
				if counts[st] != n {
					t.Errorf("after %s: %d %s, want %d (all: %v)", tc.action, counts[st], st, n, counts)
				}
			}
		}
		if j, err := b.client.JobGet(ctx, other); err != nil || j.State != drover.JobStateAvailable {
			t.Errorf("a job outside the filter: %v, %v", j, err)
		}
		if _, err := b.client.JobBulk(ctx, "delete", drover.JobListParams{}, nil); !errors.Is(err, drover.ErrInvalid) {
			t.Errorf("unknown action: %v, want ErrInvalid", err)
		}
	})
}
