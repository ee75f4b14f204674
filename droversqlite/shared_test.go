package droversqlite

import (
	"context"
	"database/sql"
	"slices"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// holdRound starts a write that holds its round open until the returned
// release is called, so that the writes queued meanwhile share the next
// round; release waits for the held write.
func holdRound(t *testing.T, d *Driver) (release func()) {
	t.Helper()
	entered, done := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	go func() {
		held <- d.exec.writeTx(context.Background(), func(ctx context.Context, tx *sql.Tx) error {
			close(entered)
			<-done
			return nil
		})
	}()
	<-entered
	return func() {
		close(done)
		if err := <-held; err != nil {
			t.Fatalf("held write: %v", err)
		}
	}
}

// queueWrite runs write in a goroutine and waits until it is queued for
// the next round, the n-th write to be; its outcome comes on the channel.
func queueWrite[T any](t *testing.T, d *Driver, n int, write func() (T, error)) <-chan outcomeOf[T] {
	t.Helper()
	ch := make(chan outcomeOf[T], 1)
	go func() {
		v, err := write()
		ch <- outcomeOf[T]{v, err}
	}()
	waitfor.Cond(t, "the write queued", func() bool { return queuedWrites(d) == n })
	return ch
}

type outcomeOf[T any] struct {
	v   T
	err error
}

// TestClaimsShareARound queues plain claims of one queue, with an insert
// between them, behind a held round, and checks that they ran as one
// statement in the place of the last: the first claim takes the jobs the
// insert queued after it added, ahead of the older ones, as only a claim
// run after that insert can. Each claimer's rows, as returned and as
// stored, are under its own owner and lease token, no job is claimed
// twice, and the round commits once.
func TestClaimsShareARound(t *testing.T) {
	t.Parallel()
	d, commits := setupRounds(t)
	ctx := context.Background()
	e := &d.exec
	older := insert(t, e, job("q"), job("q"), job("q"), job("q"))
	claimFor := func(owner string, n int) func() ([]*drovertype.JobRow, error) {
		return func() ([]*drovertype.JobRow, error) {
			return e.JobClaim(ctx, droverdriver.ClaimParams{Queue: "q", Max: n, Owner: owner, Lease: time.Minute})
		}
	}
	urgent := job("q")
	urgent.Priority = -1

	release := holdRound(t, d)
	a := queueWrite(t, d, 1, claimFor("a", 2))
	inserted := queueWrite(t, d, 2, func() ([]int64, error) { return e.JobInsertMany(ctx, []droverdriver.InsertParams{urgent, urgent}) })
	b := queueWrite(t, d, 3, claimFor("b", 3))
	before := commits.Load()
	release()
	ins := <-inserted
	if ins.err != nil {
		t.Fatal(ins.err)
	}
	if got := commits.Load() - before; got != 2 {
		t.Errorf("%d commits for the held round and the writes queued behind it, want 2", got)
	}

	want := map[string][]int64{"a": ins.v, "b": older[:3]}
	seen := map[int64]string{}
	var tokens []drovertype.LeaseToken
	for owner, ch := range map[string]<-chan outcomeOf[[]*drovertype.JobRow]{"a": a, "b": b} {
		got := <-ch
		if got.err != nil {
			t.Fatalf("claim of %s: %v", owner, got.err)
		}
		if !slices.Equal(ids(got.v), want[owner]) {
			t.Errorf("%s claimed %v, want %v", owner, ids(got.v), want[owner])
		}
		token := got.v[0].LeaseToken
		if slices.Contains(tokens, token) {
			t.Errorf("%s's lease token is another claimer's", owner)
		}
		tokens = append(tokens, token)
		for _, j := range got.v {
			if other, ok := seen[j.ID]; ok {
				t.Errorf("job %d claimed by %s and %s", j.ID, other, owner)
			}
			seen[j.ID] = owner
			stored := get(t, e, j.ID)
			var storedToken []byte
			if err := d.reader.QueryRowContext(ctx, "SELECT lease_token FROM "+d.schema+"_jobs WHERE id = ?", j.ID).Scan(&storedToken); err != nil {
				t.Fatal(err)
			}
			if j.LeaseOwner != owner || j.LeaseToken != token || stored.LeaseOwner != owner || string(storedToken) != string(token[:]) ||
				stored.State != drovertype.JobStateRunning || stored.Attempt != 1 {
				t.Errorf("job %d claimed by %s: returned owner %q, stored %q in state %s, attempt %d, stored token its own %v",
					j.ID, owner, j.LeaseOwner, stored.LeaseOwner, stored.State, stored.Attempt, string(storedToken) == string(token[:]))
			}
		}
	}
	if left := get(t, e, older[3]); left.State != drovertype.JobStateAvailable {
		t.Errorf("the job no claim had room for is %s, want available", left.State)
	}
}

// TestFinishesShareARound claims three jobs for three owners and queues
// their finishes behind a held round, with a write between the first two
// that records whether the first job was still unfinished, and checks
// that the finishes that pass their fences ran as one batch in the place
// of the last (the write between saw the first job still running) and
// landed; and that a finish with a stale lease token, which loses the
// shared batch's bet, fails alone: the others' results land, its job is
// left running.
func TestFinishesShareARound(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// stale gives the third result a token that is not its job's.
		stale bool
	}{
		{name: "every result passes"},
		{name: "a stale result fails alone", stale: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, _ := setupRounds(t)
			ctx := context.Background()
			e := &d.exec
			insert(t, e, job("q"), job("q"), job("q"))
			var results []droverdriver.Result
			for _, owner := range []string{"a", "b", "c"} {
				rows, err := e.JobClaim(ctx, droverdriver.ClaimParams{Queue: "q", Max: 1, Owner: owner, Lease: time.Minute})
				if err != nil || len(rows) != 1 {
					t.Fatalf("claim for %s: %d rows, %v", owner, len(rows), err)
				}
				r := rows[0]
				results = append(results, droverdriver.Result{ID: r.ID, Attempt: r.Attempt, LeaseToken: r.LeaseToken,
					Outcome: droverdriver.OutcomeCompleted, Queue: r.Queue})
			}
			if tt.stale {
				results[2].LeaseToken = drovertype.NewLeaseToken()
			}
			finish := func(r droverdriver.Result) func() (droverdriver.FinishResult, error) {
				return func() (droverdriver.FinishResult, error) {
					return e.JobFinishMany(ctx, droverdriver.FinishParams{Results: []droverdriver.Result{r}, Refuse: droverdriver.FlowEnd})
				}
			}

			release := holdRound(t, d)
			first := queueWrite(t, d, 1, finish(results[0]))
			between := queueWrite(t, d, 2, func() (struct{}, error) {
				return struct{}{}, e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
					_, err := tx.ExecContext(ctx, "INSERT INTO t SELECT 'first running' FROM "+d.schema+"_jobs WHERE id = ?", results[0].ID)
					return err
				})
			})
			second := queueWrite(t, d, 3, finish(results[1]))
			third := queueWrite(t, d, 4, finish(results[2]))
			release()
			if got := <-between; got.err != nil {
				t.Fatal(got.err)
			}
			for i, ch := range []<-chan outcomeOf[droverdriver.FinishResult]{first, second, third} {
				got := <-ch
				lost := tt.stale && i == 2
				switch {
				case got.err != nil:
					t.Errorf("finish %d: %v", i, got.err)
				case got.v.All == lost || len(got.v.Applied) != 0:
					t.Errorf("finish %d: %+v, want all applied: %v", i, got.v, !lost)
				}
				want := drovertype.JobStateCompleted
				if lost {
					want = drovertype.JobStateRunning
				}
				if j := get(t, e, results[i].ID); j.State != want {
					t.Errorf("job of finish %d is %s, want %s", i, j.State, want)
				}
			}
			if keys := tableKeys(t, d); !slices.Contains(keys, "first running") {
				t.Errorf("the write queued after the first finish saw its job finished: it did not share the last one's place")
			}
		})
	}
}

