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
				{[]string{"migrate", "--status"}, fmt.Sprintf("schema %q: version 0 of 3 (run: drover migrate)\n", s)},
				{[]string{"migrate"}, "applied 001_init\napplied 003_order\n"},
				// The second run finds nothing to do.
				{[]string{"migrate"}, fmt.Sprintf("schema %q is up to date at version 3\n", s)},
				{[]string{"migrate", "--status"}, fmt.Sprintf("schema %q: version 3 of 3\n", s)},
				{[]string{"migrate", "--status", "--json"},
					fmt.Sprintf("{\n  \"schema\": %q,\n  \"version\": 3,\n  \"latest\": 3,\n  \"up_to_date\": true\n}\n", s)},
				{[]string{"migrate", "--json"},
					fmt.Sprintf("{\n  \"schema\": %q,\n  \"applied\": [],\n  \"version\": 3\n}\n", s)},
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
	want := fmt.Sprintf("{\n  \"schema\": %q,\n  \"applied\": [\n    {\n      \"version\": 1,\n      \"name\": \"init\"\n    },\n    {\n      \"version\": 3,\n      \"name\": \"order\"\n    }\n  ],\n  \"version\": 3\n}\n", f.schema)
	if r.code != exitOK || r.stdout != want {
		t.Fatalf("%s\nwant stdout %q", r, want)
	}
}
