package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/jobjson"
)

// jobStates are the states --state accepts, in the order of a job's life.
var jobStates = drover.JobStates()

// maxListLimit matches what drover.Client.JobList accepts.
const maxListLimit = 10_000

func (c *cli) jobsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "jobs",
		Short: "List, inspect, retry and cancel jobs",
	}
	cmd.AddCommand(c.jobsListCommand(), c.jobsGetCommand())
	cmd.AddCommand(c.jobsChangeCommand("retry", "Make a job run again as soon as possible",
		`retry makes a job run again now: a finished job (completed, cancelled or
discarded) becomes available, with one more attempt if it had none left; a
scheduled or retryable job becomes available at once. A running job is left
alone. It prints the job after the change.`,
		storeClient.JobRetry))
	cmd.AddCommand(c.jobsChangeCommand("cancel", "Cancel a job",
		`cancel cancels a job: a waiting job is cancelled at once; a running one is
told to stop at its worker's next heartbeat and ends as cancelled unless it
completes first. A finished job is left as it is. It prints the job after the
change.`,
		storeClient.JobCancel))
	cmd.AddCommand(c.jobsChangeCommand("discard", "Discard a job that has not started",
		`discard gives up on a job that has not started: a waiting job (available,
scheduled or retryable) is finished as discarded at once and never runs. A
running job is left alone (cancel it instead), as is a finished one. It
prints the job after the change.`,
		storeClient.JobDiscard))
	return cmd
}

func (c *cli) jobsListCommand() *cobra.Command {
	var (
		states     []string
		p          drover.JobListParams
		asJSON     bool
		unroutable bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List jobs in id order",
		Long: `list prints jobs in id order, a page at a time: pass the last id printed
as --after to get the next page.

With --unroutable it prints instead the waiting routed jobs that no live
worker can take (none that works their queue matches their worker type,
names and labels), grouped by queue and routing, with the first job's id.`,
		Example: `  drover jobs list --state available,running --queue default
  drover jobs list --kind email --limit 20 --after 1040 --json
  drover jobs list --unroutable`,
		Args: argsNamed(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if unroutable {
				if len(states) > 0 || p.Queue != "" || p.Kind != "" || p.After != 0 {
					return usagef("--unroutable: lists every unroutable job; it takes no filter")
				}
				return c.listUnroutable(cmd, asJSON)
			}
			for _, s := range states {
				st, err := parseState(s)
				if err != nil {
					return err
				}
				p.States = append(p.States, st)
			}
			if p.Queue != "" {
				if err := drover.ValidateQueue(p.Queue); err != nil {
					return fmt.Errorf("--queue: %w", err)
				}
			}
			if p.Limit < 1 || p.Limit > maxListLimit {
				return usagef("--limit %d: must be between 1 and %d", p.Limit, maxListLimit)
			}
			if p.After < 0 {
				return usagef("--after %d: must not be negative", p.After)
			}
			ctx := cmd.Context()
			client, closeStore, err := c.openClient(ctx)
			if err != nil {
				return err
			}
			defer closeStore()
			jobs, err := client.JobList(ctx, p)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJobsJSON(cmd.OutOrStdout(), jobs)
			}
			if err := writeJobTable(cmd.OutOrStdout(), jobs); err != nil {
				return err
			}
			if len(jobs) == p.Limit {
				// On stderr, so that the table stays clean for pipes.
				fmt.Fprintf(cmd.ErrOrStderr(), "more jobs may follow: add --after %d\n", jobs[len(jobs)-1].ID)
			}
			return nil
		},
	}
	markNeedsStore(cmd)
	fl := cmd.Flags()
	fl.StringSliceVar(&states, "state", nil, "only jobs in these states (comma-separated): "+joinStates())
	fl.StringVar(&p.Queue, "queue", "", "only jobs of this queue")
	fl.StringVar(&p.Kind, "kind", "", "only jobs of this kind")
	fl.IntVar(&p.Limit, "limit", 100, fmt.Sprintf("at most this many jobs (1 to %d)", maxListLimit))
	fl.Int64Var(&p.After, "after", 0, "only jobs with a greater id: the last id of the previous page")
	fl.BoolVar(&asJSON, "json", false, "print the jobs as a JSON array")
	fl.BoolVar(&unroutable, "unroutable", false, "list the waiting routed jobs no live worker can take, by queue and routing")
	return cmd
}

// listUnroutable prints `drover jobs list --unroutable`.
func (c *cli) listUnroutable(cmd *cobra.Command, asJSON bool) error {
	ctx := cmd.Context()
	client, closeStore, err := c.openClient(ctx)
	if err != nil {
		return err
	}
	defer closeStore()
	groups, err := client.Unroutable(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(cmd.OutOrStdout(), jobjson.FromUnroutable(groups))
	}
	return writeUnroutable(cmd.OutOrStdout(), groups)
}

func (c *cli) jobsGetCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "get ID",
		Short: "Show one job with its args, metadata, tags and errors",
		Args:  argsNamed("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			job, err := c.callByID(cmd.Context(), args[0], storeClient.JobGet)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), jobjson.From(job))
			}
			return writeJobDetail(cmd.OutOrStdout(), job)
		},
	}
	markNeedsStore(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the job as JSON")
	return cmd
}

// callByID parses a job ID argument, opens the store and makes one call
// about that job, turning "no such job" into a message that names it.
func (c *cli) callByID(ctx context.Context, arg string,
	call func(storeClient, context.Context, int64) (*drover.JobRow, error)) (*drover.JobRow, error) {
	id, err := parseID(arg)
	if err != nil {
		return nil, err
	}
	client, closeStore, err := c.openClient(ctx)
	if err != nil {
		return nil, err
	}
	defer closeStore()
	job, err := call(client, ctx, id)
	if err != nil {
		return nil, notFound(id, err)
	}
	return job, nil
}

