package drover_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// Queue settings (pause, cluster-wide limits) are stored in the database
// and applied by every claim, Go or remote, whatever the claiming client's
// own configuration says.

var remoteRaw = drover.RawArgs{KindName: "remote", JSON: []byte(`{}`)}

// remoteClaim claims up to max jobs of queue for a remote worker.
func remoteClaim(t *testing.T, c client, queue string, max int) []*drovertype.JobRow {
	t.Helper()
	jobs, err := c.Remote().Claim(context.Background(), drover.ClaimParams{Queue: queue, Max: max, Owner: "py-1", Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

func countState(t *testing.T, c client, queue string, state drovertype.JobState) int64 {
	t.Helper()
	counts, err := c.JobCountByState(context.Background(), queue)
	if err != nil {
		t.Fatal(err)
	}
	return counts[state]
}

// TestRemoteClaimRespectsStoredLimits: limits set by one client, from its
// QueueConfig at Start or with QueueSetLimits, hold for the remote claims
// of another client, which brings no configuration. Before they were
// stored settings, a remote claim ignored a limit no claim of its own
// process had written (GlobalMaxWorkers 2, a remote claim took 5 jobs).
func TestRemoteClaimRespectsStoredLimits(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := remoteSetup(t, s)
		ctx := context.Background()
		// A Go client configured with GlobalMaxWorkers 2 stores the limit
		// when it starts; it stops before any job of the queue exists.
		limiter := s.newClient(t, b.d, &drover.Config{
			Queues:  map[string]drover.QueueConfig{"limited": {MaxWorkers: 1, GlobalMaxWorkers: 2}},
			Workers: drover.NewWorkers(),
		})
		if err := limiter.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if err := limiter.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		for range 6 {
			b.insert(t, remoteRaw, &drover.InsertOpts{Queue: "limited"})
		}
		if jobs := remoteClaim(t, b.client, "limited", 5); len(jobs) != 2 {
			t.Fatalf("remote claim took %d jobs, want 2: the queue may run 2", len(jobs))
		}
		if jobs := remoteClaim(t, b.client, "limited", 5); len(jobs) != 0 {
			t.Fatalf("a second remote claim took %d jobs, want none while 2 run", len(jobs))
		}
		// Lifting the limit with QueueSetLimits, from another client,
		// reaches the remote claims once the claiming client's cache
		// hears of it (at once here: one process).
		admin := s.newClient(t, b.d, &drover.Config{})
		if _, err := admin.QueueSetLimits(ctx, "limited", drover.QueueLimits{}); err != nil {
			t.Fatal(err)
		}
		waitfor.Cond(t, "the remote claim to see the lifted limit", func() bool {
			return len(remoteClaim(t, b.client, "limited", 5)) > 0
		})
		if got := countState(t, b.client, "limited", drovertype.JobStateAvailable); got != 0 {
			t.Fatalf("%d jobs still available once the limit was lifted", got)
		}
		// A queue without stored settings is claimed as before.
		for range 3 {
			b.insert(t, remoteRaw, &drover.InsertOpts{Queue: "free"})
		}
		if jobs := remoteClaim(t, b.client, "free", 5); len(jobs) != 3 {
			t.Fatalf("claim of an unlimited queue took %d jobs, want 3", len(jobs))
		}
	})
}

// waitPausedFor waits until c's claims of queue see it paused: a remote
// claim takes nothing while a job of the queue is available. Jobs a claim
// takes before then are released; when the queue has no available job, a
// probe (of probe's kind) is inserted.
func waitPausedFor(t *testing.T, c client, queue string, probe drover.Args) {
	t.Helper()
	ctx := context.Background()
	waitfor.Cond(t, "the claims of "+queue+" to see the pause", func() bool {
		if countState(t, c, queue, drovertype.JobStateAvailable) == 0 {
			if _, err := c.Insert(ctx, probe, &drover.InsertOpts{Queue: queue}); err != nil {
				t.Fatal(err)
			}
			return false
		}
		if jobs := remoteClaim(t, c, queue, 1); len(jobs) > 0 {
			refs := []drover.AttemptRef{{ID: jobs[0].ID, Attempt: jobs[0].Attempt, LeaseToken: jobs[0].LeaseToken}}
			if _, err := c.Remote().Release(ctx, refs); err != nil {
				t.Fatal(err)
			}
			return false
		}
		return countState(t, c, queue, drovertype.JobStateAvailable) > 0
	})
}

// TestQueuePauseAcrossClients: a pause set by one client stops another
// client's workers and remote claims; running jobs finish; inserts still
// succeed; resume starts the queue again.
func TestQueuePauseAcrossClients(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 2)
		ctx := context.Background()
		admin := s.newClient(t, b.d, &drover.Config{})
		b.start(t)

		// A running job finishes although the queue is paused meanwhile.
		running := b.insert(t, scriptArgs{Sleep: "200ms"}, nil)
		waitState(t, b.client, running, drovertype.JobStateRunning)
		if err := admin.QueuePause(ctx, drover.DefaultQueue); err != nil {
			t.Fatal(err)
		}
		waitState(t, b.client, running, drovertype.JobStateCompleted)

		// Once the worker's client sees the pause, its producer claims
		// nothing: jobs inserted now stay available through its claims.
		waitPausedFor(t, b.client, drover.DefaultQueue, noopArgs{})
		held, err := b.client.Insert(ctx, noopArgs{N: 1}, nil)
		if err != nil {
			t.Fatalf("insert into a paused queue: %v", err)
		}
		claims := b.client.Stats().Claims
		waitfor.Cond(t, "the paused producer to claim twice more", func() bool { return b.client.Stats().Claims >= claims+2 })
		if row, err := b.client.JobGet(ctx, held.ID); err != nil || row.State != drovertype.JobStateAvailable {
			t.Fatalf("job inserted while paused: %v, %v; want it available", row.State, err)
		}
		if _, runs := b.rec.snapshot(); runs[held.ID] != 0 {
			t.Fatalf("job %d ran in a paused queue", held.ID)
		}
		if got, err := admin.QueueGet(ctx, drover.DefaultQueue); err != nil || !got.Paused {
			t.Fatalf("QueueGet = %+v, %v; want paused", got, err)
		}

		// Resume: the worker runs what waited, probes included.
		if err := admin.QueueResume(ctx, drover.DefaultQueue); err != nil {
			t.Fatal(err)
		}
		waitState(t, b.client, held.ID, drovertype.JobStateCompleted)
		waitfor.Cond(t, "every job of the resumed queue to finish", func() bool {
			return countState(t, b.client, drover.DefaultQueue, drovertype.JobStateAvailable) == 0
		})
	})
}

