package droverdriver

import (
	"context"
	"slices"

	"github.com/droverhq/drover/drovertype"
)

// ClaimSlot is one claimer of a claim taken for several at once
// (SlotClaimer): one job at most is claimed for it, under its own owner
// and lease token, so that a job taken for one claimer carries the same
// lease, and the same secret known to that claimer alone, as its own
// claim would have given it.
type ClaimSlot struct {
	// Owner is the lease owner the slot's job is stored under.
	Owner string
	// Token is the slot's lease token; no two slots share one.
	Token drovertype.LeaseToken
	// Worker is what the claimer says of itself, which the jobs it may
	// take are matched against.
	Worker *Worker
}

// SlotClaimer is implemented by the executors of stores that can claim
// for several claimers in one statement. The engine's claim combiner
// (internal/engine/combine.go) gathers the concurrent one-job claims of
// one process that ask the same of one queue (the same variant, worker
// type and labels, kinds and lease) into one such claim, so that sixteen
// typed workers asking a replica for one job each wait for one statement,
// and one commit, instead of queueing behind one another on the queue's
// lock and the disk.
type SlotClaimer interface {
	// JobClaimSlots claims as JobClaim claims p, whose Variant is
	// ClaimRouted or ClaimStrict, at most one job per slot, each under
	// its slot's owner and token; p.Max, p.Owner, p.Token and p.Worker
	// are ignored. The strict claim gives each job of the head, in
	// order, to the first slot left that can run it, and stops at the
	// first job none left can (whatever the slots' workers). The routed
	// claim takes the jobs that the slots' workers, which must share
	// their type and labels, match by those and by the name of any slot,
	// the first in claim order under the first slot, the second under
	// the second, and so on. Each row returned says whose it is by its
	// LeaseOwner and LeaseToken, and carries its Routing, so that the
	// caller can hand it to that claimer, or release it when it is aimed
	// at another slot's name.
	JobClaimSlots(ctx context.Context, p ClaimParams, slots []ClaimSlot) ([]*drovertype.JobRow, error)
}

// SlotRouteKeys returns the route keys a claim for slots reads, besides
// plain jobs: every key of each slot's worker (Worker.RouteKeys), once.
func SlotRouteKeys(slots []ClaimSlot) []string {
	var keys []string
	for _, s := range slots {
		for _, k := range s.Worker.RouteKeys() {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keys
}