// jobsChangeCommand builds `jobs retry`, `jobs cancel` and `jobs discard`,
// which differ only in the client call and in what they explain. Given an
// ID they change that job; given a filter instead (--queue, --state,
// --kind) they change every job that matches it, a page at a time, and
// report how many they changed.
func (c *cli) jobsChangeCommand(name, short, long string,
	change func(storeClient, context.Context, int64) (*drover.JobRow, error)) *cobra.Command {
	var (
		asJSON bool
		states []string
		filter drover.JobListParams
	)
	cmd := &cobra.Command{
		Use:   name + " {ID | --queue Q --state S --kind K}",
		Short: short,
		Long: long + `

With a filter instead of an ID, every job that matches it is changed, in id
order, ` + fmt.Sprint(drover.BulkChunk) + ` jobs read at a time, each in its own guarded statement; progress
goes to stderr after every page, and the last line says how many jobs were
changed and how many matched.`,
		Example: fmt.Sprintf("  drover jobs %s 1042\n  drover jobs %s --queue emails --state discarded", name, name),
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			filtered := cmd.Flags().Changed("queue") || cmd.Flags().Changed("state") || cmd.Flags().Changed("kind")
			switch {
			case len(args) == 1 && filtered:
				return usagef("%s: give an ID or a filter (--queue, --state, --kind), not both", name)
			case len(args) == 0 && !filtered:
				return usagef("%s: missing argument ID, or a filter (--queue, --state, --kind) for every job that matches it", name)
			case len(args) == 0:
				for _, s := range states {
					st, err := parseState(s)
					if err != nil {
						return err
					}
					filter.States = append(filter.States, st)
				}
				return c.bulkChange(cmd, drover.BulkAction(name), filter, asJSON)
			}
			job, err := c.callByID(cmd.Context(), args[0], change)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, jobjson.From(job))
			}
			if err := writeJobTable(out, []*drover.JobRow{job}); err != nil {
				return err
			}
			if note := changeNote(name, job); note != "" {
				_, err = fmt.Fprintln(out, note)
			}
			return err
		},
	}
	markNeedsStore(cmd)
	fl := cmd.Flags()
	fl.BoolVar(&asJSON, "json", false, "print the job after the change as JSON (with a filter: the counts)")
	fl.StringSliceVar(&states, "state", nil, "with no ID: every job in these states (comma-separated): "+joinStates())
	fl.StringVar(&filter.Queue, "queue", "", "with no ID: every job of this queue")
	fl.StringVar(&filter.Kind, "kind", "", "with no ID: every job of this kind")
	return cmd
}

// bulkChange applies action to every job of filter, with progress on
// stderr.
func (c *cli) bulkChange(cmd *cobra.Command, action drover.BulkAction, filter drover.JobListParams, asJSON bool) error {
	if filter.Queue != "" {
		if err := drover.ValidateQueue(filter.Queue); err != nil {
			return fmt.Errorf("--queue: %w", err)
		}
	}
	ctx := cmd.Context()
	client, closeStore, err := c.openClient(ctx)
	if err != nil {
		return err
	}
	defer closeStore()
	stderr := cmd.ErrOrStderr()
	p, err := client.JobBulk(ctx, action, filter, func(p drover.BulkProgress) {
		fmt.Fprintf(stderr, "%s: %d jobs read, %d changed\n", action, p.Scanned, p.Changed)
	})
	if err != nil {
		return fmt.Errorf("%s after %d jobs read (%d changed): %w", action, p.Scanned, p.Changed, err)
	}
	if asJSON {
		return writeJSON(cmd.OutOrStdout(), map[string]any{"action": action, "matched": p.Scanned, "changed": p.Changed})
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s: changed %d of %d jobs that matched\n", action, p.Changed, p.Scanned)
	return err
}

// changeNote explains a retry or cancel that did not (yet) do what its
// name says, so that nobody takes the unchanged state for a failure.
func changeNote(action string, j *drover.JobRow) string {
	switch {
	case action == "cancel" && j.State == drover.JobStateRunning:
		return fmt.Sprintf("job %d is running: it was asked to stop at its worker's next heartbeat", j.ID)
	case action == "cancel" && j.State != drover.JobStateCancelled && j.State.Finished():
		return fmt.Sprintf("job %d had already finished as %s: left as it is", j.ID, j.State)
	case action == "retry" && j.State == drover.JobStateRunning:
		return fmt.Sprintf("job %d is running: left as it is", j.ID)
	case action == "discard" && j.State == drover.JobStateRunning:
		return fmt.Sprintf("job %d is running: left as it is (cancel it to stop it)", j.ID)
	case action == "discard" && j.State != drover.JobStateDiscarded && j.State.Finished():
		return fmt.Sprintf("job %d had already finished as %s: left as it is", j.ID, j.State)
	}
	return ""
}

func parseID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 {
		return 0, usagef("job ID %q: must be a positive integer", s)
	}
	return id, nil
}

// notFound words a missing job the same way whatever the store.
func notFound(id int64, err error) error {
	if errors.Is(err, drover.ErrNotFound) {
		return fmt.Errorf("job %d: %w", id, drover.ErrNotFound)
	}
	return err
}

func parseState(s string) (drover.JobState, error) {
	for _, st := range jobStates {
		if strings.EqualFold(s, string(st)) {
			return st, nil
		}
	}
	return "", usagef("--state %q: use %s", s, joinStates())
}

func joinStates() string {
	names := make([]string, len(jobStates))
	for i, s := range jobStates {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}
