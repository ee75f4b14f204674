package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/jobjson"
	"github.com/droverhq/drover/internal/validate"
)

// jobStates are the states --state accepts, in the order of a job's life.
var jobStates = drovertype.JobStates()

// maxListLimit matches what drover.Client.JobList accepts.
const maxListLimit = 10_000

func (c *cli) jobsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "jobs",
		Short: "List, inspect, retry, cancel, discard and delete jobs",
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
	cmd.AddCommand(c.jobsDeleteCommand())
	return cmd
}

// jobsDeleteCommand builds `jobs delete`, which acts on the jobs its IDs
// name or on every job of a filter; it has no single-job form of its own.
func (c *cli) jobsDeleteCommand() *cobra.Command {
	var (
		asJSON bool
		bf     bulkFlags
	)
	cmd := &cobra.Command{
		Use:   "delete {ID... | --queue Q --state S --kind K}",
		Short: "Delete jobs that are not running",
		Long: `delete removes jobs from the store: finished jobs at once, as the pruner
would, and waiting jobs after cancelling them, so that their dependants are
cancelled, their batch counts them, the next job of their key starts and
their unique key is free. Running jobs are refused: they stay, and are not
counted (cancel them first). A deleted job is gone for good.

Give the IDs of the jobs, or a filter (--queue, --state, --kind) for every
job that matches it. Either way the jobs are deleted ` + fmt.Sprint(drover.BulkChunk) + ` at a time, each page
in one transaction; progress goes to stderr after each full page, and the
last line says how many jobs were deleted and how many were given or matched.`,
		Example: "  drover jobs delete 1042 1043\n  drover jobs delete --queue emails --state discarded,cancelled",
		RunE: func(cmd *cobra.Command, args []string) error {
			filter, ok, err := bf.chosen(cmd, "delete", args)
			switch {
			case err != nil:
				return err
			case ok:
				return c.bulkChange(cmd, drover.BulkDelete, filter, nil, asJSON)
			}
			ids := make([]int64, len(args))
			for i, a := range args {
				if ids[i], err = parseID(a); err != nil {
					return err
				}
			}
			return c.bulkChange(cmd, drover.BulkDelete, filter, ids, asJSON)
		},
	}
	markNeedsStore(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the counts as JSON")
	bf.register(cmd.Flags())
	return cmd
}

// bulkFlags are the filter of the job actions over many jobs (--queue,
// --state, --kind), given instead of job IDs.
type bulkFlags struct {
	states []string
	filter drover.JobListParams
}

func (f *bulkFlags) register(fl *pflag.FlagSet) {
	fl.StringSliceVar(&f.states, "state", nil, "with no ID: every job in these states (comma-separated): "+joinStates())
	fl.StringVar(&f.filter.Queue, "queue", "", "with no ID: every job of this queue")
	fl.StringVar(&f.filter.Kind, "kind", "", "with no ID: every job of this kind")
}

// chosen checks that action got job IDs (args) or a filter, not both and
// not neither, and returns the filter and true when it got a filter.
func (f *bulkFlags) chosen(cmd *cobra.Command, action string, args []string) (drover.JobListParams, bool, error) {
	filtered := cmd.Flags().Changed("queue") || cmd.Flags().Changed("state") || cmd.Flags().Changed("kind")
	switch {
	case len(args) > 0 && filtered:
		return f.filter, false, usagef("%s: give an ID or a filter (--queue, --state, --kind), not both", action)
	case len(args) == 0 && !filtered:
		return f.filter, false, usagef("%s: missing argument ID, or a filter (--queue, --state, --kind) for every job that matches it", action)
	case !filtered:
		return f.filter, false, nil
	}
	p := f.filter
	for _, s := range f.states {
		st, err := parseState(s)
		if err != nil {
			return p, false, err
		}
		p.States = append(p.States, st)
	}
	return p, true, nil
}

func (c *cli) jobsListCommand() *cobra.Command {
	var (
		states     []string
		p          drover.JobListParams
		f          searchFlags
		asJSON     bool
		count      bool
		unroutable bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Search jobs by state, queue, kind, tags, args, metadata and times",
		Long: `list prints the jobs that match every filter given, oldest first (or newest
first with --order newest), a page at a time: pass the last id printed as
--after to get the next page.

--args and --metadata take a JSON object that the job's must contain, as
PostgreSQL's jsonb @> defines it on both stores: '{"to":"a@example.com"}'
matches args with that key and value among others; nested objects match
likewise, and an array matches an array holding at least its elements.
--tag keeps jobs carrying every tag given. Each time filter takes an RFC 3339
time or a duration ago ("90m": since an hour and a half ago); since is
inclusive, until exclusive.

A search walks the jobs tables by id a window at a time, whatever the
filter, so a page deep in ten million jobs costs what the first does; each
window starts at the next job of the --state, --queue and --kind given,
found from an index, and a filter that few jobs match reads on until it
fills the page or reaches the end. --count prints on stderr how many jobs
match: exactly while a table holds up to 50,000 jobs or the matches are few
enough to reach by such windows, an estimate beyond ("about").

With --unroutable it prints instead the waiting jobs that no live worker
can take (none that works their queue matches their worker type, names and
labels and runs their kind), grouped by queue, kind and routing, with the
first job's id. Plain jobs show there when every live worker of their queue
named the kinds it runs (Go clients do) and none named theirs.`,
		Example: `  drover jobs list --state available,running --queue default
  drover jobs list --kind email --args '{"to":"a@example.com"}' --order newest
  drover jobs list --state discarded --finished-since 1h --count
  drover jobs list --tag vip --metadata '{"tenant":"acme"}' --limit 20 --after 1040 --json
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
				if err := validate.Queue(p.Queue); err != nil {
					return fmt.Errorf("--queue: %w", err)
				}
			}
			if p.Limit < 1 || p.Limit > maxListLimit {
				return usagef("--limit %d: must be between 1 and %d", p.Limit, maxListLimit)
			}
			if p.After < 0 {
				return usagef("--after %d: must not be negative", p.After)
			}
			if err := f.apply(&p, time.Now()); err != nil {
				return err
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
				err = writeJobsJSON(cmd.OutOrStdout(), jobs)
			} else {
				err = writeJobTable(cmd.OutOrStdout(), jobs)
			}
			if err != nil {
				return err
			}
			// On stderr, so that the table and the JSON stay clean for
			// pipes.
			if len(jobs) == p.Limit {
				fmt.Fprintf(cmd.ErrOrStderr(), "more jobs may follow: add --after %d\n", jobs[len(jobs)-1].ID)
			}
			if count {
				n, err := client.JobCount(ctx, p)
				if err != nil {
					return err
				}
				about, verb := "", "match"
				if !n.Exact {
					about = "about "
				}
				if n.Count == 1 {
					verb = "matches"
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "%s%s %s\n", about, jobsText(n.Count), verb)
			}
			return nil
		},
	}
	markNeedsStore(cmd)
	fl := cmd.Flags()
	fl.StringSliceVar(&states, "state", nil, "only jobs in these states (comma-separated): "+joinStates())
	fl.StringVar(&p.Queue, "queue", "", "only jobs of this queue")
	fl.StringVar(&p.Kind, "kind", "", "only jobs of this kind")
	fl.StringSliceVar(&p.Tags, "tag", nil, "only jobs carrying every one of these tags (repeat, or comma-separated)")
	f.register(fl)
	fl.StringVar(&f.order, "order", "oldest", "oldest (lowest id) or newest first")
	fl.IntVar(&p.Limit, "limit", 100, fmt.Sprintf("at most this many jobs (1 to %d)", maxListLimit))
	fl.Int64Var(&p.After, "after", 0, "only jobs after this id in the list's order: the last id of the previous page")
	fl.BoolVar(&asJSON, "json", false, "print the jobs as a JSON array")
	fl.BoolVar(&count, "count", false, "also print on stderr how many jobs match (estimated beyond 50,000 jobs per table)")
	fl.BoolVar(&unroutable, "unroutable", false, "list the waiting jobs no live worker can take, by queue, kind and routing")
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

// searchFlags are the search filters of jobs list that need parsing: JSON
// objects, times and the order.
type searchFlags struct {
	args, metadata string
	times          [8]string // since and until of created, scheduled, attempted, finished
	order          string
}

// searchTimes names the time filters, in the order of searchFlags.times
// (since, until of each).
var searchTimes = []struct {
	name, what string
	field      func(*drover.JobListParams) *drovertype.TimeRange
}{
	{"created", "created", func(p *drover.JobListParams) *drovertype.TimeRange { return &p.Created }},
	{"scheduled", "due to run (run_at)", func(p *drover.JobListParams) *drovertype.TimeRange { return &p.Scheduled }},
	{"attempted", "whose last attempt started", func(p *drover.JobListParams) *drovertype.TimeRange { return &p.Attempted }},
	{"finished", "finished", func(p *drover.JobListParams) *drovertype.TimeRange { return &p.Finished }},
}

func (f *searchFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.args, "args", "", `only jobs whose args contain this JSON object, e.g. '{"to":"a@example.com"}'`)
	fl.StringVar(&f.metadata, "metadata", "", "only jobs whose metadata contain this JSON object")
	for i, t := range searchTimes {
		fl.StringVar(&f.times[2*i], t.name+"-since", "", "only jobs "+t.what+" at or after this time (RFC 3339, or a duration ago such as 1h)")
		fl.StringVar(&f.times[2*i+1], t.name+"-until", "", "only jobs "+t.what+" before this time (RFC 3339, or a duration ago)")
	}
}

// apply sets p's filters from the flags, durations counted back from now.
func (f *searchFlags) apply(p *drover.JobListParams, now time.Time) error {
	for _, j := range []struct {
		flag string
		v    string
		dst  *json.RawMessage
	}{{"--args", f.args, &p.Args}, {"--metadata", f.metadata, &p.Metadata}} {
		if j.v == "" {
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(j.v), &obj); err != nil || obj == nil {
			return usagef(`%s %q: must be a JSON object, such as '{"to":"a@example.com"}'`, j.flag, j.v)
		}
		*j.dst = json.RawMessage(j.v)
	}
	for i, t := range searchTimes {
		for k, dst := range []*time.Time{&t.field(p).From, &t.field(p).To} {
			v := f.times[2*i+k]
			if v == "" {
				continue
			}
			flag := "--" + t.name + []string{"-since", "-until"}[k]
			if d, err := time.ParseDuration(v); err == nil {
				if d < 0 {
					return usagef("%s %q: a duration ago must not be negative", flag, v)
				}
				*dst = now.Add(-d)
				continue
			}
			at, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return usagef("%s %q: want an RFC 3339 time (2026-01-02T15:04:05Z) or a duration ago (90m)", flag, v)
			}
			*dst = at
		}
	}
	switch f.order {
	case "oldest", "":
	case "newest":
		p.NewestFirst = true
	default:
		return usagef("--order %q: use oldest or newest", f.order)
	}
	return nil
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
	call func(storeClient, context.Context, int64) (*drovertype.JobRow, error)) (*drovertype.JobRow, error) {
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
	change func(storeClient, context.Context, int64) (*drovertype.JobRow, error)) *cobra.Command {
	var (
		asJSON bool
		bf     bulkFlags
	)
	cmd := &cobra.Command{
		Use:   name + " {ID | --queue Q --state S --kind K}",
		Short: short,
		Long: long + `

With a filter instead of an ID, every job that matches it is changed, in id
order, ` + fmt.Sprint(drover.BulkChunk) + ` jobs at a time, each page in one transaction; progress goes to
stderr after each full page, and the last line says how many jobs were
changed and how many matched.`,
		Example: fmt.Sprintf("  drover jobs %s 1042\n  drover jobs %s --queue emails --state discarded", name, name),
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			filter, ok, err := bf.chosen(cmd, name, args)
			switch {
			case err != nil:
				return err
			case ok:
				return c.bulkChange(cmd, drover.BulkAction(name), filter, nil, asJSON)
			}
			job, err := c.callByID(cmd.Context(), args[0], change)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, jobjson.From(job))
			}
			if err := writeJobTable(out, []*drovertype.JobRow{job}); err != nil {
				return err
			}
			if note := changeNote(name, job); note != "" {
				_, err = fmt.Fprintln(out, note)
			}
			return err
		},
	}
	markNeedsStore(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the job after the change as JSON (with a filter: the counts)")
	bf.register(cmd.Flags())
	return cmd
}

// bulkChange applies action to the jobs ids names or, without ids, to
// every job of filter, with progress on stderr.
func (c *cli) bulkChange(cmd *cobra.Command, action drover.BulkAction, filter drover.JobListParams, ids []int64, asJSON bool) error {
	if filter.Queue != "" {
		if err := validate.Queue(filter.Queue); err != nil {
			return fmt.Errorf("--queue: %w", err)
		}
	}
	ctx := cmd.Context()
	client, closeStore, err := c.openClient(ctx)
	if err != nil {
		return err
	}
	defer closeStore()
	// Progress after each full page, which more may follow; a short page
	// is the last, whose figures the summary gives once.
	stderr := cmd.ErrOrStderr()
	var read int64
	progress := func(p drover.BulkProgress) {
		if p.Scanned-read == drover.BulkChunk {
			fmt.Fprintf(stderr, "%s: %s read, %d changed so far\n", action, jobsText(p.Scanned), p.Changed)
		}
		read = p.Scanned
	}
	var p drover.BulkProgress
	if ids != nil {
		p, err = client.JobBulkByID(ctx, action, ids, progress)
	} else {
		p, err = client.JobBulk(ctx, action, filter, progress)
	}
	if err != nil {
		return fmt.Errorf("%s after %s read (%d changed): %w", action, jobsText(p.Scanned), p.Changed, err)
	}
	if asJSON {
		return writeJSON(cmd.OutOrStdout(), map[string]any{"action": action, "matched": p.Scanned, "changed": p.Changed})
	}
	what := "that matched"
	if ids != nil {
		what = "given"
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s: changed %d of %s %s\n", action, p.Changed, jobsText(p.Scanned), what)
	return err
}

// jobsText is "1 job" or "n jobs".
func jobsText(n int64) string {
	if n == 1 {
		return "1 job"
	}
	return strconv.FormatInt(n, 10) + " jobs"
}

// changeNote explains a retry or cancel that did not (yet) do what its
// name says, so that nobody takes the unchanged state for a failure.
func changeNote(action string, j *drovertype.JobRow) string {
	switch {
	case action == "cancel" && j.State == drovertype.JobStateRunning:
		return fmt.Sprintf("job %d is running: it was asked to stop at its worker's next heartbeat", j.ID)
	case action == "cancel" && j.State != drovertype.JobStateCancelled && j.State.Finished():
		return fmt.Sprintf("job %d had already finished as %s: left as it is", j.ID, j.State)
	case action == "retry" && j.State == drovertype.JobStateRunning:
		return fmt.Sprintf("job %d is running: left as it is", j.ID)
	case action == "discard" && j.State == drovertype.JobStateRunning:
		return fmt.Sprintf("job %d is running: left as it is (cancel it to stop it)", j.ID)
	case action == "discard" && j.State != drovertype.JobStateDiscarded && j.State.Finished():
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

func parseState(s string) (drovertype.JobState, error) {
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
