package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/validate"
)

// maxCount bounds --count. One InsertMany of this many rows is a single
// statement of a few megabytes; more is a load test, which is what
// `drover bench` is for.
const maxCount = 100_000

// enqueueFlags are the options of `drover enqueue`.
type enqueueFlags struct {
	queue       string
	priority    int
	at          string
	maxAttempts int
	tags        []string
	metadata    string
	count       int
	json        bool
	// batch inserts the copies as one batch, with an optional callback
	// (docs/batches.md).
	batch                      bool
	callbackKind, callbackArgs string
	// route says where the job may run (workers.go).
	route routeFlags
}

func (c *cli) enqueueCommand() *cobra.Command {
	var f enqueueFlags
	cmd := &cobra.Command{
		Use:   "enqueue KIND JSON",
		Short: "Insert a job",
		Long: `enqueue inserts a job of kind KIND with the JSON args given, and prints its id.

A worker registered for KIND runs it; with --worker-type, --worker or
--label, only a worker that matches them (see docs/routing.md). JSON "-" reads the args from standard
input (for args too large for a command line). With --count N it inserts N
copies in one statement: all of them or, on any error, none. With --batch the
copies form one batch (see drover batch ID), optionally with a --callback job
that runs once when the last of them ended.`,
		Example: `  drover enqueue email '{"to":"ada@example.com"}'
  drover enqueue report '{"day":"2025-01-02"}' --queue reports --at 10m --tags nightly,eu
  drover enqueue noop '{}' --count 1000 --json
  drover enqueue simulate '{"steps":100}' --count 5000 --batch --callback report
  drover enqueue render - < scene.json
  drover enqueue train '{"epochs":3}' --worker-type gpu --label gpu=a100 --label region=eu
  drover enqueue reindex '{}' --worker search-7 --worker-type search --on-worker-absent fallback --worker-absent-after 2m`,
		Args: argsNamed("KIND", "JSON"),
		RunE: func(cmd *cobra.Command, args []string) error {
			argsJSON := args[1]
			if argsJSON == "-" {
				// One byte past the limit is enough for the validator to
				// name the limit; reading more would only cost memory.
				data, err := io.ReadAll(io.LimitReader(cmd.InOrStdin(), drover.MaxArgsBytes+1))
				if err != nil {
					return fmt.Errorf("args: read standard input: %w", err)
				}
				if len(data) > drover.MaxArgsBytes {
					return usagef("args: standard input holds more than the limit of %d bytes", drover.MaxArgsBytes)
				}
				argsJSON = string(data)
			}
			params, err := f.params(args[0], argsJSON, time.Now())
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			client, closeStore, err := c.openClient(ctx)
			if err != nil {
				return err
			}
			defer closeStore()
			if f.batch {
				return f.insertBatch(cmd, client, params)
			}
			ids, err := client.InsertMany(ctx, params)
			if err != nil {
				// Every copy is the same job, so the "job 1 of N" that
				// InsertMany puts before an input error says nothing.
				if inner := errors.Unwrap(err); errors.Is(err, drover.ErrInvalid) &&
					inner != nil && inner != drover.ErrInvalid && errors.Is(inner, drover.ErrInvalid) {
					err = inner
				}
				return err
			}
			out := cmd.OutOrStdout()
			if f.json {
				return writeJSON(out, struct {
					IDs []int64 `json:"ids"`
				}{ids})
			}
			var b strings.Builder
			for _, id := range ids {
				fmt.Fprintln(&b, id)
			}
			_, err = fmt.Fprint(out, b.String())
			return err
		},
	}
	markNeedsStore(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.queue, "queue", drover.DefaultQueue, "queue the job waits in")
	fl.IntVar(&f.priority, "priority", 0, "priority within the queue, lower runs first (-32768 to 32767)")
	fl.StringVar(&f.at, "at", "", "when to run: an RFC 3339 time (2025-01-02T15:04:05Z) or a duration from now (10m); default now")
	fl.IntVar(&f.maxAttempts, "max-attempts", drover.DefaultMaxAttempts, "attempts before the job is discarded (at least 1)")
	fl.StringSliceVar(&f.tags, "tags", nil, "comma-separated tags to filter jobs by")
	fl.StringVar(&f.metadata, "metadata", "", "free-form JSON object stored with the job")
	fl.IntVar(&f.count, "count", 1, fmt.Sprintf("insert this many copies in one statement (at most %d)", maxCount))
	fl.BoolVar(&f.json, "json", false, `print {"ids":[…]} instead of one id per line`)
	fl.BoolVar(&f.batch, "batch", false, "insert the copies as one batch; prints the batch ID first")
	fl.StringVar(&f.callbackKind, "callback", "", "with --batch: kind of a job to run once when the batch ended")
	fl.StringVar(&f.callbackArgs, "callback-args", "{}", "JSON args of the --callback job")
	f.route.add(cmd)
	return cmd
}

