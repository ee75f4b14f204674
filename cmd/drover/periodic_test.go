package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/droverhq/drover/internal/app/jobjson"
)

// periodicOut is a periodic job as --json prints it.
type periodicOut struct {
	Name      string  `json:"name"`
	Schedule  string  `json:"schedule"`
	Kind      string  `json:"kind"`
	Queue     string  `json:"queue"`
	Source    string  `json:"source"`
	Paused    bool    `json:"paused"`
	NextRunAt *string `json:"next_run_at"`
	LastRunAt *string `json:"last_run_at"`
}

// TestPeriodicCommands manages a periodic job from the CLI: create, list,
// pause (no next run), trigger (one job stored, of its kind and queue),
// resume, update, delete; each --json snake_case like the HTTP API.
func TestPeriodicCommands(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := b.setup(t).migrated(t)
			var p periodicOut
			decodeJSON(t, f.mustRun(t, "periodic", "create", "nightly", "--schedule", "0 3 * * *", "--kind", "report",
				"--args", `{"scope":"all"}`, "--queue", "reports", "--json"), &p)
			if p.Name != "nightly" || p.Source != "api" || p.Paused || p.NextRunAt == nil || p.Queue != "reports" {
				t.Fatalf("create printed %+v", p)
			}
			table := f.mustRun(t, "periodic", "list")
			for _, want := range []string{"NEXT RUN", "nightly", "0 3 * * *", "active"} {
				if !strings.Contains(table, want) {
					t.Fatalf("list lacks %q:\n%s", want, table)
				}
			}
			decodeJSON(t, f.mustRun(t, "periodic", "pause", "nightly", "--json"), &p)
			if !p.Paused || p.NextRunAt != nil {
				t.Fatalf("pause printed %+v", p)
			}
			id, err := strconv.ParseInt(strings.TrimSpace(f.mustRun(t, "periodic", "trigger", "nightly")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			var job jobjson.Job
			decodeJSON(t, f.mustRun(t, "jobs", "get", strconv.FormatInt(id, 10), "--json"), &job)
			if job.Kind != "report" || job.Queue != "reports" || !sameJSON(t, job.Args, []byte(`{"scope":"all"}`)) {
				t.Fatalf("triggered job %+v", job)
			}
			var all []periodicOut
			decodeJSON(t, f.mustRun(t, "periodic", "list", "--json"), &all)
			if len(all) != 1 || !all[0].Paused || all[0].LastRunAt == nil {
				t.Fatalf("list --json after trigger: %+v", all)
			}
			decodeJSON(t, f.mustRun(t, "periodic", "resume", "nightly", "--json"), &p)
			if p.Paused || p.NextRunAt == nil {
				t.Fatalf("resume printed %+v", p)
			}
			decodeJSON(t, f.mustRun(t, "periodic", "update", "nightly", "--schedule", "@hourly", "--kind", "report", "--json"), &p)
			if p.Schedule != "@hourly" || p.Queue != "default" {
				t.Fatalf("update printed %+v", p)
			}
			f.mustRun(t, "periodic", "delete", "nightly")
			decodeJSON(t, f.mustRun(t, "periodic", "list", "--json"), &all)
			if len(all) != 0 {
				t.Fatalf("list after delete: %+v", all)
			}
			checkFailure(t, f.run(t, "periodic", "trigger", "nightly"), exitFailure, `drover: periodic job not found: "nightly"`)
			checkFailure(t, f.run(t, "periodic", "create", "x", "--schedule", "61 * * * *", "--kind", "k"), exitUsage,
				`drover: periodic job "x": schedule "61 * * * *": end of range (61) above maximum (59): 61`)
		})
	}
}
