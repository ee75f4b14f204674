package droverdriver

// RefusalReporter may be implemented by an Executor whose store tells,
// through its errors, that it refused the values of a statement rather
// than failed to run it: PostgreSQL's SQLSTATE classes 22 (data
// exception: a NUL in text, an out-of-range number) and 23 (integrity
// constraint violation), SQLite's constraint and type errors. Retrying
// such a statement unchanged fails the same way forever, while an outage
// passes; the completer splits a refused batch to find the result at
// fault instead of retrying it. Stores that cannot tell need not
// implement it: a failure that persists while the store answers other
// statements counts as a refusal too.
type RefusalReporter interface {
	Refused(err error) bool
}

// UnavailableReporter may be implemented by an Executor whose store tells,
// through its errors, that it could not be reached at all rather than that
// a statement failed: PostgreSQL refusing or dropping connections (down,
// starting up, shutting down, or the network between), an SQLite file that
// cannot be opened. The same call will likely succeed once the store is
// back, so the HTTP server answers such failures 503 with Retry-After
// instead of 500. A deadline that ran out is an outage for every store and
// needs no reporter. Stores that cannot tell need not implement it.
type UnavailableReporter interface {
	Unavailable(err error) bool
}
