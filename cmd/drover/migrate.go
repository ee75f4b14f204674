package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/storeurl"
)

// migrationJSON is one migration in `drover migrate --json`.
type migrationJSON struct {
	Version int    `json:"version"`
	Name    string `json:"name"`
}

func (c *cli) migrateCommand() *cobra.Command {
	var status, asJSON bool
	var sf sqlFlags
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Create or upgrade Drover's schema, or print its SQL",
		Long: `migrate brings the store's schema to the latest version this binary knows.

It is idempotent and safe to run from several processes at once: each
migration is applied exactly once. With --status it only reports the version.

With --sql it connects to nothing and prints the SQL of each migration for the
store kind of --database-url (PostgreSQL or SQLite), with --schema substituted,
for a migration tool of your own: --down prints the down migrations, newest
first; --version N only migration N; --dir DIR writes NNN_name.up.sql and
NNN_name.down.sql files instead.`,
		Args: argsNamed(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			sf.sql = sf.sql || sf.dir != ""
			if err := sf.check(status); err != nil {
				return err
			}
			if sf.sql {
				return c.printMigrations(cmd, sf, asJSON)
			}
			st, err := c.openStore(ctx, false)
			if err != nil {
				return err
			}
			defer st.Close()
			schema := st.Driver.Schema()
			out := cmd.OutOrStdout()

			if status {
				version, latest, err := drover.MigrationStatus(ctx, st.Driver)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(out, struct {
						Schema   string `json:"schema"`
						Version  int    `json:"version"`
						Latest   int    `json:"latest"`
						UpToDate bool   `json:"up_to_date"`
					}{schema, version, latest, version == latest})
				}
				switch {
				case version < latest:
					_, err = fmt.Fprintf(out, "schema %q: version %d of %d (run: drover migrate)\n", schema, version, latest)
				case version > latest:
					// Reported, then refused: a script that checks the
					// status must not go on with a binary that is too old.
					if _, err := fmt.Fprintf(out, "schema %q: version %d, newer than this binary's %d\n", schema, version, latest); err != nil {
						return err
					}
					return droverdriver.CheckSchemaVersion(schema, version, latest)
				default:
					_, err = fmt.Fprintf(out, "schema %q: version %d of %d\n", schema, version, latest)
				}
				return err
			}

			res, err := drover.Migrate(ctx, st.Driver)
			if err != nil {
				return err
			}
			if asJSON {
				applied := make([]migrationJSON, len(res.Applied))
				for i, m := range res.Applied {
					applied[i] = migrationJSON{Version: m.Version, Name: m.Name}
				}
				return writeJSON(out, struct {
					Schema  string          `json:"schema"`
					Applied []migrationJSON `json:"applied"`
					Version int             `json:"version"`
				}{schema, applied, res.Version})
			}
			if len(res.Applied) == 0 {
				_, err = fmt.Fprintf(out, "schema %q is up to date at version %d\n", schema, res.Version)
				return err
			}
			for _, m := range res.Applied {
				if _, err := fmt.Fprintf(out, "applied %03d_%s\n", m.Version, m.Name); err != nil {
					return err
				}
			}
			return nil
		},
	}
	markNeedsStore(cmd)
	cmd.Flags().BoolVar(&status, "status", false, "only report the schema's version and the latest one")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.Flags().BoolVar(&sf.sql, "sql", false, "print each migration's SQL instead of applying it; connects to nothing")
	cmd.Flags().BoolVar(&sf.down, "down", false, "with --sql: the down migrations, newest first")
	cmd.Flags().IntVar(&sf.version, "version", 0, "with --sql: only migration N")
	cmd.Flags().StringVar(&sf.dir, "dir", "", "write NNN_name.up.sql and NNN_name.down.sql files to this directory (implies --sql)")
	return cmd
}

// sqlFlags are migrate's flags for printing migrations.
type sqlFlags struct {
	sql, down bool
	version   int
	dir       string
}

