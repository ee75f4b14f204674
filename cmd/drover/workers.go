package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/jobjson"
	"github.com/droverhq/drover/internal/validate"
)

// Routing on the command line (docs/routing.md): `drover workers list`,
// `drover jobs list --unroutable`, `drover queues strict` and the routing
// flags of `drover enqueue`.

func (c *cli) workersCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workers",
		Short: "List the workers that registered",
	}
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the worker registry: type, labels, queues, last heartbeat, jobs held",
		Long: `list prints every worker that registered, by name: Go clients register at each
heartbeat, HTTP workers when they claim. A worker is live while it was seen
in the last minute or holds a lease that has not expired; only live workers
count as able to take a routed job. A plain worker said nothing of itself
and takes plain jobs only.`,
		Args: argsNamed(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			client, closeStore, err := c.openClient(ctx)
			if err != nil {
				return err
			}
			defer closeStore()
			ws, err := client.Workers(ctx)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), jobjson.FromWorkers(ws))
			}
			return writeWorkerTable(cmd.OutOrStdout(), ws, time.Now())
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print the workers as a JSON array")
	cmd.AddCommand(list)
	markNeedsStore(cmd)
	return cmd
}

func writeWorkerTable(w io.Writer, ws []*drovertype.WorkerInfo, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKER\tTYPE\tLABELS\tQUEUES\tKINDS\tSOURCE\tLAST SEEN\tHELD\tLIVE")
	for _, x := range ws {
		typ := orDash(x.Type)
		if x.Plain {
			typ = "(plain)"
		}
		live := "yes"
		if !x.Live {
			live = "no"
		}
		kinds := "(every kind)"
		if x.Kinds != nil {
			kinds = orDash(strings.Join(x.Kinds, ","))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s ago\t%d\t%s\n", x.Name, typ, formatLabels(x.Labels), orDash(strings.Join(x.Queues, ",")),
			kinds, x.Source, max(now.Sub(x.LastSeen), 0).Round(time.Second), x.JobsHeld, live)
	}
	return tw.Flush()
}

// formatLabels prints labels as k=v pairs by key.
func formatLabels(m map[string]string) string {
	if len(m) == 0 {
		return "-"
	}
	keys := slices.Sorted(maps.Keys(m))
	for i, k := range keys {
		keys[i] = k + "=" + m[k]
	}
	return strings.Join(keys, ",")
}

// formatRouting says where a job may run, for tables and job detail.
func formatRouting(r *drovertype.Routing) string {
	if r == nil {
		return "-"
	}
	var parts []string
	if r.Type != "" {
		parts = append(parts, "type "+r.Type)
	}
	if len(r.Names) > 0 {
		parts = append(parts, "named "+strings.Join(r.Names, ","))
	}
	if len(r.Labels) > 0 {
		parts = append(parts, "with "+formatLabels(r.Labels))
	}
	s := strings.Join(parts, " ")
	if r.OnAbsent != "" {
		s += fmt.Sprintf("; if absent %s: %s", r.AbsentAfter.Duration(), r.OnAbsent)
	}
	if len(r.FellBackFrom) > 0 {
		s += " (fell back from " + strings.Join(r.FellBackFrom, ",") + ")"
	}
	return s
}

// writeUnroutable prints `drover jobs list --unroutable`.
func writeUnroutable(w io.Writer, groups []*drover.UnroutableJobs) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "QUEUE\tKIND\tJOBS\tFIRST ID\tOLDEST RUN AT\tWANTS")
	for _, g := range groups {
		wants := formatRouting(g.Routing)
		if g.Routing == nil {
			wants = "a worker that runs " + g.Kind
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", g.Queue, g.Kind, g.Jobs, g.FirstID, formatTime(g.OldestRunAt), wants)
	}
	return tw.Flush()
}

