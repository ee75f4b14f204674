package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/internal/app/storeurl"
)

// execSQL runs a script of statements on the fixture's store, as a
// migration tool of the user's would.
func (f *fixture) execSQL(t *testing.T, st *storeurl.Store, script string) {
	t.Helper()
	ctx := context.Background()
	var err error
	switch d := st.Driver.(type) {
	case *droverpg.Driver:
		_, err = d.Pool().Exec(ctx, script)
	case *droversqlite.Driver:
		_, err = d.DB().ExecContext(ctx, script)
	default:
		t.Fatalf("no way to run SQL on %T", d)
	}
	if err != nil {
		t.Fatalf("run printed SQL: %v", err)
	}
}

// tables lists the store's Drover tables and indexes (SQLite) or tables
// (PostgreSQL, where indexes live and die with their tables).
func (f *fixture) tables(t *testing.T, st *storeurl.Store) []string {
	t.Helper()
	ctx := context.Background()
	var names []string
	switch d := st.Driver.(type) {
	case *droverpg.Driver:
		rows, err := d.Pool().Query(ctx, `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = $1 ORDER BY 1`, f.schema)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			names = append(names, n)
		}
	case *droversqlite.Driver:
		rows, err := d.DB().QueryContext(ctx, `SELECT name FROM sqlite_master WHERE name LIKE ? ESCAPE '\' ORDER BY 1`, f.schema+"\\_%")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			names = append(names, n)
		}
	}
	return names
}

// TestMigrationsDownAndUpAgain: on both stores, whatever migrations exist,
// the printed down migrations undo every up migration, newest first,
// leaving no Drover table behind but Drover's own version table, and the
// ups then apply again, printed or through drover migrate.
func TestMigrationsDownAndUpAgain(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := b.setup(t).migrated(t)
			f.enqueue(t, "k", `{}`, "--count", "3")
			st, _ := f.open(t)
			versionTable := []string{"schema_migrations", "schema_migrations_pkey"}
			if b.name == "sqlite" {
				versionTable = []string{f.schema + "_schema_migrations"}
			}
			up := f.mustRun(t, "migrate", "--sql")
			down := f.mustRun(t, "migrate", "--sql", "--down")
			if n, want := strings.Count(down, "\n-- 0"), len(st.Driver.Migrations()); n != want {
				t.Fatalf("--down printed %d migrations, want %d:\n%s", n, want, down)
			}

			f.execSQL(t, st, down)
			if got := f.tables(t, st); !slices.Equal(got, versionTable) {
				t.Fatalf("after every down migration the store holds %v, want only %v", got, versionTable)
			}
			// As if the user's tool had never been Drover's: no version table.
			f.execSQL(t, st, "DROP TABLE "+tablePrefix(st.Driver.Migrations())+"schema_migrations")
			f.execSQL(t, st, up)
			if got := f.tables(t, st); len(got) < 5 {
				t.Fatalf("printed up migrations made only %v", got)
			}
			f.execSQL(t, st, down)
			if got := f.tables(t, st); len(got) != 0 {
				t.Fatalf("after the downs again the store holds %v", got)
			}
			f.migrated(t)
			if ids := f.enqueue(t, "k", `{}`); len(ids) != 1 {
				t.Fatalf("enqueue after migrating again printed %v", ids)
			}
		})
	}
}

// TestEachMigrationDownAndUp walks the migrations newest first on a store
// holding jobs: each down migration must apply to the schema its up
// migration left, and the up must apply again after it, so that every
// pair is checked on its own rather than only as part of dropping
// everything (where the first migration's down would hide the others').
func TestEachMigrationDownAndUp(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := b.setup(t).migrated(t)
			f.enqueue(t, "k", `{}`, "--count", "3")
			st, _ := f.open(t)
			ms := st.Driver.Migrations()
			for i := len(ms) - 1; i >= 1; i-- {
				v := fmt.Sprint(ms[i].Version)
				down := f.mustRun(t, "migrate", "--sql", "--down", "--version", v)
				up := f.mustRun(t, "migrate", "--sql", "--version", v)
				f.execSQL(t, st, down)
				f.execSQL(t, st, up)
				f.execSQL(t, st, down)
			}
		})
	}
}

func TestMigrateSQLFlags(t *testing.T) {
	f := setupSQLite(t)
	f.schema = "app"
	one := f.mustRun(t, "migrate", "--sql", "--version", "2")
	if !strings.Contains(one, "\n-- 002_flow.up.sql\n") || strings.Count(one, "\n-- 0") != 1 ||
		!strings.Contains(one, "CREATE TABLE app_batches") || strings.Contains(one, "{schema}") {
		t.Fatalf("migrate --sql --version 2:\n%s", one)
	}
	if _, err := os.Stat(strings.TrimPrefix(f.url, "sqlite://")); !os.IsNotExist(err) {
		t.Fatalf("migrate --sql created the store (stat: %v)", err)
	}
	pg := runCLI(t, nil, "--database-url", "postgres://u:pw@127.0.0.1:1/db", "--schema", "app", "migrate", "--sql", "--version", "1", "--down")
	if pg.code != exitOK || !strings.Contains(pg.stdout, "-- 001_init.down.sql\n") || !strings.Contains(pg.stdout, `DROP TABLE "app".jobs;`) {
		t.Fatalf("migrate --sql on PostgreSQL (nothing listening):\n%s", pg)
	}

	dir := filepath.Join(t.TempDir(), "migrations")
	out := f.mustRun(t, "migrate", "--dir", dir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 16 || strings.Count(out, "wrote ") != len(entries) {
		t.Fatalf("migrate --dir wrote %d files:\n%s", len(entries), out)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".up.sql") && !strings.HasSuffix(e.Name(), ".down.sql") {
			t.Errorf("unexpected file %s", e.Name())
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "001_init.down.sql"))
	if err != nil || !strings.Contains(string(b), "DROP TABLE app_jobs;") {
		t.Fatalf("001_init.down.sql = %q (%v)", b, err)
	}

	checkFailure(t, f.run(t, "migrate", "--sql", "--version", "999"), exitUsage, "drover: --version 999: no such migration (this binary has 1 to "+
		strings.TrimSpace(strings.Split(strings.Split(f.mustRun(t, "migrate", "--status"), " of ")[1], " ")[0])+")")
	checkFailure(t, f.run(t, "migrate", "--down"), exitUsage, "drover: --down: only with --sql")
	checkFailure(t, f.run(t, "migrate", "--sql", "--status"), exitUsage, "drover: --sql and --status: choose one")
}
