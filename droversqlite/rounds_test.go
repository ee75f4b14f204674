package droversqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"modernc.org/sqlite"

	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// roundWrite is one caller's write in TestWritesShareARound: the rows of
// the table t it inserts, in its own write transaction as writeTx gives it.
type roundWrite struct {
	rows []string
	// rollback ends the whole SQLite transaction from inside the write, as
	// an I/O error or a full disk would.
	rollback bool
	// cancel ends the caller's context once the write is queued.
	cancel bool
	// wantErr checks the caller's outcome; nil: it succeeded and its rows
	// are committed, else none of them are.
	wantErr func(error) bool
}

// TestWritesShareARound queues writes of several callers behind a round
// that is held open, so that they share the next write transaction, and
// checks that each caller gets its own outcome: one caller's failed
// statement rolls back its own work alone, the others' commits, in one
// commit; a write that takes the whole transaction down fails the writes
// before it, whose work went with it, and those after it run in the next
// round; a caller whose context ends while it waits writes nothing.
func TestWritesShareARound(t *testing.T) {
	t.Parallel()
	constraint := func(err error) bool {
		var sqlErr *sqlite.Error
		return errors.As(err, &sqlErr) && sqlErr.Code()&0xff == sqliteConstraint
	}
	lost := func(err error) bool {
		var l txLostError
		return errors.As(err, &l)
	}
	tests := []struct {
		name   string
		writes []roundWrite
		// commits counts the commits after the held round's own.
		commits int
	}{
		{
			name: "a broken constraint fails its caller alone",
			writes: []roundWrite{
				{rows: []string{"a1", "a2"}},
				{rows: []string{"b1", "taken"}, wantErr: constraint},
				{rows: []string{"c1"}},
			},
			commits: 1,
		},
		{
			name: "a lost transaction fails the writes before it, those after run again",
			writes: []roundWrite{
				{rows: []string{"a1"}, wantErr: lost},
				{rows: []string{"b1"}, rollback: true, wantErr: lost},
				{rows: []string{"c1"}},
				{rows: []string{"d1"}},
			},
			commits: 1,
		},
		{
			name: "a cancelled caller writes nothing",
			writes: []roundWrite{
				{rows: []string{"a1"}},
				{rows: []string{"b1"}, cancel: true, wantErr: func(err error) bool { return errors.Is(err, context.Canceled) }},
				{rows: []string{"c1"}},
			},
			commits: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, commits := setupRounds(t)
			ctx := context.Background()

			// A write that holds its round open until released: every
			// write after it queues for the next round.
			entered, release := make(chan struct{}), make(chan struct{})
			held := make(chan error, 1)
			go func() {
				held <- d.exec.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
					if _, err := tx.ExecContext(ctx, "INSERT INTO t VALUES ('held')"); err != nil {
						return err
					}
					close(entered)
					<-release
					return nil
				})
			}()
			<-entered

			outcomes := make([]chan error, len(tt.writes))
			queued := 0
			for i, w := range tt.writes {
				wctx, cancel := context.WithCancel(ctx)
				defer cancel()
				outcomes[i] = make(chan error, 1)
				go func() {
					outcomes[i] <- d.exec.writeTx(wctx, func(ctx context.Context, tx *sql.Tx) error {
						for _, k := range w.rows {
							if _, err := tx.ExecContext(ctx, "INSERT INTO t VALUES (?)", k); err != nil {
								return err
							}
						}
						if w.rollback {
							_, err := tx.ExecContext(ctx, "ROLLBACK")
							return err
						}
						return nil
					})
				}()
				queued++
				waitfor.Cond(t, "the write queued", func() bool { return queuedWrites(d) == queued })
				if w.cancel {
					cancel()
					// Its outcome comes at once, while the round it
					// waited for is still held.
					err := <-outcomes[i]
					outcomes[i] <- err
					queued--
				}
			}
			before := commits.Load()
			close(release)
			if err := <-held; err != nil {
				t.Fatalf("held write: %v", err)
			}

			want := []string{"held", "taken"}
			for i, w := range tt.writes {
				err := <-outcomes[i]
				switch {
				case w.wantErr == nil && err != nil:
					t.Errorf("write %d: %v, want it committed", i, err)
				case w.wantErr != nil && !w.wantErr(err):
					t.Errorf("write %d: err = %v, want its own failure", i, err)
				case w.wantErr == nil:
					want = append(want, w.rows...)
				}
			}
			if got := commits.Load() - before; got != 1+int64(tt.commits) {
				t.Errorf("%d commits for the held round and the writes queued behind it, want %d", got, 1+tt.commits)
			}
			got := tableKeys(t, d)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("committed rows %v, want %v", got, want)
			}
		})
	}
}

// setupRounds opens a driver on a new file with a table t of unique keys
// holding "taken", and counts the commits of its writer connection.
func setupRounds(t *testing.T) (*Driver, *atomic.Int64) {
	t.Helper()
	ctx := context.Background()
	d := open(t, filepath.Join(t.TempDir(), "rounds.db"))
	migrate(t, d)
	if _, err := d.writer.ExecContext(ctx, "CREATE TABLE t (k TEXT PRIMARY KEY); INSERT INTO t VALUES ('taken')"); err != nil {
		t.Fatal(err)
	}
	var commits atomic.Int64
	conn, err := d.writer.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		dc.(sqlite.HookRegisterer).RegisterCommitHook(func() int32 {
			commits.Add(1)
			return 0
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return d, &commits
}

// tableKeys returns the keys committed to t, sorted.
func tableKeys(t *testing.T, d *Driver) []string {
	t.Helper()
	rows, err := d.reader.QueryContext(context.Background(), "SELECT k FROM t ORDER BY k")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return keys
}

// queuedWrites is how many writes wait for the next round of d.
func queuedWrites(d *Driver) int {
	d.rounds.mu.Lock()
	defer d.rounds.mu.Unlock()
	return len(d.rounds.queue)
}

// TestConcurrentWritesKeepTheirOutcomes runs writes from many goroutines
// at once, some breaking a constraint and some cancelled as they queue or
// run, and checks that the rows committed are exactly those of the writes
// that returned no error: whatever rounds they shared, a write that
// succeeded is committed and one that failed left nothing.
func TestConcurrentWritesKeepTheirOutcomes(t *testing.T) {
	t.Parallel()
	d, _ := setupRounds(t)
	const goroutines, each = 16, 40
	type outcome struct {
		key string
		err error
	}
	results := make(chan outcome, goroutines*each)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				key := fmt.Sprintf("g%d-%d", g, i)
				ctx, cancel := context.WithCancel(context.Background())
				err := d.exec.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
					if _, err := tx.ExecContext(ctx, "INSERT INTO t VALUES (?)", key); err != nil {
						return err
					}
					if i%7 == 3 {
						_, err := tx.ExecContext(ctx, "INSERT INTO t VALUES ('taken')")
						return err
					}
					if i%5 == 1 {
						cancel() // while it runs: rolled back
					}
					return nil
				})
				if i%9 == 4 {
					cancel() // after it returned: changes nothing
				}
				cancel()
				results <- outcome{key, err}
			}
		}()
	}
	wg.Wait()
	close(results)
	var want []string
	failed := 0
	for r := range results {
		if r.err == nil {
			want = append(want, r.key)
		} else {
			failed++
		}
	}
	if failed == 0 || len(want) == 0 {
		t.Fatalf("%d writes failed and %d succeeded: want some of each", failed, len(want))
	}
	want = append(want, "taken")
	got := tableKeys(t, d)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%d rows committed, want the %d of the writes that succeeded", len(got), len(want))
	}
}
