package droverdrivertest

import (
	"context"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

func testHistory(t *testing.T, setup opener) {
	ctx := context.Background()
	// sample returns the one sample of series queue, kind among samples,
	// failing the test when it is not there exactly once.
	sample := func(t *testing.T, samples []drovertype.StatSample, at time.Time, queue, kind string) drovertype.StatSample {
		t.Helper()
		var found []drovertype.StatSample
		for _, s := range samples {
			if s.Queue == queue && s.Kind == kind && s.At.Equal(at) {
				found = append(found, s)
			}
		}
		if len(found) != 1 {
			t.Fatalf("%d samples of queue %q kind %q at %s among %+v", len(found), queue, kind, at, samples)
		}
		return found[0]
	}
	read := func(t *testing.T, d droverdriver.Driver, p droverdriver.StatsHistoryParams) []drovertype.StatSample {
		t.Helper()
		out, err := d.Executor().StatsHistory(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	// hour is an hour's start well before any job's time, at which the
	// tests place their samples: a sample's figures are whatever the
	// store holds when it is recorded, whatever its time.
	hour := time.Now().UTC().Truncate(time.Hour).Add(-72 * time.Hour)

	t.Run("StatsRecord", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		at := hour.Add(time.Minute)
		if n, err := d.Executor().StatsRecord(ctx, droverdriver.StatsRecordParams{At: at, Since: at.Add(-time.Minute), Until: at, Now: time.Now()}); err != nil || n != 1 {
			t.Fatalf("empty store: stored %d samples, %v; want the all-queues one", n, err)
		}
		insert(t, d.Executor(), job("a"), job("a"), with(job("a"), func(p *droverdriver.InsertParams) { p.Kind = "other" }),
			with(job("b"), func(p *droverdriver.InsertParams) { p.RunAt = time.Now().Add(time.Hour) }))
		rows := claim(t, d.Executor(), "a", 2)
		finish(t, d.Executor(), result(rows[0], droverdriver.OutcomeCompleted))
		now := time.Now()
		p := droverdriver.StatsRecordParams{At: now.Truncate(time.Minute).Add(time.Minute), Since: now.Add(-time.Hour), Until: now.Add(time.Hour), Now: now}
		// Samples: a/noop, a/other, b/noop, a, b and all queues.
		if n, err := d.Executor().StatsRecord(ctx, p); err != nil || n != 6 {
			t.Fatalf("stored %d samples, %v; want 6", n, err)
		}
		if n, err := d.Executor().StatsRecord(ctx, p); err != nil || n != 0 {
			t.Fatalf("recording the same minute again stored %d samples, %v; want none", n, err)
		}
		all := read(t, d, droverdriver.StatsHistoryParams{From: p.At.Add(-time.Minute), To: p.At, Bucket: time.Minute, Queue: droverdriver.StatsEach, Kind: droverdriver.StatsEach})
		if len(all) != 3 {
			t.Fatalf("each queue's each kind: %+v, want 3 samples", all)
		}
		if s := sample(t, all, p.At, "a", "noop"); s.Running != 1 || s.Completed != 1 || s.Available != 0 || s.PickupP50 < 0 {
			t.Errorf("a/noop: %+v, want 1 running and 1 completed", s)
		}
		if s := sample(t, all, p.At, "a", "other"); s.Available != 1 || s.Running != 0 {
			t.Errorf("a/other: %+v, want 1 available", s)
		}
		if s := sample(t, all, p.At, "b", "noop"); s.Scheduled != 1 {
			t.Errorf("b/noop: %+v, want 1 scheduled", s)
		}
		queues := read(t, d, droverdriver.StatsHistoryParams{From: p.At.Add(-time.Minute), To: p.At, Bucket: time.Minute, Queue: droverdriver.StatsEach})
		if len(queues) != 2 {
			t.Fatalf("each queue: %+v, want a and b", queues)
		}
		if s := sample(t, queues, p.At, "a", ""); s.Running != 1 || s.Available != 1 || s.Completed != 1 {
			t.Errorf("queue a: %+v", s)
		}
		total := read(t, d, droverdriver.StatsHistoryParams{From: p.At.Add(-time.Minute), To: p.At, Bucket: time.Minute})
		if s := sample(t, total, p.At, "", ""); s.Running != 1 || s.Available != 1 || s.Scheduled != 1 || s.Completed != 1 {
			t.Errorf("all queues: %+v", s)
		}
		kinds := read(t, d, droverdriver.StatsHistoryParams{From: p.At.Add(-time.Minute), To: p.At, Bucket: time.Minute, Queue: "a", Kind: droverdriver.StatsEach})
		if len(kinds) != 2 {
			t.Errorf("each kind of queue a: %+v, want noop and other", kinds)
		}
		// A finish outside the window counts nothing.
		later := droverdriver.StatsRecordParams{At: p.At.Add(time.Minute), Since: p.Until, Until: p.Until.Add(time.Minute), Now: now}
		if _, err := d.Executor().StatsRecord(ctx, later); err != nil {
			t.Fatal(err)
		}
		total = read(t, d, droverdriver.StatsHistoryParams{From: later.At.Add(-time.Minute), To: later.At, Bucket: time.Minute})
		if s := sample(t, total, later.At, "", ""); s.Completed != 0 || s.Running != 1 {
			t.Errorf("the next minute: %+v, want none completed, 1 running", s)
		}
	})

	t.Run("StatsRollup", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		insert(t, d.Executor(), job("a"), job("a"))
		rows := claim(t, d.Executor(), "a", 1)
		finish(t, d.Executor(), result(rows[0], droverdriver.OutcomeCompleted))
		now := time.Now()
		record := func(at time.Time, since, until time.Time) {
			t.Helper()
			if _, err := d.Executor().StatsRecord(ctx, droverdriver.StatsRecordParams{At: at, Since: since, Until: until, Now: now}); err != nil {
				t.Fatal(err)
			}
		}
		// Two minutes of the first hour, the first with the completed job
		// in its window; one of the next hour.
		record(hour.Add(time.Minute), now.Add(-time.Hour), now.Add(time.Hour))
		record(hour.Add(2*time.Minute), now.Add(time.Hour), now.Add(2*time.Hour))
		record(hour.Add(61*time.Minute), now.Add(time.Hour), now.Add(2*time.Hour))
		n, err := d.Executor().StatsRollup(ctx, droverdriver.StatsRollupParams{Minutes: hour.Add(time.Hour), Hours: hour.Add(-24 * time.Hour)})
		if err != nil || n != 6 {
			t.Fatalf("rollup deleted %d samples, %v; want the first hour's 6 minute samples (a/noop, a and all queues, twice)", n, err)
		}
		hourly := read(t, d, droverdriver.StatsHistoryParams{From: hour, To: hour.Add(2 * time.Hour), Bucket: time.Hour})
		if len(hourly) != 2 {
			t.Fatalf("hourly reads %+v, want the rolled-up hour and the next one's minute", hourly)
		}
		if s := sample(t, hourly, hour.Add(time.Hour), "", ""); s.Available != 1 || s.Completed != 1 {
			t.Errorf("the rolled-up hour: %+v, want 1 available on average and 1 completed in all", s)
		}
		if s := sample(t, hourly, hour.Add(2*time.Hour), "", ""); s.Available != 1 || s.Completed != 0 {
			t.Errorf("the next hour, from its minute sample: %+v", s)
		}
		minutes := read(t, d, droverdriver.StatsHistoryParams{From: hour, To: hour.Add(2 * time.Hour), Bucket: time.Minute})
		if len(minutes) != 1 || !minutes[0].At.Equal(hour.Add(61*time.Minute)) {
			t.Fatalf("minute reads %+v, want only the minute not rolled up: an hourly sample is never split", minutes)
		}
		if n, err := d.Executor().StatsRollup(ctx, droverdriver.StatsRollupParams{Minutes: hour, Hours: hour.Add(2 * time.Hour)}); err != nil || n != 3 {
			t.Fatalf("past retention: deleted %d, %v; want the 3 hourly samples", n, err)
		}
	})

	t.Run("TopicLagRecord", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		at := hour.Add(time.Minute)
		published := at.Add(-30 * time.Second)
		lags := []drovertype.SubscriptionLag{{Topic: "t", Subscription: "a", Pending: 10, OldestPending: &published, Dropped: 2},
			{Topic: "t", Subscription: "b"}, {Topic: "u", Subscription: "a", Pending: 1, OldestPending: &published}}
		if err := d.Executor().TopicLagRecord(ctx, at, lags); err != nil {
			t.Fatal(err)
		}
		lags[0].Pending = 20
		if err := d.Executor().TopicLagRecord(ctx, at.Add(time.Minute), lags[:1]); err != nil {
			t.Fatal(err)
		}
		got, err := d.Executor().TopicLagHistory(ctx, droverdriver.TopicLagHistoryParams{From: hour, To: hour.Add(time.Hour), Bucket: time.Minute, Topic: "t"})
		if err != nil {
			t.Fatal(err)
		}
		want := []drovertype.TopicLagSample{{At: at, Topic: "t", Subscription: "a", Lag: 10, Oldest: 30 * time.Second, Dropped: 2},
			{At: at, Topic: "t", Subscription: "b"}, {At: at.Add(time.Minute), Topic: "t", Subscription: "a", Lag: 20, Oldest: 90 * time.Second, Dropped: 2}}
		if len(got) != len(want) {
			t.Fatalf("lag history %+v, want %+v", got, want)
		}
		for i := range want {
			if !got[i].At.Equal(want[i].At) || got[i].Topic != want[i].Topic || got[i].Subscription != want[i].Subscription ||
				got[i].Lag != want[i].Lag || got[i].Oldest != want[i].Oldest || got[i].Dropped != want[i].Dropped {
				t.Errorf("sample %d: %+v, want %+v", i, got[i], want[i])
			}
		}
		if _, err := d.Executor().StatsRollup(ctx, droverdriver.StatsRollupParams{Minutes: hour.Add(time.Hour), Hours: hour}); err != nil {
			t.Fatal(err)
		}
		got, err = d.Executor().TopicLagHistory(ctx, droverdriver.TopicLagHistoryParams{From: hour, To: hour.Add(time.Hour), Bucket: time.Hour, Topic: "t"})
		if err != nil || len(got) != 2 || got[0].Subscription != "a" || got[0].Lag != 15 || got[0].Oldest != 90*time.Second {
			t.Fatalf("the rolled-up hour: %+v, %v; want t/a with lag 15 on average, oldest 90s at most, and t/b", got, err)
		}
	})
}
