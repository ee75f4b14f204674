package droverdriver

import (
	"context"
	"time"
)

// QueuesDueExecutor is what a store offers for a client's fallback poll:
// which of the queues a client serves have a job it may claim now. A
// client whose queues went idle polls in case another process inserted
// jobs or scheduled ones came due; without this, each of its producers
// polls with a claim of its own, and a client serving 1,000 queues made
// 1,000 claims per poll interval (20,000 a second on SQLite) while its
// queues waited, most of its work (issue 36). With it, one statement
// reads every queue at once, and only the producers of queues with jobs
// due claim. It is a separate interface so that a store without it still
// satisfies the contract: the client then polls queue by queue.
type QueuesDueExecutor interface {
	// QueuesDue returns those of queues that hold an available job,
	// plain or routed, whose run_at is at or before now (the store's
	// clock when now is zero), in no particular order.
	QueuesDue(ctx context.Context, queues []string, now time.Time) ([]string, error)
}

// HeadClaimer is implemented by the executors of stores whose claim index holds no entry of
// a row once it is claimed (SQLite removes it in the claim's own write).
// A producer claims past its last claimed row after a slow claim only
// because PostgreSQL leaves the entries of claimed rows at the head of the
// index until vacuum (internal/producer/position.go); on a store that
// leaves none, a slow claim waited for something else (the one writer,
// behind the claims of a client's other queues), which a claim past a
// position does not shorten, and each such span cost a claim from the
// head besides (issue 36: three claims a queue at 1,000 queues).
type HeadClaimer interface {
	// ClaimsFromHead reports that every claim should start at the head.
	ClaimsFromHead() bool
}
