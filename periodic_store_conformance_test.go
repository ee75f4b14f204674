package drover_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// Periodic jobs stored in the database (periodic_store.go, migration 014):
// defined through PeriodicJobs, run by the leader beside the Go entries,
// paused, triggered and listed. Every check reads the store.

// periodicOf returns the name of the periodic job a job was inserted for
// (its metadata), and whether Trigger inserted it.
func periodicOf(t *testing.T, j *drovertype.JobRow) (name string, triggered bool) {
	t.Helper()
	var m struct {
		Periodic  string `json:"periodic"`
		Triggered bool   `json:"triggered"`
	}
	if len(j.Metadata) > 0 {
		if err := json.Unmarshal(j.Metadata, &m); err != nil {
			t.Fatalf("job %d metadata %s: %v", j.ID, j.Metadata, err)
		}
	}
	return m.Periodic, m.Triggered
}

// periodicJobs counts the stored jobs by the periodic job that inserted
// them.
func periodicJobs(t *testing.T, c client) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, j := range allJobs(t, c) {
		if name, _ := periodicOf(t, j); name != "" {
			n[name]++
		}
	}
	return n
}

func findPeriodic(t *testing.T, c client, name string) *drover.PeriodicJobStatus {
	t.Helper()
	all, err := c.PeriodicJobs().List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range all {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// TestPeriodicStoredRuns stores definitions before the leader starts and
// from another client while it runs: the leader inserts the jobs of those
// not paused at their ticks, and none of a paused definition nor of a
// paused Go entry, while the others tick twice. The list then shows the
// last run of those that ran and no next run for the paused ones.
func TestPeriodicStoredRuns(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		goEntry := &drover.PeriodicJob{Name: "go-paused", Schedule: "@every 1s",
			Construct: func() (drover.Args, *drover.InsertOpts) { return noopArgs{N: 9}, nil }}
		fast := func(cfg *drover.Config) {
			cfg.PeriodicReloadInterval = 50 * time.Millisecond // the other client's definition is read soon
			cfg.PeriodicJobs = []*drover.PeriodicJob{goEntry}
		}
		b := setup(t, s, 4, fast)
		set := b.client.PeriodicJobs()
		def := func(name string) drover.PeriodicDefinition {
			return drover.PeriodicDefinition{Name: name, Schedule: "@every 1s", Kind: "test.noop",
				Args: json.RawMessage(`{"n":1}`), Tags: []string{"cron"}}
		}
		if _, err := set.Create(ctx, def("stored")); err != nil {
			t.Fatal(err)
		}
		if _, err := set.Create(ctx, def("paused")); err != nil {
			t.Fatal(err)
		}
		if st, err := set.Pause(ctx, "paused"); err != nil || !st.Paused || st.NextRunAt != nil {
			t.Fatalf("pause: %+v, %v", st, err)
		}
		// The Go entry as a previous leader registered it, paused then.
		if err := b.d.Executor().(droverdriver.PeriodicExecutor).PeriodicRegister(ctx, []droverdriver.PeriodicParams{{
			Name: "go-paused", Schedule: "@hourly", Kind: "test.noop", Args: []byte(`{}`), Queue: "default"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := set.Pause(ctx, "go-paused"); err != nil {
			t.Fatal(err)
		}
		b.start(t)
		other := s.newClient(t, b.d, fastConfig(b.rec, 1))
		if _, err := other.PeriodicJobs().Create(ctx, def("late")); err != nil {
			t.Fatal(err)
		}
		waitfor.Cond(t, "two jobs each of the stored and the late definition", func() bool {
			n := periodicJobs(t, b.client)
			return n["stored"] >= 2 && n["late"] >= 2
		})
		n := periodicJobs(t, b.client)
		if n["paused"] != 0 || n["go-paused"] != 0 {
			t.Fatalf("jobs by periodic job %v: the paused ones inserted some", n)
		}
		for _, j := range allJobs(t, b.client) {
			if name, _ := periodicOf(t, j); name == "stored" && (j.Kind != "test.noop" || j.Queue != "default" ||
				len(j.Tags) != 1 || j.Tags[0] != "cron") {
				t.Fatalf("stored definition's job %+v", j)
			}
		}
		st := findPeriodic(t, b.client, "stored")
		if st == nil || st.LastRunAt == nil || st.NextRunAt == nil || st.Paused || st.Source != drover.PeriodicSourceAPI {
			t.Fatalf("listed stored definition %+v", st)
		}
		if gp := findPeriodic(t, b.client, "go-paused"); gp == nil || !gp.Paused || gp.Schedule != "@every 1s" ||
			gp.Source != drover.PeriodicSourceConfig {
			t.Fatalf("listed go entry %+v: want paused, registered again with the leader's schedule", gp)
		}
	})
}

// TestPeriodicTrigger inserts one job of a stored definition now, with no
// leader running: one job, of the definition's kind and args, marked as
// triggered, and the list's last run set.
func TestPeriodicTrigger(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		b := setup(t, s, 1)
		set := b.client.PeriodicJobs()
		if _, err := set.Create(ctx, drover.PeriodicDefinition{Name: "report", Schedule: "0 0 1 1 *",
			Kind: "python.report", Args: json.RawMessage(`{"n":3}`), Queue: "reports", Priority: 2}); err != nil {
			t.Fatal(err)
		}
		row, err := set.Trigger(ctx, "report")
		if err != nil {
			t.Fatal(err)
		}
		jobs := allJobs(t, b.client)
		if len(jobs) != 1 || jobs[0].ID != row.ID {
			t.Fatalf("jobs after trigger: %d, want the one triggered", len(jobs))
		}
		j := jobs[0]
		name, triggered := periodicOf(t, j)
		if name != "report" || !triggered || j.Kind != "python.report" || j.Queue != "reports" || j.Priority != 2 {
			t.Fatalf("triggered job %+v", j)
		}
		if st := findPeriodic(t, b.client, "report"); st == nil || st.LastRunAt == nil || st.NextRunAt == nil {
			t.Fatalf("listed after trigger: %+v", st)
		}
		if _, err := set.Trigger(ctx, "nope"); !errors.Is(err, drover.ErrPeriodicNotFound) {
			t.Fatalf("trigger of a missing periodic job: %v", err)
		}
	})
}

// TestPeriodicConfiguredListed starts a leader with a Go entry: it is
// listed with its source, job and next run; the API refuses to create,
// change or (from its own client) delete it, but pauses, resumes and
// triggers it, from any client.
func TestPeriodicConfiguredListed(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		b := setup(t, s, 1, func(cfg *drover.Config) {
			cfg.PeriodicJobs = []*drover.PeriodicJob{{Name: "nightly", Schedule: "0 3 * * *",
				Construct: func() (drover.Args, *drover.InsertOpts) {
					return noopArgs{N: 3}, &drover.InsertOpts{Queue: "night", Tags: []string{"x"}}
				}}}
		})
		b.start(t)
		var st *drover.PeriodicJobStatus
		waitfor.Cond(t, "the leader to register its Go entry", func() bool {
			st = findPeriodic(t, b.client, "nightly")
			return st != nil
		})
		var args noopArgs
		if err := json.Unmarshal(st.Args, &args); err != nil || args.N != 3 {
			t.Fatalf("listed Go entry's args %s: %v", st.Args, err)
		}
		if st.Source != drover.PeriodicSourceConfig || st.Kind != "test.noop" ||
			st.Queue != "night" || st.NextRunAt == nil || st.Paused {
			t.Fatalf("listed Go entry %+v", st)
		}
		other := s.newClient(t, b.d, fastConfig(b.rec, 1)).PeriodicJobs()
		d := drover.PeriodicDefinition{Name: "nightly", Schedule: "@hourly", Kind: "test.noop"}
		if _, err := other.Create(ctx, d); !errors.Is(err, drover.ErrPeriodicConfigured) {
			t.Fatalf("create over a Go entry: %v", err)
		}
		if _, err := other.Update(ctx, d); !errors.Is(err, drover.ErrPeriodicConfigured) {
			t.Fatalf("update of a Go entry: %v", err)
		}
		if err := b.client.PeriodicJobs().Delete(ctx, "nightly"); !errors.Is(err, drover.ErrPeriodicConfigured) {
			t.Fatalf("delete of its own Go entry: %v", err)
		}
		if st, err := other.Pause(ctx, "nightly"); err != nil || !st.Paused {
			t.Fatalf("pause: %+v, %v", st, err)
		}
		if st, err := other.Resume(ctx, "nightly"); err != nil || st.Paused || st.NextRunAt == nil {
			t.Fatalf("resume: %+v, %v", st, err)
		}
		row, err := other.Trigger(ctx, "nightly")
		if err != nil {
			t.Fatal(err)
		}
		j, err := b.client.JobGet(ctx, row.ID)
		if err != nil {
			t.Fatal(err)
		}
		if name, triggered := periodicOf(t, j); name != "nightly" || !triggered || j.Queue != "night" {
			t.Fatalf("triggered job %+v", j)
		}
	})
}