// TestInsertsShareARound queues a one-job insert, a write that records
// how many jobs it sees, and a two-job insert behind a held round, and
// checks that the inserts ran as one in the place of the first (the write
// between them saw all three jobs), that each caller got its own jobs'
// IDs, in order, and JobInsert its job as stored.
func TestInsertsShareARound(t *testing.T) {
	t.Parallel()
	d, _ := setupRounds(t)
	ctx := context.Background()
	e := &d.exec
	one, two, three := job("q"), job("q"), job("q")
	one.Kind, two.Kind, three.Kind = "one", "two", "three"

	release := holdRound(t, d)
	first := queueWrite(t, d, 1, func() (*drovertype.JobRow, error) { return e.JobInsert(ctx, one) })
	between := queueWrite(t, d, 2, func() (struct{}, error) {
		return struct{}{}, e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "INSERT INTO t SELECT 'saw ' || count(*) FROM "+d.schema+"_jobs")
			return err
		})
	})
	second := queueWrite(t, d, 3, func() ([]int64, error) { return e.JobInsertMany(ctx, []droverdriver.InsertParams{two, three}) })
	release()
	if got := <-between; got.err != nil {
		t.Fatal(got.err)
	}
	row, many := <-first, <-second
	if row.err != nil || many.err != nil {
		t.Fatalf("inserts: %v, %v", row.err, many.err)
	}
	if row.v == nil || row.v.Kind != "one" || row.v.State != drovertype.JobStateAvailable {
		t.Fatalf("JobInsert returned %+v, want its job as stored", row.v)
	}
	for i, id := range append([]int64{row.v.ID}, many.v...) {
		if j := get(t, e, id); j.Kind != []string{"one", "two", "three"}[i] {
			t.Errorf("ID %d is a job of kind %s, want %s", id, j.Kind, []string{"one", "two", "three"}[i])
		}
	}
	if len(many.v) != 2 || many.v[1] != many.v[0]+1 {
		t.Errorf("JobInsertMany's IDs %v, want two in a row", many.v)
	}
	if keys := tableKeys(t, d); !slices.Contains(keys, "saw 3") {
		t.Errorf("the write queued between the inserts saw %v, want all three jobs: the inserts did not run as one in the first's place", keys)
	}
}
