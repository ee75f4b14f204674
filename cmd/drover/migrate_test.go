package main

import (
	"fmt"
	"testing"
)

func TestMigrate(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := b.setup(t)
			s := f.schema
			steps := []struct {
				args []string
				want string
			}{
				{[]string{"migrate", "--status"}, fmt.Sprintf("schema %q: version 0 of 1 (run: drover migrate)\n", s)},
				{[]string{"migrate"}, "applied 001_init\n"},
				// The second run finds nothing to do.
				{[]string{"migrate"}, fmt.Sprintf("schema %q is up to date at version 1\n", s)},
				{[]string{"migrate", "--status"}, fmt.Sprintf("schema %q: version 1 of 1\n", s)},
				{[]string{"migrate", "--status", "--json"},
					fmt.Sprintf("{\n  \"schema\": %q,\n  \"version\": 1,\n  \"latest\": 1,\n  \"up_to_date\": true\n}\n", s)},
				{[]string{"migrate", "--json"},
					fmt.Sprintf("{\n  \"schema\": %q,\n  \"applied\": [],\n  \"version\": 1\n}\n", s)},
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
	want := fmt.Sprintf("{\n  \"schema\": %q,\n  \"applied\": [\n    {\n      \"version\": 1,\n      \"name\": \"init\"\n    }\n  ],\n  \"version\": 1\n}\n", f.schema)
	if r.code != exitOK || r.stdout != want {
		t.Fatalf("%s\nwant stdout %q", r, want)
	}
}
