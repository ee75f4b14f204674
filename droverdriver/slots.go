package droverdriver

import (
	"context"

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
	// Name is the claimer's worker name (Worker.Name), which jobs aimed
	// at names are matched against: the slots of one claim share the
	// worker's type and labels (ClaimParams.Worker), not its name.
	Name string
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
	// ClaimRouted or ClaimStrict, at most one job per slot: the jobs
	// matched by p.Worker's type and labels and by the name of any
	// slot, in claim order, the first under the first slot's owner and
	// token, the second under the second's, and so on. p.Max, p.Owner,
	// p.Token and p.Worker.Name are ignored. Each row returned says whose
	// it is by its LeaseOwner and LeaseToken, and carries its Routing,
	// so that the caller can hand it to that claimer or release it: a
	// job aimed at one slot's name may have been claimed under another's.
	JobClaimSlots(ctx context.Context, p ClaimParams, slots []ClaimSlot) ([]*drovertype.JobRow, error)
}

// SlotRouteKeys returns the route keys a claim for slots reads, besides
// plain jobs: those of w (its type's, its labels') and, for each slot's
// name, that name's and the key of jobs aimed at several names.
func SlotRouteKeys(w *Worker, slots []ClaimSlot) []string {
	keys := (&Worker{Type: w.Type, Labels: w.Labels}).RouteKeys()
	seen := map[string]bool{}
	for _, s := range slots {
		if s.Name == "" || seen[s.Name] {
			continue
		}
		if len(seen) == 0 {
			keys = append(keys, RouteNames)
		}
		seen[s.Name] = true
		keys = append(keys, RouteNamePrefix+s.Name)
	}
	return keys
}
