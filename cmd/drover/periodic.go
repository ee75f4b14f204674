package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/app/jobjson"
	"github.com/droverhq/drover/internal/app/storeurl"
)

// withPeriodic opens the store and runs fn on its periodic jobs.
func (c *cli) withPeriodic(ctx context.Context, fn func(*drover.PeriodicJobSet) error) error {
	st, err := c.openStore(ctx, true)
	if err != nil {
		return err
	}
	defer st.Close()
	client, err := storeurl.NewClient[storeClient](st, &drover.Config{Logger: c.logger})
	if err != nil {
		return err
	}
	return fn(client.PeriodicJobs())
}

// periodicCommand is `drover periodic`: the cron jobs stored in the
// database and the Go-configured ones their leader registered, named as
// Sidekiq-cron and Oban users know them (list, create, pause, resume,
// trigger for "enqueue now").
func (c *cli) periodicCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "periodic",
		Aliases: []string{"cron"},
		Short:   "List, create, pause, resume and trigger periodic (cron) jobs",
		Long: `periodic manages periodic (cron) jobs: those created here, through the HTTP API
or an SDK, stored in the database, and the Go-configured ones
(Config.PeriodicJobs) that the leader registers when it takes over. The
leader of the running clients (drover serve, drover worker or a Go program
with a started Client) inserts their jobs at each tick; a change made here
takes effect within its reload interval (10 s by default).`,
	}
	cmd.AddCommand(c.periodicListCommand(), c.periodicSaveCommand("create"), c.periodicSaveCommand("update"),
		c.periodicDeleteCommand(),
		c.periodicByNameCommand("pause", "Stop a periodic job from inserting jobs until resumed",
			(*drover.PeriodicJobSet).Pause),
		c.periodicByNameCommand("resume", "Let a paused periodic job insert again from its next tick",
			(*drover.PeriodicJobSet).Resume),
		c.periodicTriggerCommand())
	markNeedsStore(cmd)
	return cmd
}

