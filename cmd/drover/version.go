package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// versionInfo is what `drover version` reports: enough to tell which code
// a bug report or a bench result came from.
type versionInfo struct {
	Module   string `json:"module"`
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
}

// readVersion reads the build information the go tool stamps into the
// binary: the module version when installed with `go install …@version`,
// and the VCS revision when built from a checkout.
func readVersion() versionInfo {
	v := versionInfo{Module: "github.com/droverhq/drover", Version: "(unknown)", Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if bi.Main.Path != "" {
		v.Module = bi.Main.Path
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	if bi.GoVersion != "" {
		v.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

func (c *cli) versionCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of drover",
		Args:  argsNamed(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := readVersion()
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, v)
			}
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintf(tw, "drover\t%s\n", v.Version)
			fmt.Fprintf(tw, "module\t%s\n", v.Module)
			if v.Revision != "" {
				rev := v.Revision
				if v.Modified {
					rev += " (modified)"
				}
				fmt.Fprintf(tw, "revision\t%s\n", rev)
			}
			if v.Time != "" {
				fmt.Fprintf(tw, "commit time\t%s\n", v.Time)
			}
			fmt.Fprintf(tw, "go\t%s\n", v.Go)
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the version as JSON")
	return cmd
}
