package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/drovertype"
)

// knownMigrations are the migrations this binary applies (both stores
// number them alike), so that expected outputs follow new migrations.
func knownMigrations(t *testing.T) []drovertype.Migration {
	t.Helper()
	d, err := droversqlite.Open(context.Background(), ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	return d.Migrations()
}

// latestVersion is the highest migration this binary knows.
func latestVersion(t *testing.T) int {
	ms := knownMigrations(t)
	return ms[len(ms)-1].Version
}

func TestMigrate(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := b.setup(t)
			s := f.schema
			latest := latestVersion(t)
			var applied strings.Builder
			for _, m := range knownMigrations(t) {
				fmt.Fprintf(&applied, "applied %03d_%s\n", m.Version, m.Name)
			}
			steps := []struct {
				args []string
				want string
			}{
				{[]string{"migrate", "--status"}, fmt.Sprintf("schema %q: version 0 of %d (run: drover migrate)\n", s, latest)},
				{[]string{"migrate"}, applied.String()},
				// The second run finds nothing to do.
				{[]string{"migrate"}, fmt.Sprintf("schema %q is up to date at version %d\n", s, latest)},
				{[]string{"migrate", "--status"}, fmt.Sprintf("schema %q: version %d of %d\n", s, latest, latest)},
				{[]string{"migrate", "--status", "--json"},
					fmt.Sprintf("{\n  \"schema\": %q,\n  \"version\": %d,\n  \"latest\": %d,\n  \"up_to_date\": true\n}\n", s, latest, latest)},
				{[]string{"migrate", "--json"},
					fmt.Sprintf("{\n  \"schema\": %q,\n  \"applied\": [],\n  \"version\": %d\n}\n", s, latest)},
			}
			for _, st := range steps {
				r := f.run(t, st.args...)
				if r.code != exitOK || r.stdout != st.want {
					t.Fatalf("drover %v:\n%s\nwant stdout %q", st.args, r, st.want)
				}
			}
		})
	}
}

func TestMigrateJSONApplied(t *testing.T) {
	f := setup(t)
	r := f.run(t, "migrate", "--json")
	type applied struct {
		Version int    `json:"version"`
		Name    string `json:"name"`
	}
	want := struct {
		Schema  string    `json:"schema"`
		Applied []applied `json:"applied"`
		Version int       `json:"version"`
	}{Schema: f.schema, Version: latestVersion(t)}
	for _, m := range knownMigrations(t) {
		want.Applied = append(want.Applied, applied{m.Version, m.Name})
	}
	b, _ := json.MarshalIndent(want, "", "  ")
	if r.code != exitOK || r.stdout != string(b)+"\n" {
		t.Fatalf("%s\nwant stdout %q", r, string(b)+"\n")
	}
}
