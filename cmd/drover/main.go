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

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}
