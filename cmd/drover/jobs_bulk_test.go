package main

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
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
		if r.code != exitOK || strings.TrimSpace(r.stdout) != strings.TrimSpace(tc.stdout) || strings.Contains(r.stderr, "read") {
			t.Errorf("drover %s: %s\nwant stdout %q and no progress for one page", strings.Join(tc.args, " "), r, tc.stdout)
		}
	}
	counts, err := client.JobCountByState(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if counts[drovertype.JobStateAvailable] != 4 || counts[drovertype.JobStateDiscarded] != 0 {
		t.Errorf("store after discard and retry: %v, want 4 available", counts)
	}
	if r := f.run(t, "jobs", "cancel", "1", "--queue", "bulk"); r.code != exitUsage || !strings.Contains(r.stderr, "not both") {
		t.Errorf("ID and filter: %s", r)
	}
}

// TestJobsDelete deletes by filter and by ID from the CLI and checks
// exactly which jobs the store still holds: running ones are refused.
func TestJobsDelete(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := b.setup(t).migrated(t)
			_, client := f.open(t)
			ctx := context.Background()
			ids := f.enqueue(t, "k", `{}`, "--queue", "del")
			ids = append(ids, f.enqueue(t, "k", `{}`, "--queue", "del")...)
			ids = append(ids, f.enqueue(t, "k", `{}`, "--queue", "del")...)
			kept := f.enqueue(t, "k", `{}`, "--queue", "keep")
			running, err := client.Remote().Claim(ctx, drover.ClaimParams{Queue: "del", Max: 1, Owner: "w", Lease: time.Minute})
			if err != nil || len(running) != 1 || running[0].ID != ids[0] {
				t.Fatalf("claimed %v, %v", running, err)
			}
			if _, err := client.JobDiscard(ctx, ids[1]); err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				args   []string
				stdout string
				gone   []int64
			}{
				{[]string{"jobs", "delete", "--queue", "del", "--state", "discarded"}, "delete: changed 1 of 1 job that matched", ids[1:2]},
				{[]string{"jobs", "delete", strconv.FormatInt(ids[0], 10), strconv.FormatInt(ids[2], 10), "99999"}, "delete: changed 1 of 3 jobs given", ids[2:3]},
			} {
				r := f.run(t, tc.args...)
				// One line says what happened (issue 38: a progress line
				// on stderr repeated it).
				if r.code != exitOK || strings.TrimSpace(r.stdout) != tc.stdout || strings.Contains(r.stderr, "read") {
					t.Errorf("drover %s: %s\nwant stdout %q alone", strings.Join(tc.args, " "), r, tc.stdout)
				}
				for _, id := range tc.gone {
					if _, err := client.JobGet(ctx, id); !errors.Is(err, drover.ErrNotFound) {
						t.Errorf("job %d after %v: %v; want it gone", id, tc.args, err)
					}
				}
			}
			for id, want := range map[int64]drovertype.JobState{ids[0]: drovertype.JobStateRunning, kept[0]: drovertype.JobStateAvailable} {
				if j, err := client.JobGet(ctx, id); err != nil || j.State != want {
					t.Errorf("job %d: %+v, %v; want %s", id, j, err, want)
				}
			}
			for _, args := range [][]string{{"jobs", "delete"}, {"jobs", "delete", "1", "--queue", "del"}, {"jobs", "delete", "x"}} {
				if r := f.run(t, args...); r.code != exitUsage {
					t.Errorf("drover %s: %s; want a usage error", strings.Join(args, " "), r)
				}
			}
		})
	}
}

// TestJobsBulkProgress: a filter over more than one page prints progress
// on stderr after each full page, and the summary once on stdout.
func TestJobsBulkProgress(t *testing.T) {
	t.Parallel()
	f := setupSQLite(t).migrated(t)
	_, client := f.open(t)
	n := drover.BulkChunk + drover.BulkChunk/2
	params := make([]drover.InsertManyParams, n)
	for i := range params {
		params[i] = drover.InsertManyParams{Args: drover.RawArgs{KindName: "k", JSON: json.RawMessage(`{}`)}, Opts: &drover.InsertOpts{Queue: "bulk"}}
	}
	if _, err := client.InsertMany(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	r := f.run(t, "jobs", "discard", "--queue", "bulk")
	wantErr := "discard: " + strconv.Itoa(drover.BulkChunk) + " jobs read, " + strconv.Itoa(drover.BulkChunk) + " changed so far\n"
	wantOut := "discard: changed " + strconv.Itoa(n) + " of " + strconv.Itoa(n) + " jobs that matched\n"
	if r.code != exitOK || r.stdout != wantOut || !strings.HasSuffix(r.stderr, wantErr) || strings.Count(r.stderr, "read") != 1 {
		t.Fatalf("drover jobs discard: %s\nwant stdout %q and stderr ending %q", r, wantOut, wantErr)
	}
}
