package drovertype

import (
	"slices"
	"time"
)

// WorkerRecord is one row of the worker registry: a worker as it last
// described itself, written by a Go client's heartbeat and by drover
// serve on a remote worker's claims.
type WorkerRecord struct {
	Name string
	// Plain says the worker said nothing of itself: its claims take plain
	// jobs only, so it matches no routed job whatever its name.
	Plain  bool
	Type   string
	Labels map[string]string
	// Queues are the queues it works (a Go client) or has claimed from (a
	// remote worker).
	Queues []string
	// Kinds are the kinds it runs, sorted: a Go client's registered
	// kinds, those a remote worker names in its claims (ClaimParams.Kinds).
	// Nil for a worker that named none, whose claims take every kind.
	Kinds []string
	// Owner is the lease owner of the jobs it holds: the client's ID, or
	// the remote worker's ID.
	Owner string
	// Source says how it works: WorkerSourceGo (a Client's producers) or
	// WorkerSourceHTTP (a remote worker of drover serve).
	Source    string
	StartedAt time.Time
	// LastSeen is its last heartbeat (a Go client) or registered claim (a
	// remote worker).
	LastSeen time.Time
}

// Sources of WorkerRecord.
const (
	WorkerSourceGo   = "go"
	WorkerSourceHTTP = "http"
)

// Runs reports whether the worker runs jobs of kind: it named no kinds,
// or named this one.
func (r *WorkerRecord) Runs(kind string) bool {
	return r.Kinds == nil || slices.Contains(r.Kinds, kind)
}

// WorkerInfo is a worker of the registry with what the running jobs say
// of it: a Go client that works queues, or a remote worker that claimed
// through the HTTP API.
type WorkerInfo struct {
	WorkerRecord
	// JobsHeld is how many running jobs its owner holds, and
	// LeaseExpiresAt the latest of their leases (zero when it holds none).
	JobsHeld       int64
	LeaseExpiresAt time.Time
	// Live says it was seen within the last minute or holds a lease that
	// has not expired (a remote worker busy with a long job claims
	// nothing, but extends its lease); only live workers count as able to
	// take a job.
	Live bool
}
