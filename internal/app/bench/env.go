// Package bench is `drover bench`: scenarios that measure what Drover does
// on the store a user points it at (throughput, latency percentiles,
// scaling across processes), and `drover worker`, the process the scale
// scenarios start K copies of.
package bench

import (
	"io"
	"log/slog"

	"github.com/droverhq/drover/internal/app/storeurl"
)

// Env is what the bench needs from the CLI's global flags. It is read when
// a command runs, after flags are parsed.
type Env struct {
	// DatabaseURL is the raw URL as given (flag or DATABASE_URL); empty
	// means the embedded default.
	DatabaseURL string
	// DatabaseURLs are every URL given when there are several: the
	// shards of a fleet. Only burndown runs on a fleet (fleetOK); every
	// other bench refuses them rather than use the first alone.
	DatabaseURLs []string
	Schema       string
	// SchemaSet is set when the user chose Schema with --schema. Without
	// it the bench works in a schema of its own (benchSchema), never in
	// the application's default one.
	SchemaSet bool
	Logger    *slog.Logger
	Stdout    io.Writer
	Stderr    io.Writer
	// fleetOK is set by the benches that run on a fleet.
	fleetOK bool
}

// target is the store the URLs name: a fleet when several were given and
// the bench runs on one, else one database.
func (e Env) target() (storeurl.Target, error) {
	if len(e.DatabaseURLs) < 2 {
		return storeurl.Parse(e.DatabaseURL, "--database-url")
	}
	if !e.fleetOK {
		return storeurl.Target{}, usagef("%d databases given (a fleet): this bench runs on one database, and would use the first alone; "+
			"on a fleet, drover bench burndown runs (its workers in the bench process), and drover bench shards measures fleets of local clusters", len(e.DatabaseURLs))
	}
	return storeurl.ParseAll(e.DatabaseURLs, "--database-url")
}