// routeFlags are the routing options of `drover enqueue`.
type routeFlags struct {
	workerType  string
	workers     []string
	labels      []string
	onAbsent    string
	absentAfter time.Duration
}

func (f *routeFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.workerType, "worker-type", "", "run only on workers of this type")
	fl.StringSliceVar(&f.workers, "worker", nil, "run only on one of these workers, by name (comma-separated or repeated)")
	fl.StringArrayVar(&f.labels, "label", nil, "run only on workers with this label, as key=value (repeat for more)")
	fl.StringVar(&f.onAbsent, "on-worker-absent", "", "with --worker, when none of them has been seen for --worker-absent-after: wait (default), fallback (to any worker of --worker-type) or fail")
	fl.DurationVar(&f.absentAfter, "worker-absent-after", 0, "with --on-worker-absent: how long the workers may stay away (default 5m)")
}

// apply sets the routing of opts, checking the flags' own form; the
// client checks the rest.
func (f *routeFlags) apply(opts *drover.InsertOpts) error {
	opts.WorkerType, opts.WorkerNames = f.workerType, f.workers
	opts.OnWorkerAbsent, opts.WorkerAbsentAfter = drovertype.AbsentPolicy(f.onAbsent), f.absentAfter
	labels, err := parseLabels("--label", f.labels)
	if err != nil {
		return err
	}
	opts.WorkerLabels = labels
	return nil
}

// parseLabels reads key=value pairs.
func parseLabels(flag string, pairs []string) (map[string]string, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return nil, usagef("%s %q: use key=value", flag, p)
		}
		if _, dup := out[k]; dup {
			return nil, usagef("%s %q: key %q given twice", flag, p, k)
		}
		out[k] = v
	}
	if err := validate.Labels(out); err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return out, nil
}

func (c *cli) queuesStrictCommand() *cobra.Command {
	var (
		asJSON     bool
		maxRunning int
		off        bool
	)
	cmd := &cobra.Command{
		Use:   "strict NAME",
		Short: "Start a queue's jobs strictly in order, fleet-wide",
		Long: `strict puts the queue in strict order: its jobs start strictly in priority,
then insert order across every worker of every process, at most --max-running
of them at once (1 by default), with no leader forwarding claims: each claim
of the queue takes the queue's settings row in the store in turn, while other
queues are claimed as before. A job that fails keeps its place at the head
until it runs again. --off takes the queue out of strict order. Each process
sees the change within a second. It prints the queue after the change.`,
		Example: "  drover queues strict payments\n  drover queues strict ingest --max-running 4\n  drover queues strict payments --off",
		Args:    argsNamed("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validate.Queue(args[0]); err != nil {
				return err
			}
			n := maxRunning
			switch {
			case off && cmd.Flags().Changed("max-running"):
				return usagef("strict: give --off or --max-running, not both")
			case off:
				n = 0
			case n < 1:
				return usagef("--max-running %d: must be at least 1 (use --off to end strict order)", n)
			}
			ctx := cmd.Context()
			client, closeStore, err := c.openClient(ctx)
			if err != nil {
				return err
			}
			defer closeStore()
			q, err := client.QueueSetStrictOrder(ctx, args[0], n)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), jobjson.FromQueue(q))
			}
			return writeQueueTable(cmd.OutOrStdout(), []jobjson.Queue{jobjson.FromQueue(q)})
		},
	}
	markNeedsStore(cmd)
	fl := cmd.Flags()
	fl.IntVar(&maxRunning, "max-running", 1, "how many of the queue's jobs may run at once")
	fl.BoolVar(&off, "off", false, "take the queue out of strict order")
	fl.BoolVar(&asJSON, "json", false, "print the queue after the change as JSON")
	return cmd
}

// strictCell is the STRICT column of the queue table.
func strictCell(q jobjson.Queue) string {
	if q.StrictOrder == 0 {
		return "-"
	}
	return strconv.Itoa(q.StrictOrder) + " at once"
}
