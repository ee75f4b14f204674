package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/app/jobjson"
)

// insertBatch is `drover enqueue --batch`: the copies as one batch.
func (f *enqueueFlags) insertBatch(cmd *cobra.Command, client storeClient, params []drover.InsertManyParams) error {
	var opts *drover.BatchOpts
	if f.callbackKind != "" {
		opts = &drover.BatchOpts{
			Callback:     drover.RawArgs{KindName: f.callbackKind, JSON: json.RawMessage(f.callbackArgs)},
			CallbackOpts: &drover.InsertOpts{Queue: f.queue},
		}
	}
	b, err := client.InsertBatch(cmd.Context(), params, opts)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if f.json {
		return writeJSON(out, struct {
			Batch    int64   `json:"batch"`
			IDs      []int64 `json:"ids"`
			Callback int64   `json:"callback,omitempty"`
		}{b.ID, b.JobIDs, b.CallbackID})
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "batch %d\n", b.ID)
	for _, id := range b.JobIDs {
		fmt.Fprintln(&sb, id)
	}
	_, err = fmt.Fprint(out, sb.String())
	return err
}

// batchCommand is `drover batch ID`: a batch's progress.
func (c *cli) batchCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "batch ID",
		Short: "Show a batch's progress",
		Long: `batch prints how many members of a batch are pending, running, failed (waiting
for a retry), completed, cancelled and discarded, and its callback job.`,
		Args: argsNamed("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id < 1 {
				return usagef("batch ID %q: must be a positive integer", args[0])
			}
			ctx := cmd.Context()
			client, closeStore, err := c.openClient(ctx)
			if err != nil {
				return err
			}
			defer closeStore()
			b, err := client.BatchGet(ctx, id)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, jobjson.FromBatch(b))
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "batch\t%d\n", b.ID)
			fmt.Fprintf(tw, "total\t%d\n", b.Total)
			for _, row := range []struct {
				name string
				n    int64
			}{{"pending", b.Pending()}, {"running", b.Running}, {"failed", b.Failed}, {"completed", b.Completed},
				{"cancelled", b.Cancelled}, {"discarded", b.Discarded}} {
				fmt.Fprintf(tw, "%s\t%d\n", row.name, row.n)
			}
			if b.CallbackJobID != 0 {
				fmt.Fprintf(tw, "callback job\t%d\n", b.CallbackJobID)
			}
			if b.FinishedAt != nil {
				fmt.Fprintf(tw, "finished at\t%s\n", b.FinishedAt.UTC().Format(time.RFC3339))
			}
			return tw.Flush()
		},
	}
	markNeedsStore(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the progress as JSON")
	return cmd
}