// TestQueuePauseStopsRemoteClaims: a pause reaches the remote claims of
// another client, and resume restarts them.
func TestQueuePauseStopsRemoteClaims(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := remoteSetup(t, s)
		ctx := context.Background()
		admin := s.newClient(t, b.d, &drover.Config{})
		// The remote claimer's client has read the queue's settings
		// before the pause: its cache must learn of the change.
		b.insert(t, remoteRaw, &drover.InsertOpts{Queue: "remote"})
		if jobs := remoteClaim(t, b.client, "remote", 5); len(jobs) != 1 {
			t.Fatalf("claim before the pause took %d jobs, want 1", len(jobs))
		}
		if err := admin.QueuePause(ctx, "remote"); err != nil {
			t.Fatal(err)
		}
		waitPausedFor(t, b.client, "remote", remoteRaw)
		list, err := admin.QueueList(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || list[0].Queue != "remote" || !list[0].Paused {
			t.Fatalf("QueueList = %+v, want remote paused", list)
		}
		if err := admin.QueueResume(ctx, "remote"); err != nil {
			t.Fatal(err)
		}
		waitfor.Cond(t, "the remote claim to take jobs again", func() bool {
			return len(remoteClaim(t, b.client, "remote", 5)) > 0
		})
	})
}

// TestClaimLimitsComeFromTheStore: a claim applies the limits stored for
// the queue, never the claiming client's own configuration. Before, a
// client whose QueueConfig named other limits applied its own to the
// remote claims it served (GlobalMaxWorkers 2 stored, 5 configured: a
// remote claim took 5 jobs).
func TestClaimLimitsComeFromTheStore(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := remoteSetup(t, s)
		ctx := context.Background()
		limiter := s.newClient(t, b.d, &drover.Config{
			Queues:  map[string]drover.QueueConfig{"limited": {MaxWorkers: 1, GlobalMaxWorkers: 2}},
			Workers: drover.NewWorkers(),
		})
		if err := limiter.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if err := limiter.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		for range 6 {
			b.insert(t, remoteRaw, &drover.InsertOpts{Queue: "limited"})
		}
		// A client configured with another limit, never started, serves
		// remote claims (as a server process configured by mistake would).
		other := s.newClient(t, b.d, &drover.Config{
			Queues:  map[string]drover.QueueConfig{"limited": {MaxWorkers: 1, GlobalMaxWorkers: 5}},
			Workers: drover.NewWorkers(),
		})
		if jobs := remoteClaim(t, other, "limited", 5); len(jobs) != 2 {
			t.Fatalf("remote claim took %d jobs, want 2: the stored limit is 2", len(jobs))
		}
	})
}

