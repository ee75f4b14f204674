// Command drover runs and inspects a Drover job queue from the shell:
// migrate a store, enqueue jobs, list, retry and cancel them, benchmark the
// store, and run worker processes for the bench.
//
// The store is PostgreSQL (--database-url postgres://…, or DATABASE_URL) or
// an embedded SQLite file (sqlite:///path); with neither, ./drover.db is
// created and migrated on first use so that trying Drover needs no set-up.
//
// Exit codes: 0 on success, 1 when the command failed at run time (store
// unreachable, job not found, schema not migrated), 2 when it was used
// wrongly (unknown command or flag, bad argument or flag value).
package main

import (
	"os"
	"runtime/debug"
)

// gcPercent is the binary's garbage collector target unless GOGC is set.
// A worker's live heap is small and its allocation rate high (a few small
// objects per job), so the default of 100 collects very often: 400 measured
// +9% burn-down throughput on PostgreSQL and +13% on SQLite, interleaved
// runs of `drover bench burndown --jobs 300000` (docs/design/claim-and-flush.md).
const gcPercent = 400

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}
