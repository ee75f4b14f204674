package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/droverhq/drover/internal/app/jobjson"
)

// TestQueuesPauseResumeList: pause and resume change the stored setting
// that every worker reads (checked in the store, not through the CLI),
// list shows it, and enqueueing into a paused queue still works.
func TestQueuesPauseResumeList(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := b.setup(t).migrated(t)
			f.enqueue(t, "alpha", `{}`, "--queue", "mail")
			_, client := f.open(t)
			ctx := context.Background()

			var q jobjson.Queue
			decodeJSON(t, f.mustRun(t, "queues", "pause", "mail", "--json"), &q)
			if q.Name != "mail" || !q.Paused || q.UpdatedAt == nil {
				t.Fatalf("pause printed %+v", q)
			}
			if got, err := client.QueueGet(ctx, "mail"); err != nil || !got.Paused {
				t.Fatalf("stored settings after pause: %+v, %v", got, err)
			}
			if ids := f.enqueue(t, "alpha", `{}`, "--queue", "mail"); len(ids) != 1 {
				t.Fatalf("enqueue into a paused queue printed %v", ids)
			}

			var list []jobjson.Queue
			f.enqueue(t, "alpha", `{}`, "--queue", "other")
			decodeJSON(t, f.mustRun(t, "queues", "list", "--json"), &list)
			if len(list) != 2 || list[0].Name != "mail" || !list[0].Paused || list[1].Name != "other" || list[1].Paused ||
				list[1].UpdatedAt != nil {
				t.Fatalf("list printed %+v, want mail paused and other running", list)
			}
			table := f.mustRun(t, "queues", "list")
			if !strings.Contains(table, "mail") || !strings.Contains(table, "paused") {
				t.Fatalf("list table:\n%s", table)
			}

			out := f.mustRun(t, "queues", "resume", "mail")
			if !strings.Contains(out, "mail") || strings.Contains(out, "paused") {
				t.Fatalf("resume printed:\n%s", out)
			}
			if got, err := client.QueueGet(ctx, "mail"); err != nil || got.Paused {
				t.Fatalf("stored settings after resume: %+v, %v", got, err)
			}
		})
	}
}

// TestQueuesRejectsBadName: a queue name the store could not hold is a
// usage error, and nothing is written.
func TestQueuesRejectsBadName(t *testing.T) {
	f := setupSQLite(t).migrated(t)
	for _, cmd := range []string{"pause", "resume"} {
		r := f.run(t, "queues", cmd, "a b")
		if r.code != exitUsage || !strings.Contains(r.stderr, "queue") {
			t.Errorf("queues %s \"a b\":\n%s", cmd, r)
		}
		if r := f.run(t, "queues", cmd); r.code != exitUsage {
			t.Errorf("queues %s without a name:\n%s", cmd, r)
		}
	}
}

// TestQueuesPauseKind: --kind pauses only that kind of the queue in the
// store (two kinds with two flags), list shows them, resume --kind takes
// one out and leaves the queue's own pause alone; a bad kind is a usage
// error that stores nothing.
func TestQueuesPauseKind(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := b.setup(t).migrated(t)
			_, client := f.open(t)
			ctx := context.Background()

			var q jobjson.Queue
			decodeJSON(t, f.mustRun(t, "queues", "pause", "mail", "--kind", "email", "--kind", "sms", "--json"), &q)
			if q.Name != "mail" || q.Paused || !slices.Equal(q.PausedKinds, []string{"email", "sms"}) {
				t.Fatalf("pause --kind printed %+v", q)
			}
			if got, err := client.QueueGet(ctx, "mail"); err != nil || got.Paused || !slices.Equal(got.PausedKinds, []string{"email", "sms"}) {
				t.Fatalf("stored settings after pause --kind: %+v, %v", got, err)
			}
			table := f.mustRun(t, "queues", "list")
			if !strings.Contains(table, "PAUSED KINDS") || !strings.Contains(table, "email,sms") {
				t.Fatalf("list table:\n%s", table)
			}
			f.mustRun(t, "queues", "pause", "mail")
			out := f.mustRun(t, "queues", "resume", "mail", "--kind", "sms")
			if !strings.Contains(out, "paused") || !strings.Contains(out, "email") || strings.Contains(out, "sms") {
				t.Fatalf("resume --kind sms printed:\n%s", out)
			}
			if got, err := client.QueueGet(ctx, "mail"); err != nil || !got.Paused || !slices.Equal(got.PausedKinds, []string{"email"}) {
				t.Fatalf("stored settings after resume --kind: %+v, %v; want the queue paused and email paused", got, err)
			}
			r := f.run(t, "queues", "pause", "mail", "--kind", "no spaces")
			if r.code != exitUsage || !strings.Contains(r.stderr, `--kind: kind "no spaces"`) {
				t.Fatalf("pause --kind \"no spaces\":\n%s", r)
			}
			if got, err := client.QueueGet(ctx, "mail"); err != nil || !slices.Equal(got.PausedKinds, []string{"email"}) {
				t.Fatalf("a refused kind changed the store: %+v, %v", got, err)
			}
		})
	}
}

// TestQueuesResumeLeavesKindsPaused: resume without --kind undoes the
// queue's own pause and leaves the kinds paused within it paused (issue
// 38): the store says so, and resume names them with the command that
// resumes them, which then does.
func TestQueuesResumeLeavesKindsPaused(t *testing.T) {
	t.Parallel()
	f := setupSQLite(t).migrated(t)
	_, client := f.open(t)
	ctx := context.Background()
	f.mustRun(t, "queues", "pause", "billing", "--kind", "invoice.pdf", "--kind", "receipt")
	f.mustRun(t, "queues", "pause", "billing")

	out := f.mustRun(t, "queues", "resume", "billing")
	want := "kinds still paused in billing: invoice.pdf, receipt (resume them with: drover queues resume billing --kind invoice.pdf --kind receipt)"
	if !strings.Contains(out, want) {
		t.Fatalf("resume billing printed:\n%s\nwant the line %q", out, want)
	}
	if got, err := client.QueueGet(ctx, "billing"); err != nil || got.Paused || !slices.Equal(got.PausedKinds, []string{"invoice.pdf", "receipt"}) {
		t.Fatalf("stored settings after resume: %+v, %v; want the queue running and both kinds paused", got, err)
	}

	out = f.mustRun(t, "queues", "resume", "billing", "--kind", "invoice.pdf", "--kind", "receipt")
	if strings.Contains(out, "still paused") {
		t.Fatalf("resume --kind printed:\n%s", out)
	}
	if got, err := client.QueueGet(ctx, "billing"); err != nil || got.Paused || len(got.PausedKinds) != 0 {
		t.Fatalf("stored settings after resume --kind: %+v, %v; want nothing paused", got, err)
	}
	if out := f.mustRun(t, "queues", "resume", "billing"); strings.Contains(out, "still paused") {
		t.Fatalf("resume with no kind paused printed:\n%s", out)
	}
}
