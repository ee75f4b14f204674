package drovertest_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/drovertest"
	"github.com/droverhq/drover/internal/testkit/testdb"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(testdb.M(m)) }

// store opens a migrated store of its own for one test, and begins the
// test's transactions on it, rolled back when the test ends.
type store[TTx any] struct {
	name     string
	open     func(t *testing.T) droverdriver.TxDriver[TTx]
	begin    func(t *testing.T, d droverdriver.TxDriver[TTx]) TTx
	commit   func(t *testing.T, tx TTx)
	rollback func(t *testing.T, tx TTx)
}

var pgStore = store[pgx.Tx]{
	name: "postgres",
	open: func(t *testing.T) droverdriver.TxDriver[pgx.Tx] {
		d, err := droverpg.New(testdb.NewPool(t), droverpg.WithSchema(testdb.NewSchema(t)))
		if err != nil {
			t.Fatal(err)
		}
		return migrated(t, d)
	},
	begin: func(t *testing.T, d droverdriver.TxDriver[pgx.Tx]) pgx.Tx {
		tx, err := d.(*droverpg.Driver).Pool().Begin(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
		return tx
	},
	commit: func(t *testing.T, tx pgx.Tx) {
		if err := tx.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
	},
	rollback: func(t *testing.T, tx pgx.Tx) {
		if err := tx.Rollback(context.Background()); err != nil {
			t.Fatal(err)
		}
	},
}

var sqliteStore = store[*sql.Tx]{
	name: "sqlite",
	open: func(t *testing.T) droverdriver.TxDriver[*sql.Tx] {
		d, err := droversqlite.Open(context.Background(), filepath.Join(t.TempDir(), "drover.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Close() })
		return migrated(t, d)
	},
	begin: func(t *testing.T, d droverdriver.TxDriver[*sql.Tx]) *sql.Tx {
		tx, err := d.(*droversqlite.Driver).DB().BeginTx(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tx.Rollback() })
		return tx
	},
	commit: func(t *testing.T, tx *sql.Tx) {
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	},
	rollback: func(t *testing.T, tx *sql.Tx) {
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
	},
}

func migrated[D droverdriver.Driver](t *testing.T, d D) D {
	t.Helper()
	if _, err := drover.Migrate(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	return d
}

// bothStores runs the test once per store, each in parallel.
func bothStores(t *testing.T, pg func(*testing.T, store[pgx.Tx]), lite func(*testing.T, store[*sql.Tx])) {
	t.Helper()
	t.Run("postgres", func(t *testing.T) { t.Parallel(); pg(t, pgStore) })
	t.Run("sqlite", func(t *testing.T) { t.Parallel(); lite(t, sqliteStore) })
}

// bundle is a store, a client on it with the test workers, and the
// client's clock.
type bundle[TTx any] struct {
	s      store[TTx]
	d      droverdriver.TxDriver[TTx]
	client *drover.Client[TTx]
	clock  *drovertest.Clock
	rec    *recorder
}

// setup opens a store and a client with the test workers on a clock
// stopped at start (zero: now).
func setup[TTx any](t *testing.T, s store[TTx], start time.Time, mutate ...func(*drover.Config)) *bundle[TTx] {
	t.Helper()
	b := &bundle[TTx]{s: s, d: s.open(t), clock: drovertest.NewClock(start), rec: &recorder{}}
	cfg := &drover.Config{
		Workers:     b.workers(),
		Clock:       b.clock,
		Logger:      slog.New(slog.DiscardHandler),
		RetryPolicy: func(attempt int) time.Duration { return time.Duration(attempt) * time.Minute },
	}
	for _, m := range mutate {
		m(cfg)
	}
	client, err := drover.NewClient(b.d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.client = client
	return b
}

// Test job kinds.

type EmailArgs struct {
	To      string `json:"to"`
	Subject string `json:"subject,omitempty"`
}

func (EmailArgs) Kind() string { return "email" }

// StepArgs runs as its fields say.
type StepArgs struct {
	Name string `json:"name"`
	// Fail fails this many attempts first; -1 always.
	Fail  int  `json:"fail,omitempty"`
	Panic bool `json:"panic,omitempty"`
	// Block waits for the context to end (a timeout).
	Block  bool `json:"block,omitempty"`
	Cancel bool `json:"cancel,omitempty"`
	// Then inserts these steps into the same queue when it completes.
	Then []string `json:"then,omitempty"`
}

func (StepArgs) Kind() string { return "step" }

// recorder remembers the steps that ran, in order.
type recorder struct{ ran []string }

func (b *bundle[TTx]) workers() *drover.Workers {
	w := drover.NewWorkers()
	drover.AddWorker(w, drover.WorkFunc(func(ctx context.Context, j *drover.Job[EmailArgs]) error { return nil }))
	drover.AddWorker(w, drover.WorkFunc(func(ctx context.Context, j *drover.Job[StepArgs]) error {
		a := j.Args
		b.rec.ran = append(b.rec.ran, a.Name)
		switch {
		case a.Panic:
			panic("step " + a.Name + " exploded")
		case a.Block:
			<-ctx.Done()
			return ctx.Err()
		case a.Cancel:
			return drover.Cancel(errors.New("not wanted"))
		case a.Fail < 0 || j.Attempt <= a.Fail:
			return fmt.Errorf("step %s failed attempt %d", a.Name, j.Attempt)
		}
		for _, next := range a.Then {
			if _, err := b.client.Insert(ctx, StepArgs{Name: next}, &drover.InsertOpts{Queue: j.Queue}); err != nil {
				return err
			}
		}
		return nil
	}))
	return w
}

// fakeTB records a helper's failure instead of failing the test, so that
// the tests can check what fails and what it says.
type fakeTB struct {
	failed bool
	msg    string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Fatalf(format string, args ...any) {
	if !f.failed {
		f.failed, f.msg = true, fmt.Sprintf(format, args...)
	}
}

// wantFail checks that a helper failed with a message holding each of
// want, or passed when want is empty.
func (f *fakeTB) check(t *testing.T, name string, want []string) {
	t.Helper()
	switch {
	case len(want) == 0 && f.failed:
		t.Errorf("%s failed: %s", name, f.msg)
	case len(want) > 0 && !f.failed:
		t.Errorf("%s passed, want a failure saying %q", name, want)
	}
	for _, w := range want {
		if !strings.Contains(f.msg, w) {
			t.Errorf("%s: %q does not say %q", name, f.msg, w)
		}
	}
}