// params checks everything about the job that can be checked without the
// store, so that a mistake is reported as such (exit code 2) even when the
// store is down, and builds the InsertMany batch.
func (f *enqueueFlags) params(kind, args string, now time.Time) ([]drover.InsertManyParams, error) {
	if err := validate.JSON("args", []byte(args), drover.MaxArgsBytes); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(strings.TrimSpace(args), "{") {
		return nil, usagef("args: must be a JSON object")
	}
	if err := validate.Queue(f.queue); err != nil {
		return nil, fmt.Errorf("--queue: %w", err)
	}
	if f.priority < math.MinInt16 || f.priority > math.MaxInt16 {
		return nil, usagef("--priority %d: must be between %d and %d", f.priority, math.MinInt16, math.MaxInt16)
	}
	// 0 reads as "never try", which is not what the library's zero (the
	// default) means: the command line takes only what it says.
	if f.maxAttempts < 1 {
		return nil, usagef("--max-attempts %d: must be at least 1", f.maxAttempts)
	}
	if !f.batch && f.callbackKind != "" {
		return nil, usagef("--callback: only with --batch")
	}
	if f.callbackKind != "" {
		if err := validate.JSON("--callback-args", []byte(f.callbackArgs), drover.MaxArgsBytes); err != nil {
			return nil, err
		}
		if !strings.HasPrefix(strings.TrimSpace(f.callbackArgs), "{") {
			return nil, usagef("--callback-args: must be a JSON object")
		}
	}
	if f.count < 1 || f.count > maxCount {
		return nil, usagef("--count %d: must be between 1 and %d", f.count, maxCount)
	}
	runAt, err := parseAt(f.at, now)
	if err != nil {
		return nil, err
	}
	var metadata json.RawMessage
	if f.metadata != "" {
		if err := validate.JSON("--metadata", []byte(f.metadata), drover.MaxMetadataBytes); err != nil {
			return nil, err
		}
		if trimmed := strings.TrimSpace(f.metadata); !strings.HasPrefix(trimmed, "{") {
			return nil, usagef("--metadata: must be a JSON object")
		}
		metadata = json.RawMessage(f.metadata)
	}
	opts := &drover.InsertOpts{
		Queue:       f.queue,
		Priority:    f.priority,
		RunAt:       runAt,
		MaxAttempts: f.maxAttempts,
		Tags:        f.tags,
		Metadata:    metadata,
	}
	if err := f.route.apply(opts); err != nil {
		return nil, err
	}
	raw := drover.RawArgs{KindName: kind, JSON: json.RawMessage(args)}
	params := make([]drover.InsertManyParams, f.count)
	for i := range params {
		params[i] = drover.InsertManyParams{Args: raw, Opts: opts}
	}
	return params, nil
}

// parseAt reads --at: an absolute time, or a duration from now because
// "in ten minutes" is what one usually means at a shell.
func parseAt(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(d), nil
	}
	return time.Time{}, usagef("--at %q: use an RFC 3339 time (2025-01-02T15:04:05Z) or a duration from now (10m, 1h30m)", s)
}
