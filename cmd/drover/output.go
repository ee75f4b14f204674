package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/jobjson"
)

// writeJSON prints v indented, for people piping into jq and for scripts.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func writeJobsJSON(w io.Writer, jobs []*drovertype.JobRow) error {
	return writeJSON(w, jobjson.FromAll(jobs))
}

// lastErrorWidth keeps a table row on one terminal line even when an error
// message is long; `jobs get` shows the whole message.
const lastErrorWidth = 60

// writeJobTable prints jobs as an aligned table, one row each.
func writeJobTable(w io.Writer, jobs []*drovertype.JobRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tQUEUE\tKIND\tATTEMPT\tRUN AT\tLAST ERROR")
	for _, j := range jobs {
		lastErr := "-"
		if n := len(j.Errors); n > 0 {
			lastErr = truncate(oneLine(j.Errors[n-1].Error), lastErrorWidth)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d/%d\t%s\t%s\n",
			j.ID, j.State, j.Queue, j.Kind, j.Attempt, j.MaxAttempts, formatTime(j.RunAt), lastErr)
	}
	return tw.Flush()
}

// writeJobDetail prints everything about one job, including args, metadata
// and the errors of the failed attempts the store keeps, for `drover jobs
// get`.
func writeJobDetail(w io.Writer, j *drovertype.JobRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	field := func(name, value string) { fmt.Fprintf(tw, "%s:\t%s\n", name, value) }
	field("id", strconv.FormatInt(j.ID, 10))
	field("state", string(j.State))
	field("queue", j.Queue)
	field("kind", j.Kind)
	field("priority", strconv.Itoa(j.Priority))
	field("attempt", fmt.Sprintf("%d/%d", j.Attempt, j.MaxAttempts))
	field("tags", orDash(strings.Join(j.Tags, ", ")))
	if j.Timeout != 0 {
		field("timeout", j.Timeout.String())
	}
	field("created at", formatTime(j.CreatedAt))
	field("run at", formatTime(j.RunAt))
	field("attempted at", formatTimePtr(j.AttemptedAt))
	field("finalized at", formatTimePtr(j.FinalizedAt))
	if j.LeaseOwner != "" {
		field("lease", fmt.Sprintf("%s until %s", j.LeaseOwner, formatTimePtr(j.LeaseExpiresAt)))
	}
	if j.CancelRequested {
		field("cancel", "requested")
	}
	if j.Routing != nil {
		field("runs on", formatRouting(j.Routing))
	}
	if j.Unroutable {
		field("routing", "unroutable: no live worker of the queue matches it (drover workers list)")
	}
	field("args", orDash(string(j.EncodedArgs)))
	field("metadata", orDash(string(j.Metadata)))
	switch {
	case j.ErrorCount == 0 && len(j.Errors) == 0:
		field("errors", "none")
	case j.ErrorCount > len(j.Errors):
		// The store keeps the last ErrorsKept; say how many came before.
		field("errors", fmt.Sprintf("%d (the last %d shown)", j.ErrorCount, len(j.Errors)))
	default:
		field("errors", strconv.Itoa(len(j.Errors)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, e := range j.Errors {
		fmt.Fprintf(w, "  attempt %d at %s: %s\n", e.Attempt, formatTime(e.At), e.Error)
		for line := range strings.Lines(e.Trace) {
			fmt.Fprintf(w, "      %s", line)
		}
		if e.Trace != "" && !strings.HasSuffix(e.Trace, "\n") {
			fmt.Fprintln(w)
		}
	}
	return nil
}

// formatTime prints times to the second in the local zone with its offset:
// readable at a terminal, and still unambiguous when pasted elsewhere.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format(time.RFC3339)
}

func formatTimePtr(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return formatTime(*t)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
