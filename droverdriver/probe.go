package droverdriver

import "context"

// WriteProber is implemented by a store whose readiness takes more than
// answering a query: an SQLite file on a full disk still answers every
// read while every insert fails, so a readiness check that only reads
// would keep sending it traffic. ProbeWrite returns an error naming what
// would make writes fail. Stores that need no such probe (PostgreSQL,
// which refuses connections and queries itself when it cannot write)
// leave it out.
type WriteProber interface {
	ProbeWrite(ctx context.Context) error
}
