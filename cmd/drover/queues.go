package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/internal/app/jobjson"
	"github.com/droverhq/drover/internal/validate"
)

func (c *cli) queuesCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "queues",
		Short: "List, pause and resume queues; strict order",
		Long: `queues shows and changes the settings stored for each queue, which every
worker applies, Go clients and HTTP workers alike.`,
	}
	cmd.AddCommand(c.queuesListCommand())
	cmd.AddCommand(c.queuesChangeCommand("pause", "Stop starting the jobs of a queue, or of kinds within it, fleet-wide",
		`pause stops every worker, in every process, from starting jobs of the queue:
each process sees the pause within a second. Running jobs finish, and jobs
can still be enqueued: they wait until the queue is resumed. With --kind,
only jobs of that kind stop (repeat it for more kinds): the queue's other
kinds run on, and the kind stays paused whether the queue is paused or
resumed meanwhile. It prints the queue after the change.`,
		storeClient.QueuePause, storeClient.QueuePauseKind))
	cmd.AddCommand(c.queuesChangeCommand("resume", "Start the jobs of a paused queue, or of kinds paused within it, again",
		`resume undoes pause: the queue's workers start its jobs again. Kinds paused
within the queue stay paused: each was paused for a reason of its own (a
failing handler, a service down), which a pause and resume of the whole
queue, for a deploy say, does not end; resume names them and the command
that resumes them. With --kind, it resumes that kind within the queue
(repeat it for more kinds), and leaves the queue's own pause as it is. It
prints the queue after the change.`,
		storeClient.QueueResume, storeClient.QueueResumeKind))
	cmd.AddCommand(c.queuesStrictCommand())
	return cmd
}

func (c *cli) queuesListCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List queues with their stored settings",
		Long: `list prints every queue that has stored settings or waiting or running jobs,
by name, with whether it is paused and its cluster-wide limits.`,
		Args: argsNamed(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			client, closeStore, err := c.openClient(ctx)
			if err != nil {
				return err
			}
			defer closeStore()
			settings, err := client.QueueList(ctx)
			if err != nil {
				return err
			}
			stats, err := client.QueueStats(ctx)
			if err != nil {
				return err
			}
			qs := jobjson.QueueList(settings, stats)
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), qs)
			}
			return writeQueueTable(cmd.OutOrStdout(), qs)
		},
	}
	markNeedsStore(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the queues as a JSON array")
	return cmd
}

// queuesChangeCommand builds `queues pause` and `queues resume`: change
// acts on the queue, changeKind on each kind named by --kind instead.
func (c *cli) queuesChangeCommand(name, short, long string,
	change func(storeClient, context.Context, string) error,
	changeKind func(storeClient, context.Context, string, string) error) *cobra.Command {
	var asJSON bool
	var kinds []string
	cmd := &cobra.Command{
		Use:   name + " NAME [--kind KIND]...",
		Short: short,
		Long:  long,
		Args:  argsNamed("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validate.Queue(args[0]); err != nil {
				return err
			}
			for _, k := range kinds {
				if err := validate.Kind(k); err != nil {
					return fmt.Errorf("--kind: %w", err)
				}
			}
			ctx := cmd.Context()
			client, closeStore, err := c.openClient(ctx)
			if err != nil {
				return err
			}
			defer closeStore()
			for _, k := range kinds {
				if err := changeKind(client, ctx, args[0], k); err != nil {
					return err
				}
			}
			if len(kinds) == 0 {
				if err := change(client, ctx, args[0]); err != nil {
					return err
				}
			}
			q, err := client.QueueGet(ctx, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), jobjson.FromQueue(q))
			}
			out := cmd.OutOrStdout()
			if err := writeQueueTable(out, []jobjson.Queue{jobjson.FromQueue(q)}); err != nil {
				return err
			}
			if name == "resume" && len(kinds) == 0 && len(q.PausedKinds) > 0 {
				_, err = fmt.Fprintf(out, "kinds still paused in %s: %s (resume them with: drover queues resume %s --kind %s)\n",
					q.Queue, strings.Join(q.PausedKinds, ", "), q.Queue, strings.Join(q.PausedKinds, " --kind "))
			}
			return err
		},
	}
	markNeedsStore(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the queue after the change as JSON")
	cmd.Flags().StringArrayVar(&kinds, "kind", nil, name+" only jobs of this kind within the queue (repeat for more kinds)")
	return cmd
}

// writeQueueTable prints queues as an aligned table, one row each.
func writeQueueTable(w io.Writer, qs []jobjson.Queue) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "QUEUE\tSTATUS\tPAUSED KINDS\tGLOBAL MAX\tRATE\tSTRICT")
	for _, q := range qs {
		status, kinds := "running", "-"
		if q.Paused {
			status = "paused"
		}
		if len(q.PausedKinds) > 0 {
			kinds = strings.Join(q.PausedKinds, ",")
		}
		globalMax, rate := "-", "-"
		if q.GlobalMaxWorkers > 0 {
			globalMax = strconv.Itoa(q.GlobalMaxWorkers)
		}
		if q.RateLimit > 0 {
			rate = fmt.Sprintf("%d per %s", q.RateLimit, time.Duration(q.RatePeriodMS)*time.Millisecond)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", q.Name, status, kinds, globalMax, rate, strictCell(q))
	}
	return tw.Flush()
}
