package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover"
)

// migrationJSON is one migration in `drover migrate --json`.
type migrationJSON struct {
	Version int    `json:"version"`
	Name    string `json:"name"`
}

func (c *cli) migrateCommand() *cobra.Command {
	var status, asJSON bool
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Create or upgrade Drover's schema",
		Long: `migrate brings the store's schema to the latest version this binary knows.

It is idempotent and safe to run from several processes at once: each
migration is applied exactly once. With --status it only reports the version.`,
		Args: argsNamed(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
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
					return drover.CheckSchema(schema, version, latest)
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
	return cmd
}