// TestQueuePauseKindAcrossClients: a kind paused within a queue by one
// client stops that kind in another client's workers and in remote
// claims, while the queue's other kinds run on; a running job of the kind
// finishes; inserts of it still succeed; resume starts it again. The
// pause is stored: QueueGet and QueueList report it, from either client,
// and pausing and resuming the whole queue leaves it.
func TestQueuePauseKindAcrossClients(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 4)
		ctx := context.Background()
		admin := s.newClient(t, b.d, &drover.Config{})
		b.start(t)

		// A running job of the kind finishes although its kind is paused
		// meanwhile.
		running := b.insert(t, scriptArgs{Sleep: "200ms"}, nil)
		waitState(t, b.client, running, drovertype.JobStateRunning)
		if err := admin.QueuePauseKind(ctx, drover.DefaultQueue, "test.script"); err != nil {
			t.Fatal(err)
		}
		waitState(t, b.client, running, drovertype.JobStateCompleted)

		// Once the worker's client sees the pause, no script job starts,
		// by its workers or by a remote claim of the same client, while
		// noop jobs inserted after them still run.
		waitfor.Cond(t, "the claims of default to leave test.script", func() bool {
			id := b.insert(t, scriptArgs{}, nil)
			if jobs := remoteClaim(t, b.client, drover.DefaultQueue, 10); len(jobs) > 0 {
				refs := make([]drover.AttemptRef, len(jobs))
				for i, j := range jobs {
					refs[i] = drover.AttemptRef{ID: j.ID, Attempt: j.Attempt, LeaseToken: j.LeaseToken}
				}
				if _, err := b.client.Remote().Release(ctx, refs); err != nil {
					t.Fatal(err)
				}
				return false
			}
			row, err := b.client.JobGet(ctx, id)
			return err == nil && row.State == drovertype.JobStateAvailable
		})
		var held []int64
		for range 3 {
			held = append(held, b.insert(t, scriptArgs{}, nil))
		}
		other := b.insert(t, noopArgs{N: 1}, nil)
		waitState(t, b.client, other, drovertype.JobStateCompleted)
		if jobs := remoteClaim(t, b.client, drover.DefaultQueue, 10); len(jobs) != 0 {
			t.Fatalf("a remote claim took %d jobs of a paused kind", len(jobs))
		}
		claims := b.client.Stats().Claims
		waitfor.Cond(t, "the producer to claim twice more", func() bool { return b.client.Stats().Claims >= claims+2 })
		_, runs := b.rec.snapshot()
		for _, id := range held {
			if row, err := b.client.JobGet(ctx, id); err != nil || row.State != drovertype.JobStateAvailable || runs[id] != 0 {
				t.Fatalf("job %d of the paused kind: %v, %v, ran %d times; want it available, never run", id, row.State, err, runs[id])
			}
		}
		got, err := admin.QueueGet(ctx, drover.DefaultQueue)
		if err != nil || got.Paused || !slices.Equal(got.PausedKinds, []string{"test.script"}) {
			t.Fatalf("QueueGet = %+v, %v; want the queue running and test.script paused", got, err)
		}
		list, err := b.client.QueueList(ctx)
		if err != nil || len(list) != 1 || !slices.Equal(list[0].PausedKinds, []string{"test.script"}) {
			t.Fatalf("QueueList = %+v, %v; want default with test.script paused", list, err)
		}
		// Pausing and resuming the whole queue leaves the kind paused.
		if err := admin.QueuePause(ctx, drover.DefaultQueue); err != nil {
			t.Fatal(err)
		}
		if err := admin.QueueResume(ctx, drover.DefaultQueue); err != nil {
			t.Fatal(err)
		}
		if got, err := admin.QueueGet(ctx, drover.DefaultQueue); err != nil || !slices.Equal(got.PausedKinds, []string{"test.script"}) {
			t.Fatalf("after pausing and resuming the queue: %+v, %v; want test.script still paused", got, err)
		}

		// Resume: every job of the kind runs.
		if err := admin.QueueResumeKind(ctx, drover.DefaultQueue, "test.script"); err != nil {
			t.Fatal(err)
		}
		for _, id := range held {
			waitState(t, b.client, id, drovertype.JobStateCompleted)
		}
		if got, err := admin.QueueGet(ctx, drover.DefaultQueue); err != nil || got.PausedKinds != nil {
			t.Fatalf("after resume: %+v, %v; want no paused kinds", got, err)
		}
	})
}

// TestQueuePauseKindRejectsBadNames: a bad queue or kind name is an
// error naming it, and nothing is stored.
func TestQueuePauseKindRejectsBadNames(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 1)
		ctx := context.Background()
		for _, tc := range []struct{ queue, kind, want string }{
			{"default", "no spaces", `kind "no spaces"`},
			{"default", "", `kind ""`},
			{"no spaces", "test.noop", `queue "no spaces"`},
		} {
			err := b.client.QueuePauseKind(ctx, tc.queue, tc.kind)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("pause %q in %q: %v; want an error naming %s", tc.kind, tc.queue, err, tc.want)
			}
		}
		if list, err := b.client.QueueList(ctx); err != nil || len(list) != 0 {
			t.Fatalf("QueueList = %+v, %v; want nothing stored", list, err)
		}
	})
}