func (f sqlFlags) check(status bool) error {
	switch {
	case !f.sql && f.down:
		return usagef("--down: only with --sql")
	case !f.sql && f.version != 0:
		return usagef("--version: only with --sql")
	case f.sql && status:
		return usagef("--sql and --status: choose one")
	case f.version < 0:
		return usagef("--version %d: must be a migration number", f.version)
	case f.dir != "" && f.down:
		return usagef("--down and --dir: --dir writes both directions")
	}
	return nil
}

// migrationFile is how a migration is named in --sql output and in --dir.
func migrationFile(m drovertype.Migration, dir string) string {
	return fmt.Sprintf("%03d_%s.%s.sql", m.Version, m.Name, dir)
}

// printMigrations is `drover migrate --sql`: the migrations' SQL as the
// driver would run it, for a user's own migration tool.
func (c *cli) printMigrations(cmd *cobra.Command, f sqlFlags, asJSON bool) error {
	all, err := storeurl.Migrations(cmd.Context(), c.target, c.schema)
	if err != nil {
		return err
	}
	ms := all
	if f.version != 0 {
		i := slices.IndexFunc(all, func(m drovertype.Migration) bool { return m.Version == f.version })
		if i < 0 {
			return usagef("--version %d: no such migration (this binary has %d to %d)", f.version, all[0].Version, all[len(all)-1].Version)
		}
		ms = all[i : i+1]
	}
	if f.down {
		ms = slices.Clone(ms)
		slices.Reverse(ms)
		for _, m := range ms {
			if m.Down == "" {
				return fmt.Errorf("migration %03d_%s has no down migration", m.Version, m.Name)
			}
		}
	}
	out := cmd.OutOrStdout()
	if f.dir != "" {
		return writeMigrations(out, c.stderr, f.dir, ms)
	}
	if asJSON {
		type migration struct {
			Version int    `json:"version"`
			Name    string `json:"name"`
			Up      string `json:"up"`
			Down    string `json:"down"`
		}
		list := make([]migration, len(ms))
		for i, m := range ms {
			list[i] = migration{m.Version, m.Name, m.SQL, m.Down}
		}
		return writeJSON(out, list)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "-- Drover migrations for %s, schema %q (drover migrate --sql).\n", c.target.Kind, c.schema)
	fmt.Fprintf(&b, "-- Drover's clients read the schema version from %sschema_migrations, which\n", tablePrefix(all))
	fmt.Fprintf(&b, "-- drover migrate keeps: a tool of your own must record there each version it applies.\n")
	for _, m := range ms {
		sql, dir := m.SQL, "up"
		if f.down {
			sql, dir = m.Down, "down"
		}
		fmt.Fprintf(&b, "\n-- %s\n%s", migrationFile(m, dir), sql)
		if !strings.HasSuffix(sql, "\n") {
			b.WriteByte('\n')
		}
	}
	_, err = fmt.Fprint(out, b.String())
	return err
}

// tablePrefix is what the driver put before Drover's table names, read
// from the first migration rather than spelled per store.
func tablePrefix(ms []drovertype.Migration) string {
	_, rest, ok := strings.Cut(ms[0].SQL, "CREATE TABLE ")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, " ")
	return strings.TrimSuffix(name, "jobs")
}

// writeMigrations writes each migration's up and down files into dir.
func writeMigrations(out, stderr io.Writer, dir string, ms []drovertype.Migration) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--dir: %w", err)
	}
	for _, m := range ms {
		files := [][2]string{{migrationFile(m, "up"), m.SQL}}
		if m.Down != "" {
			files = append(files, [2]string{migrationFile(m, "down"), m.Down})
		} else {
			fmt.Fprintf(stderr, "drover: migration %03d_%s has no down migration; wrote only its up file\n", m.Version, m.Name)
		}
		for _, file := range files {
			path := filepath.Join(dir, file[0])
			if err := os.WriteFile(path, []byte(file[1]), 0o644); err != nil {
				return fmt.Errorf("--dir: %w", err)
			}
			if _, err := fmt.Fprintf(out, "wrote %s\n", path); err != nil {
				return err
			}
		}
	}
	return nil
}