// TestPeriodicDefinitionRejected checks what Create refuses before
// anything is stored.
func TestPeriodicDefinitionRejected(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		b := setup(t, s, 1)
		set := b.client.PeriodicJobs()
		for _, d := range []drover.PeriodicDefinition{
			{Name: "", Schedule: "@hourly", Kind: "k"},
			{Name: "a", Schedule: "61 * * * *", Kind: "k"},
			{Name: "a", Schedule: "@hourly", Kind: ""},
			{Name: "a", Schedule: "@hourly", Kind: "k", Args: json.RawMessage(`[1]`)},
			{Name: "a", Schedule: "@hourly", Kind: "k", Queue: "bad queue"},
			{Name: "a", Schedule: "@hourly", Kind: "k", MaxAttempts: -1},
		} {
			if _, err := set.Create(ctx, d); !errors.Is(err, drover.ErrInvalid) {
				t.Errorf("create %+v: %v, want ErrInvalid", d, err)
			}
		}
		if all, err := set.List(ctx); err != nil || len(all) != 0 {
			t.Fatalf("stored after rejected creates: %d, %v", len(all), err)
		}
		ok := drover.PeriodicDefinition{Name: "a", Schedule: "@hourly", Kind: "k"}
		if _, err := set.Create(ctx, ok); err != nil {
			t.Fatal(err)
		}
		if _, err := set.Create(ctx, ok); !errors.Is(err, drover.ErrPeriodicExists) {
			t.Fatalf("second create: %v", err)
		}
		ok.Schedule = "@daily"
		if st, err := set.Update(ctx, ok); err != nil || st.Schedule != "@daily" {
			t.Fatalf("update: %+v, %v", st, err)
		}
		if err := set.Delete(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if err := set.Delete(ctx, "a"); !errors.Is(err, drover.ErrPeriodicNotFound) {
			t.Fatalf("second delete: %v", err)
		}
		if _, err := set.Update(ctx, ok); !errors.Is(err, drover.ErrPeriodicNotFound) {
			t.Fatalf("update of a deleted one: %v", err)
		}
	})
}
