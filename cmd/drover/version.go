package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// Set at link time by builds that carry no VCS stamp of their own (the go
// tool stamps none under -buildvcs=false, for `go run`, or outside a
// checkout):
//
//	go build -ldflags "-X main.commit=$(git rev-parse HEAD) -X main.modified=$(test -z "$(git status --porcelain)" || echo true)" ./cmd/drover
//
// `make build` does this. A stamp from the go tool wins over them.
var (
	commit   string
	modified string
)

// versionInfo is what `drover version` reports: enough to tell which code
// a bug report or a bench result came from.
type versionInfo struct {
	Module  string `json:"module"`
	Version string `json:"version"`
	// Revision is the VCS commit the binary was built from, empty when
	// the build recorded none.
	Revision string `json:"revision"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
}

// readVersion reads the build information the go tool stamps into the
// binary: the module version when installed with `go install …@version`,
// and the VCS revision when built from a checkout.
func readVersion() versionInfo {
	v := versionInfo{Module: "github.com/droverhq/drover", Version: "(unknown)", Go: runtime.Version()}
	v.Revision, v.Modified = commit, modified == "true"
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
		Short: "Print the version of drover and the commit it was built from",
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
			rev := v.Revision
			switch {
			case rev == "":
				rev = "unknown (built without VCS information: go run, -buildvcs=false or outside a checkout; make build records it)"
			case v.Modified:
				rev += " (modified)"
			}
			fmt.Fprintf(tw, "revision\t%s\n", rev)
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