func (c *cli) periodicListCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List periodic jobs with their schedule, next run and last run",
		Args:  argsNamed(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.withPeriodic(cmd.Context(), func(set *drover.PeriodicJobSet) error {
				all, err := set.List(cmd.Context())
				if err != nil {
					return err
				}
				if asJSON {
					if all == nil {
						all = []*drover.PeriodicJobStatus{}
					}
					return writeJSON(cmd.OutOrStdout(), all)
				}
				return writePeriodicTable(cmd.OutOrStdout(), all)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the periodic jobs as a JSON array")
	return cmd
}

// periodicSaveCommand builds `periodic create` and `periodic update`,
// which take the same flags.
func (c *cli) periodicSaveCommand(verb string) *cobra.Command {
	var (
		d      drover.PeriodicDefinition
		args   string
		asJSON bool
	)
	short, long := "Store a new periodic job", `create stores a periodic job: at each tick of --schedule the leader inserts a
job of --kind with --args. A name already taken, stored or Go-configured, is
refused.`
	if verb == "update" {
		short, long = "Change a stored periodic job", `update replaces the schedule, job and options of a periodic job created
through the API, keeping whether it is paused. A Go-configured one changes in
its Go config.`
	}
	cmd := &cobra.Command{
		Use:   verb + " NAME",
		Short: short,
		Long:  long,
		Example: fmt.Sprintf(`  drover periodic %s nightly-report --schedule "0 3 * * *" --kind report.build --args '{"scope":"all"}'
  drover periodic %s cleanup --schedule "@every 15m" --kind cleanup --queue maintenance --tags ops`, verb, verb),
		Args: argsNamed("NAME"),
		RunE: func(cmd *cobra.Command, a []string) error {
			d.Name = a[0]
			if d.Schedule == "" || d.Kind == "" {
				return usagef("%s: --schedule and --kind are required", verb)
			}
			if !json.Valid([]byte(args)) {
				return usagef("--args: not valid JSON")
			}
			d.Args = json.RawMessage(args)
			return c.withPeriodic(cmd.Context(), func(set *drover.PeriodicJobSet) error {
				save := set.Create
				if verb == "update" {
					save = set.Update
				}
				p, err := save(cmd.Context(), d)
				if err != nil {
					return err
				}
				return writePeriodic(cmd.OutOrStdout(), p, asJSON)
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&d.Schedule, "schedule", "", `cron expression ("*/5 * * * *", optionally CRON_TZ=Zone first) or descriptor ("@hourly", "@every 90s")`)
	fl.StringVar(&d.Kind, "kind", "", "kind of the jobs it inserts")
	fl.StringVar(&args, "args", "{}", "JSON object: the args of each job")
	fl.StringVar(&d.Queue, "queue", drover.DefaultQueue, "queue of each job")
	fl.IntVar(&d.Priority, "priority", 0, "priority of each job (lower runs first)")
	fl.IntVar(&d.MaxAttempts, "max-attempts", 0, "attempts of each job (0: the inserting client's default, 25)")
	fl.StringSliceVar(&d.Tags, "tags", nil, "comma-separated tags of each job")
	fl.BoolVar(&asJSON, "json", false, "print the periodic job as JSON")
	return cmd
}

func (c *cli) periodicDeleteCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a periodic job (the jobs it inserted stay)",
		Args:  argsNamed("NAME"),
		RunE: func(cmd *cobra.Command, a []string) error {
			return c.withPeriodic(cmd.Context(), func(set *drover.PeriodicJobSet) error {
				if err := set.Delete(cmd.Context(), a[0]); err != nil {
					return err
				}
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "deleted periodic job %q\n", a[0])
				return err
			})
		},
	}
}

// periodicByNameCommand builds `periodic pause` and `periodic resume`.
func (c *cli) periodicByNameCommand(verb, short string,
	call func(*drover.PeriodicJobSet, context.Context, string) (*drover.PeriodicJobStatus, error)) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   verb + " NAME",
		Short: short,
		Args:  argsNamed("NAME"),
		RunE: func(cmd *cobra.Command, a []string) error {
			return c.withPeriodic(cmd.Context(), func(set *drover.PeriodicJobSet) error {
				p, err := call(set, cmd.Context(), a[0])
				if err != nil {
					return err
				}
				return writePeriodic(cmd.OutOrStdout(), p, asJSON)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the periodic job as JSON")
	return cmd
}

func (c *cli) periodicTriggerCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "trigger NAME",
		Aliases: []string{"run", "enqueue"},
		Short:   "Insert one job of a periodic job now, outside its schedule",
		Long: `trigger inserts one job of a periodic job now, paused or not, and prints its
id. Its metadata names the periodic job with "triggered": true.`,
		Args: argsNamed("NAME"),
		RunE: func(cmd *cobra.Command, a []string) error {
			return c.withPeriodic(cmd.Context(), func(set *drover.PeriodicJobSet) error {
				job, err := set.Trigger(cmd.Context(), a[0])
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(cmd.OutOrStdout(), jobjson.From(job))
				}
				_, err = fmt.Fprintln(cmd.OutOrStdout(), job.ID)
				return err
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the job inserted as JSON")
	return cmd
}

func writePeriodic(w io.Writer, p *drover.PeriodicJobStatus, asJSON bool) error {
	if asJSON {
		return writeJSON(w, p)
	}
	return writePeriodicTable(w, []*drover.PeriodicJobStatus{p})
}

func writePeriodicTable(w io.Writer, all []*drover.PeriodicJobStatus) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSCHEDULE\tKIND\tQUEUE\tSOURCE\tSTATUS\tNEXT RUN\tLAST RUN")
	for _, p := range all {
		status := "active"
		if p.Paused {
			status = "paused"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.Schedule, p.Kind, p.Queue, p.Source, status,
			formatTimePtr(p.NextRunAt), formatTimePtr(p.LastRunAt))
	}
	return tw.Flush()
}
