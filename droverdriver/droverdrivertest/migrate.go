package droverdrivertest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

func testMigrations(t *testing.T, fresh opener) {
	t.Run("Migrations", func(t *testing.T) {
		t.Parallel()
		d := fresh(t)
		ms := d.Migrations()
		if len(ms) == 0 || ms[0].Version != 1 {
			t.Fatalf("migrations start at %+v, want version 1", ms)
		}
		for i, m := range ms {
			if m.Version != i+1 || m.Name == "" || strings.TrimSpace(m.SQL) == "" {
				t.Errorf("migration %d: version %d name %q, %d bytes of SQL; want versions 1, 2, … with a name and SQL", i, m.Version, m.Name, len(m.SQL))
			}
		}
		if d.Name() == "" {
			t.Error("driver has no name")
		}
		if err := droverdriver.ValidateSchema(d.Schema()); err != nil {
			t.Errorf("driver's schema: %v", err)
		}
		if d.PollInterval() <= 0 {
			t.Errorf("poll interval %v", d.PollInterval())
		}
	})

	t.Run("SchemaVersion", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := fresh(t)
		version := func() int {
			t.Helper()
			v, err := d.SchemaVersion(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		if v := version(); v != 0 {
			t.Fatalf("an empty store is at version %d, want 0", v)
		}
		if _, _, err := droverdriver.MigrateUpTo(ctx, d, 2); err != nil {
			t.Fatal(err)
		}
		if v := version(); v != 2 {
			t.Fatalf("version %d after migrating to 2", v)
		}
		latest := droverdriver.LatestVersion(d)
		found, applied, err := droverdriver.MigrateUpTo(ctx, d, latest)
		if want := len(d.Migrations()) - 2; err != nil || found != 2 || len(applied) != want {
			t.Fatalf("migrating on: found %d, applied %d, %v; want found 2 and %d applied", found, len(applied), err, want)
		}
		if v := version(); v != latest {
			t.Fatalf("version %d, want %d", v, latest)
		}
		// Migrating again does nothing.
		if found, applied, err := droverdriver.MigrateUpTo(ctx, d, latest); err != nil || found != latest || len(applied) != 0 {
			t.Fatalf("migrating a migrated store: found %d, applied %d, %v", found, len(applied), err)
		}
	})

	t.Run("MigrateTx/concurrent", func(t *testing.T) {
		t.Parallel()
		// Migrators running at once apply each migration exactly once.
		ctx := context.Background()
		d := fresh(t)
		var mu sync.Mutex
		applied := map[int]int{}
		var wg sync.WaitGroup
		errs := make(chan error, 3)
		for range 3 {
			wg.Go(func() {
				_, ms, err := droverdriver.MigrateUpTo(ctx, d, droverdriver.LatestVersion(d))
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				for _, m := range ms {
					applied[m.Version]++
				}
				mu.Unlock()
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("concurrent migrate: %v", err)
		}
		if len(applied) != len(d.Migrations()) {
			t.Fatalf("applied versions %v, want all %d", applied, len(d.Migrations()))
		}
		for v, n := range applied {
			if n != 1 {
				t.Fatalf("migration %d applied %d times", v, n)
			}
		}
	})

	t.Run("MigrateTx/failure", func(t *testing.T) {
		t.Parallel()
		// A migration that fails leaves nothing of its transaction behind.
		ctx := context.Background()
		d := fresh(t)
		ms := d.Migrations()
		err := d.MigrateTx(ctx, func(ctx context.Context, m droverdriver.Migrator) error {
			if err := m.Apply(ctx, ms[0]); err != nil {
				return err
			}
			return m.Apply(ctx, drovertype.Migration{Version: 2, Name: "broken", SQL: "SELECT no_such_column FROM no_such_table"})
		})
		if err == nil {
			t.Fatal("a broken migration applied")
		}
		if v, err := d.SchemaVersion(ctx); err != nil || v != 0 {
			t.Fatalf("version %d, %v after a failed migration; want 0", v, err)
		}
		migrate(t, d)
	})

	t.Run("ErrSchemaMissing", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := fresh(t)
		calls := map[string]func() error{
			"JobInsertMany": func() error {
				_, err := d.Executor().JobInsertMany(ctx, []droverdriver.InsertParams{job("q")})
				return err
			},
			"JobClaim": func() error {
				_, err := d.Executor().JobClaim(ctx, droverdriver.ClaimParams{Queue: "q", Max: 1, Owner: "w", Lease: time.Minute})
				return err
			},
			"JobGet":  func() error { _, err := d.Executor().JobGet(ctx, 1); return err },
			"JobList": func() error { _, err := d.Executor().JobList(ctx, droverdriver.ListParams{Limit: 1}); return err },
			"JobFinishMany": func() error {
				_, err := d.Executor().JobFinishMany(ctx, droverdriver.FinishParams{Results: []droverdriver.Result{{ID: 1, Attempt: 1, LeaseToken: drovertype.NewLeaseToken(), Outcome: droverdriver.OutcomeCompleted}}})
				return err
			},
			"LeaderElect": func() error {
				_, err := d.Executor().LeaderElect(ctx, droverdriver.LeaderParams{Name: "x", ID: "y", TTL: time.Second})
				return err
			},
		}
		for name, call := range calls {
			if err := call(); !errors.Is(err, droverdriver.ErrSchemaMissing) || !strings.Contains(err.Error(), "drover migrate") {
				t.Errorf("%s on an empty store: %v, want ErrSchemaMissing saying to run drover migrate", name, err)
			}
		}
		// Migrating later just works.
		migrate(t, d)
		insert(t, d.Executor(), job("q"))
	})

	t.Run("ErrSchemaNewer", func(t *testing.T) {
		t.Parallel()
		// A store migrated by a newer binary reports its version, and this
		// one refuses to migrate it.
		ctx := context.Background()
		d := migrate(t, fresh(t))
		latest := droverdriver.LatestVersion(d)
		if err := d.MigrateTx(ctx, func(ctx context.Context, m droverdriver.Migrator) error {
			return m.Apply(ctx, drovertype.Migration{Version: latest + 1, Name: "from_the_future", SQL: "SELECT 1"})
		}); err != nil {
			t.Fatal(err)
		}
		if v, err := d.SchemaVersion(ctx); err != nil || v != latest+1 {
			t.Fatalf("version %d, %v; want %d", v, err, latest+1)
		}
		found, applied, err := droverdriver.MigrateUpTo(ctx, d, latest)
		if !errors.Is(err, droverdriver.ErrSchemaNewer) || found != latest+1 || len(applied) != 0 {
			t.Fatalf("migrating a newer store: found %d, applied %d, %v; want ErrSchemaNewer", found, len(applied), err)
		}
	})
}
