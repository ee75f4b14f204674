package droverdrivertest

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

func testMaintenance(t *testing.T, setup opener) {
	t.Run("JobPrune", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		got := insert(t, d.Executor(), job("q"), job("q"), job("q"), job("q"), job("q"))
		rows := claim(t, d.Executor(), "q", 3)
		finish(t, d.Executor(),
			result(rows[0], droverdriver.OutcomeCompleted),
			result(rows[1], droverdriver.OutcomeCompleted),
			failed(rows[2], droverdriver.OutcomeDiscarded, "x", time.Time{}),
		)
		if _, err := cancel(ctx, d.Executor(), got[3], time.Now()); err != nil {
			t.Fatal(err)
		}
		// Every job ended within the hour before now.
		now := time.Now().Add(time.Hour)
		tests := []struct {
			name                            string
			completed, cancelled, discarded time.Duration
			limit, want                     int
		}{
			{"too recent", 2 * time.Hour, 2 * time.Hour, 2 * time.Hour, 100, 0},
			{"kept forever", -1, -1, -1, 100, 0},
			{"at most the limit", 0, -1, -1, 1, 1},
			{"completed", 0, -1, -1, 100, 1},
			{"the rest", -1, time.Minute, 0, 100, 2},
		}
		for _, tc := range tests {
			n, err := d.Executor().JobPrune(ctx, droverdriver.PruneParams{Now: now, CompletedRetention: tc.completed,
				CancelledRetention: tc.cancelled, DiscardedRetention: tc.discarded, Limit: tc.limit})
			if err != nil || n != tc.want {
				t.Fatalf("%s: pruned %d, %v; want %d", tc.name, n, err, tc.want)
			}
		}
		counts, err := d.Executor().JobCountByState(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		maps.DeleteFunc(counts, func(_ drovertype.JobState, n int64) bool { return n == 0 })
		if want := map[drovertype.JobState]int64{drovertype.JobStateAvailable: 1}; !maps.Equal(counts, want) {
			t.Fatalf("counts %v, want %v", counts, want)
		}
	})

	t.Run("KeyBlocked/sweep", func(t *testing.T) {
		t.Parallel()
		// The sweep makes blocked jobs available where their key has room,
		// oldest first: here the discard of a key's waiting job freed it.
		ctx := context.Background()
		d := setup(t)
		got := insert(t, d.Executor(), keyed("q", "a"), keyed("q", "a"), keyed("q", "a"), keyed("q", "b"), keyed("q", "b"))
		for _, id := range []int64{got[0], got[3]} {
			if _, err := d.Executor().JobDiscard(ctx, []int64{id}, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		blocked := 0
		for _, id := range []int64{got[1], got[4]} {
			if get(t, d.Executor(), id).State == drovertype.JobStateBlocked {
				blocked++ // unless the discard promoted at once
			}
		}
		n, err := promote(ctx, d.Executor(), 10)
		if err != nil || n != blocked {
			t.Fatalf("promoted %d, %v; want the %d jobs still blocked", n, err, blocked)
		}
		wantState(t, d.Executor(), map[int64]drovertype.JobState{
			got[1]: drovertype.JobStateAvailable, got[2]: drovertype.JobStateBlocked, got[4]: drovertype.JobStateAvailable,
		})
		if n, err := promote(ctx, d.Executor(), 10); err != nil || n != 0 {
			t.Fatalf("second sweep promoted %d, %v; want none", n, err)
		}
	})

	t.Run("PeriodicTicks", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		if got, err := d.Executor().PeriodicTicks(ctx, []string{"a", "b"}); err != nil || len(got) != 0 {
			t.Fatalf("ticks before any: %v, %v", got, err)
		}
		t0 := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
		record := func(names []string, ticks []time.Time) {
			t.Helper()
			if err := d.Executor().PeriodicTicksRecord(ctx, names, ticks); err != nil {
				t.Fatal(err)
			}
		}
		record([]string{"a", "b"}, []time.Time{t0, t0.Add(time.Minute)})
		// A later tick replaces the stored one; an earlier one does not.
		record([]string{"a", "b"}, []time.Time{t0.Add(time.Hour), t0})
		got, err := d.Executor().PeriodicTicks(ctx, []string{"a", "b", "c"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || !got["a"].Equal(t0.Add(time.Hour)) || !got["b"].Equal(t0.Add(time.Minute)) {
			t.Fatalf("ticks %v, want a at %v and b at %v", got, t0.Add(time.Hour), t0.Add(time.Minute))
		}
		if only, err := d.Executor().PeriodicTicks(ctx, []string{"b"}); err != nil || len(only) != 1 {
			t.Fatalf("ticks of b only: %v, %v", only, err)
		}
	})

	t.Run("LeaderElect", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		elect := func(name, id string, ttl time.Duration) bool {
			t.Helper()
			ok, err := d.Executor().LeaderElect(ctx, droverdriver.LeaderParams{Name: name, ID: id, TTL: ttl})
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		resign := func(id string) {
			t.Helper()
			if err := d.Executor().LeaderResign(ctx, "maint", id); err != nil {
				t.Fatal(err)
			}
		}
		// Each step depends on the ones before it.
		steps := []struct {
			name string
			do   func() bool
			want bool
		}{
			{"a takes a free role", func() bool { return elect("maint", "a", time.Hour) }, true},
			{"b cannot take a running lease", func() bool { return elect("maint", "b", time.Hour) }, false},
			{"another role is free", func() bool { return elect("other", "b", time.Hour) }, true},
			{"a keeps its lease", func() bool { return elect("maint", "a", time.Hour) }, true},
			{"a's lease ends (a TTL in the past)", func() bool { return elect("maint", "a", -time.Minute) }, true},
			{"b takes an expired lease", func() bool { return elect("maint", "b", time.Hour) }, true},
			{"a cannot take it back", func() bool { return elect("maint", "a", time.Hour) }, false},
			{"a's resignation does not free b's lease", func() bool { resign("a"); return elect("maint", "a", time.Hour) }, false},
			{"b's resignation does", func() bool { resign("b"); return elect("maint", "a", time.Hour) }, true},
		}
		for _, s := range steps {
			if got := s.do(); got != s.want {
				t.Fatalf("%s: elected %v, want %v", s.name, got, s.want)
			}
		}
	})
}
