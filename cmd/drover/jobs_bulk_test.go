package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/droverhq/drover"
)

// TestJobsBulk changes every job of a filter from the CLI and checks the
// counts it reports (changed, not matched) against the store.
func TestJobsBulk(t *testing.T) {
	t.Parallel()
	f := setupSQLite(t).migrated(t)
	_, client := f.open(t)
	params := make([]drover.InsertManyParams, 4)
	for i := range params {
		q := "bulk"
		if i == 3 {
			q = "other"
		}
		params[i] = drover.InsertManyParams{Args: drover.RawArgs{KindName: "k", JSON: json.RawMessage(`{}`)}, Opts: &drover.InsertOpts{Queue: q}}
	}
	if _, err := client.InsertMany(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args   []string
		stdout string
	}{
		{[]string{"jobs", "discard", "--queue", "bulk"}, "discard: changed 3 of 3 jobs that matched\n"},
		{[]string{"jobs", "discard", "--queue", "bulk"}, "discard: changed 0 of 3 jobs that matched\n"},
		{[]string{"jobs", "retry", "--queue", "bulk", "--state", "discarded,completed", "--json"}, "{\n  \"action\": \"retry\",\n  \"changed\": 3,\n  \"matched\": 3\n}"},
	} {
		r := f.run(t, tc.args...)
		if r.code != exitOK || strings.TrimSpace(r.stdout) != strings.TrimSpace(tc.stdout) || !strings.Contains(r.stderr, "jobs read") {
			t.Errorf("drover %s: %s\nwant stdout %q", strings.Join(tc.args, " "), r, tc.stdout)
		}
	}
	counts, err := client.JobCountByState(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if counts[drover.JobStateAvailable] != 4 || counts[drover.JobStateDiscarded] != 0 {
		t.Errorf("store after discard and retry: %v, want 4 available", counts)
	}
	if r := f.run(t, "jobs", "cancel", "1", "--queue", "bulk"); r.code != exitUsage || !strings.Contains(r.stderr, "not both") {
		t.Errorf("ID and filter: %s", r)
	}
}
