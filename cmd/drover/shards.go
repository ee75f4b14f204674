package main

import (
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/droverhq/drover/droverfleet"
)

// `drover shards`: the shards of a fleet (docs/scaling.md, "Past one
// PostgreSQL"), their records and health, and their drain flags.

func (c *cli) shardsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "shards",
		Short: "List the shards of a fleet, and drain one",
		Long: `shards works on the fleet that repeated --database-url flags (or
DROVER_DATABASE_URLS) name: list prints each shard's place, fleet, whether it
drains and whether it answers; drain I stops new placements on shard I while
its workers finish what it holds, and undrain I takes it back.`,
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the shards: index, fleet, key shards, draining, answering",
		Args:  argsNamed(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, closeStore, err := c.openFleet(cmd)
			if err != nil {
				return err
			}
			defer closeStore()
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "SHARD\tFLEET\tKEY SHARDS\tDRAINING\tSTATE")
			for _, s := range f.Shards() {
				fleet, keys, draining, state := "-", "-", "-", "answers"
				if r := s.Record; r != nil {
					fleet, keys, draining = r.Fleet, strconv.Itoa(r.KeyShards), strconv.FormatBool(r.Draining)
				} else {
					state = "not attached (run drover migrate)"
				}
				if s.Down != nil {
					state = "down: " + c.redact(s.Down.Error())
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", s.Index, fleet, keys, draining, state)
			}
			return tw.Flush()
		},
	}
	drain := func(use string, draining bool) *cobra.Command {
		return &cobra.Command{
			Use:   use + " I",
			Short: map[bool]string{true: "Stop new placements on shard I; its workers finish what it holds", false: "Let shard I take new placements again"}[draining],
			Args:  argsNamed("I"),
			RunE: func(cmd *cobra.Command, args []string) error {
				i, err := strconv.Atoi(args[0])
				if err != nil {
					return usagef("shard %q: not a number", args[0])
				}
				f, closeStore, err := c.openFleet(cmd)
				if err != nil {
					return err
				}
				defer closeStore()
				if err := f.SetDraining(cmd.Context(), i, draining); err != nil {
					return err
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "shard %d draining: %t\n", i, draining)
				return err
			},
		}
	}
	cmd.AddCommand(list, drain("drain", true), drain("undrain", false))
	markNeedsStore(cmd)
	return cmd
}

// openFleet opens the store as a fleet, or says that one URL is not one.
func (c *cli) openFleet(cmd *cobra.Command) (*droverfleet.Driver[pgx.Tx], func(), error) {
	if len(c.target.Shards) < 2 {
		return nil, nil, usagef("drover shards works on a fleet: give --database-url once per shard, or DROVER_DATABASE_URLS")
	}
	st, err := c.openStore(cmd.Context(), true)
	if err != nil {
		return nil, nil, err
	}
	f, ok := st.Driver.(*droverfleet.Driver[pgx.Tx])
	if !ok {
		st.Close()
		return nil, nil, fmt.Errorf("the store is a %T, not a fleet", st.Driver)
	}
	return f, st.Close, nil
}
