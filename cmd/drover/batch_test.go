package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/droverhq/drover/internal/app/jobjson"
)

// TestEnqueueBatch stores copies as one batch with a callback and reads the
// batch's progress back from the store.
func TestEnqueueBatch(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := b.setup(t).migrated(t)
			var out struct {
				Batch    int64   `json:"batch"`
				IDs      []int64 `json:"ids"`
				Callback int64   `json:"callback"`
			}
			decodeJSON(t, f.mustRun(t, "enqueue", "simulate", `{"steps":3}`, "--count", "4", "--batch",
				"--callback", "report", "--callback-args", `{"to":"ops"}`, "--json"), &out)
			if out.Batch == 0 || len(out.IDs) != 4 || out.Callback == 0 {
				t.Fatalf("enqueue --batch printed %+v", out)
			}
			// Decoded into a map so that the test sees the keys as written:
			// snake_case, like every other --json and the HTTP API.
			var prog map[string]any
			decodeJSON(t, f.mustRun(t, "batch", strconv.FormatInt(out.Batch, 10), "--json"), &prog)
			counts, _ := prog["counts"].(map[string]any)
			if prog["id"] != float64(out.Batch) || prog["total"] != 4.0 || counts["pending"] != 4.0 || counts["completed"] != 0.0 ||
				prog["callback_job_id"] != float64(out.Callback) || prog["finished_at"] != nil || prog["created_at"] == nil {
				t.Fatalf("batch progress = %v", prog)
			}
			var cb jobjson.Job
			decodeJSON(t, f.mustRun(t, "jobs", "get", strconv.FormatInt(out.Callback, 10), "--json"), &cb)
			if cb.State != "pending" || cb.Kind != "report" || !sameJSON(t, cb.Args, []byte(`{"to":"ops"}`)) {
				t.Fatalf("callback job = %+v", cb)
			}
			table := f.mustRun(t, "batch", strconv.FormatInt(out.Batch, 10))
			for _, want := range []string{"total", "pending", "callback job"} {
				if !strings.Contains(table, want) {
					t.Fatalf("batch table lacks %q:\n%s", want, table)
				}
			}
		})
	}
}

func TestEnqueueBatchBadInput(t *testing.T) {
	f := setup(t)
	checkFailure(t, f.run(t, "enqueue", "k", `{}`, "--callback", "report"), exitUsage, "drover: --callback: only with --batch")
	checkFailure(t, f.run(t, "batch", "x"), exitUsage, `drover: batch ID "x": must be a positive integer`)
}

// TestBatchNotFound: a missing batch is named as a batch, not as a job.
func TestBatchNotFound(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := b.setup(t).migrated(t)
			r := f.run(t, "batch", "99")
			checkFailure(t, r, exitFailure, "drover: batch 99 not found")
			if strings.Contains(r.stderr, "job") {
				t.Fatalf("the error speaks of a job:\n%s", r)
			}
		})
	}
}
