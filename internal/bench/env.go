// Package bench is `drover bench`: scenarios that measure what Drover does
// on the store a user points it at (throughput, latency percentiles,
// scaling across processes), and `drover worker`, the process the scale
// scenarios start K copies of.
package bench

import (
	"io"
	"log/slog"
)

// Env is what the bench needs from the CLI's global flags. It is read when
// a command runs, after flags are parsed.
type Env struct {
	// DatabaseURL is the raw URL as given (flag or DATABASE_URL); empty
	// means the embedded default.
	DatabaseURL string
	Schema      string
	// SchemaSet is set when the user chose Schema with --schema. Without
	// it the bench works in a schema of its own (benchSchema), never in
	// the application's default one.
	SchemaSet bool
	Logger    *slog.Logger
	Stdout    io.Writer
	Stderr    io.Writer
}
