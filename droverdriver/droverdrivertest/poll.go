package droverdrivertest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// testPoll covers droverdriver.QueuesDueExecutor, the read of a client's
// poll; drivers without it are skipped.
func testPoll(t *testing.T, setup opener) {
	t.Run("QueuesDue", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		due, ok := d.Executor().(droverdriver.QueuesDueExecutor)
		if !ok {
			t.Skipf("%T does not read the queues with jobs due", d)
		}
		later := time.Now().Add(time.Hour)
		insert(t, d.Executor(),
			job("plain"),
			with(job("scheduled"), func(p *droverdriver.InsertParams) { p.RunAt = later }),
			routed("routed", drovertype.Routing{Type: "gpu"}),
			job("claimed"),
		)
		claim(t, d.Executor(), "claimed", 1)
		queues := []string{"plain", "scheduled", "routed", "claimed", "empty"}
		check := func(now time.Time, want ...string) {
			t.Helper()
			got, err := due.QueuesDue(ctx, queues, now)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("QueuesDue at %v: %v, want %v", now, got, want)
			}
		}
		// The store's clock, then a claimer's: the scheduled job is due
		// past its time; a running job is not waiting.
		check(time.Time{}, "plain", "routed")
		check(later.Add(time.Minute), "plain", "routed", "scheduled")
		if got, err := due.QueuesDue(ctx, nil, time.Time{}); err != nil || len(got) != 0 {
			t.Errorf("QueuesDue of no queues: %v, %v", got, err)
		}
	})
}
