package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/app/jobjson"
)

// TestEnqueueRoutedAndUnroutable: --worker-type, --worker and --label
// route a job; job detail shows it; jobs list --unroutable lists it while
// no worker can take it, and workers list shows the one that can.
func TestEnqueueRoutedAndUnroutable(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := b.setup(t).migrated(t)
			ids := f.enqueue(t, "train", `{}`, "--queue", "ml", "--worker-type", "gpu", "--label", "gpu=a100", "--label", "region=eu")
			var j jobjson.Job
			decodeJSON(t, f.mustRun(t, "jobs", "get", strconv.FormatInt(ids[0], 10), "--json"), &j)
			if j.Routing == nil || j.Routing.WorkerType != "gpu" || j.Routing.WorkerLabels["region"] != "eu" || !j.Unroutable {
				t.Fatalf("job %+v, want routed to gpu workers in eu, unroutable", j)
			}
			if out := f.mustRun(t, "jobs", "get", strconv.FormatInt(ids[0], 10)); !strings.Contains(out, "type gpu with gpu=a100,region=eu") ||
				!strings.Contains(out, "unroutable") {
				t.Fatalf("job detail:\n%s", out)
			}
			var groups []jobjson.Unroutable
			decodeJSON(t, f.mustRun(t, "jobs", "list", "--unroutable", "--json"), &groups)
			if len(groups) != 1 || groups[0].Queue != "ml" || groups[0].Jobs != 1 || groups[0].FirstID != ids[0] {
				t.Fatalf("unroutable %+v", groups)
			}
			// A remote gpu worker in eu claims from ml: it registers, and
			// the job is routable (and claimed).
			_, client := f.open(t)
			ctx := context.Background()
			jobs, err := client.Remote().Claim(ctx, drover.ClaimParams{Queue: "ml", Max: 1, Owner: "py-1", Lease: time.Minute,
				WorkerType: "gpu", WorkerLabels: map[string]string{"gpu": "a100", "region": "eu"}})
			if err != nil || len(jobs) != 1 {
				t.Fatalf("claim: %d jobs, %v", len(jobs), err)
			}
			if out := f.mustRun(t, "jobs", "list", "--unroutable"); strings.Contains(out, "ml") {
				t.Fatalf("unroutable after the claim:\n%s", out)
			}
			var ws []jobjson.Worker
			decodeJSON(t, f.mustRun(t, "workers", "list", "--json"), &ws)
			if len(ws) != 1 || ws[0].Name != "py-1" || ws[0].Type != "gpu" || ws[0].JobsHeld != 1 || !ws[0].Live {
				t.Fatalf("workers %+v", ws)
			}
			if out := f.mustRun(t, "workers", "list"); !strings.Contains(out, "gpu=a100,region=eu") {
				t.Fatalf("workers table:\n%s", out)
			}
			for _, tc := range []struct {
				args []string
				want string
			}{
				{[]string{"--label", "novalue"}, "key=value"},
				{[]string{"--label", "bad key=v"}, "bad key"},
				{[]string{"--worker-type", "a b"}, "worker type"},
				{[]string{"--worker", "w", "--on-worker-absent", "fallback"}, "worker type"},
			} {
				r := f.run(t, append([]string{"enqueue", "k", "{}"}, tc.args...)...)
				if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
					t.Errorf("enqueue %v:\n%s", tc.args, r)
				}
			}
			if r := f.run(t, "jobs", "list", "--unroutable", "--queue", "ml"); r.code != exitUsage {
				t.Errorf("--unroutable with a filter:\n%s", r)
			}
		})
	}
}

// TestQueuesStrict: strict sets and clears the stored strict order.
func TestQueuesStrict(t *testing.T) {
	f := setupSQLite(t).migrated(t)
	var q jobjson.Queue
	decodeJSON(t, f.mustRun(t, "queues", "strict", "pay", "--json"), &q)
	if q.StrictOrder != 1 {
		t.Fatalf("strict printed %+v, want 1 at once", q)
	}
	if out := f.mustRun(t, "queues", "strict", "pay", "--max-running", "3"); !strings.Contains(out, "3 at once") {
		t.Fatalf("strict table:\n%s", out)
	}
	decodeJSON(t, f.mustRun(t, "queues", "strict", "pay", "--off", "--json"), &q)
	if q.StrictOrder != 0 {
		t.Fatalf("strict --off printed %+v", q)
	}
	if r := f.run(t, "queues", "strict", "pay", "--max-running", "0"); r.code != exitUsage {
		t.Errorf("--max-running 0:\n%s", r)
	}
}

// TestUnroutableKindsListed: a job of a kind that no live worker of its
// queue runs is listed by jobs list --unroutable with its kind, and
// workers list shows the kinds each worker runs (issue 38).
func TestUnroutableKindsListed(t *testing.T) {
	t.Parallel()
	f := setupSQLite(t).migrated(t)
	ids := f.enqueue(t, "orphan", `{}`, "--queue", "mail")
	_, client := f.open(t)
	ctx := context.Background()
	if jobs, err := client.Remote().Claim(ctx, drover.ClaimParams{Queue: "mail", Max: 1, Owner: "py-1", Lease: time.Minute,
		Kinds: []string{"email"}}); err != nil || len(jobs) != 0 {
		t.Fatalf("a worker of email claimed %d jobs, %v", len(jobs), err)
	}
	out := f.mustRun(t, "jobs", "list", "--unroutable")
	if !strings.Contains(out, "KIND") || !strings.Contains(out, "a worker that runs orphan") ||
		!strings.Contains(out, strconv.FormatInt(ids[0], 10)) {
		t.Fatalf("jobs list --unroutable:\n%s", out)
	}
	if out := f.mustRun(t, "workers", "list"); !strings.Contains(out, "KINDS") || !strings.Contains(out, " email ") {
		t.Fatalf("workers list:\n%s", out)
	}
}
