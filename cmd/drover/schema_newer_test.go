package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// TestSchemaNewerThanBinary records a migration this binary does not know,
// as a newer Drover would, and checks that every command refuses the store
// with a message that says to upgrade, instead of reporting it up to date
// and working on a schema its statements were not written for.
func TestSchemaNewerThanBinary(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := b.setup(t).migrated(t)
			id := f.enqueue(t, "k", `{}`)[0]
			latest := latestVersion(t)
			st, _ := f.open(t)
			future := drovertype.Migration{Version: latest + 1, Name: "from_the_future", SQL: "SELECT 1"}
			err := st.Driver.MigrateTx(context.Background(), func(ctx context.Context, m droverdriver.Migrator) error {
				return m.Apply(ctx, future)
			})
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("drover: schema %q is at version %d, but this binary knows versions up to %d: upgrade drover to a release that knows version %d",
				f.schema, latest+1, latest, latest+1)
			for _, args := range [][]string{
				{"migrate"},
				{"enqueue", "k", `{}`},
				{"jobs", "list"},
				{"jobs", "get", fmt.Sprint(id)},
			} {
				t.Run(strings.Join(args, " "), func(t *testing.T) {
					checkFailure(t, f.run(t, args...), exitFailure, want)
				})
			}
			r := f.run(t, "migrate", "--status")
			if r.code != exitFailure || !strings.Contains(r.stdout, fmt.Sprintf("version %d, newer than this binary's %d", latest+1, latest)) {
				t.Fatalf("migrate --status:\n%s", r)
			}
			// Nothing was written by the refused commands.
			if n := f.countJobs(t); n != 1 {
				t.Fatalf("store holds %d jobs, want the 1 inserted before", n)
			}
		})
	}
}
