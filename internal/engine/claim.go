package engine

import (
	"context"
	"slices"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// Claim claims jobs of p.Queue for Go producers, remote workers and the
// HTTP server alike, applying the queue's stored settings, whatever the
// claimer's own configuration says:
//
//   - paused: nothing is claimed, and no statement runs;
//   - kinds paused within the queue: the claim leaves their jobs waiting
//     (ClaimParams.ExceptKinds), whether the claimer named its kinds or
//     not, and claims nothing when it runs only paused kinds;
//   - no limit: the plain claim, one statement, as if settings did not
//     exist;
//   - a limit, or strict order: the limited claim (ClaimParams.Limited),
//     which re-reads the limits, strict order and the pause under the
//     settings row's lock, so that once a process knows a queue is
//     limited the limit is exact fleet-wide, and a strict queue's claims
//     take its head in turn (JobClaimStrict).
//
// Within each, a claimer that says what it is (ClaimParams.Worker: a Go
// client with Config.Worker, a remote worker with a type, name or labels)
// takes plain jobs and the routed jobs it matches (JobClaimRouted); one
// that says nothing takes plain jobs with the plain statement. Which
// statement runs is named here for every store (ClaimVariant).
//
// The settings come from cache (Settings), so a change takes effect when
// its notification arrives, or within SettingsTTL. Jobs claimed unlimited
// during that window are not marked limited, and limited claims do not
// count them: counting every running row would need an index on running
// rows, which the fast path does not pay for.
func Claim(ctx context.Context, ex droverdriver.Executor, settings *Settings, p droverdriver.ClaimParams) ([]*drovertype.JobRow, error) {
	p, none, err := planClaim(ctx, ex, settings, p)
	if err != nil {
		return nil, err
	}
	if none {
		return []*drovertype.JobRow{}, nil
	}
	return ex.JobClaim(ctx, p)
}

// planClaim applies the queue's stored settings to p (Claim): none
// reports that the claim takes nothing and runs no statement.
func planClaim(ctx context.Context, ex droverdriver.Executor, settings *Settings, p droverdriver.ClaimParams) (_ droverdriver.ClaimParams, none bool, _ error) {
	s, err := settings.Get(ctx, ex, p.Queue)
	if err != nil {
		return p, false, err
	}
	if s != nil && s.Paused {
		return p, true, nil
	}
	if s != nil && len(s.PausedKinds) > 0 {
		p.ExceptKinds = s.PausedKinds
		if p = narrow(p); p.Kinds != nil && len(p.Kinds) == 0 {
			return p, true, nil
		}
	}
	p.Limited = s.Limited()
	p.Variant = ClaimVariant(p, p.Limited && s.Strict > 0)
	return p, false, nil
}

// ClaimStatement returns p as a driver runs it: the kinds it excepts (a
// queue's paused kinds) taken out of the claimer's own kinds (narrow), and
// the statement named (ClaimVariant; strict: the queue is in strict
// order). Claim prepares every claim so; callers that run
// Executor.JobClaim themselves (the driver suite) call it, since a driver
// runs the statement it is handed and never narrows a claim itself.
func ClaimStatement(p droverdriver.ClaimParams, strict bool) droverdriver.ClaimParams {
	p = narrow(p)
	p.Variant = ClaimVariant(p, strict)
	return p
}

// narrow returns p with ExceptKinds taken out of Kinds when both are set,
// so that the driver runs the kinds statement alone and never sees both;
// p is unchanged otherwise. A claimer whose every kind is excepted gets an
// empty, non-nil Kinds: it claims nothing.
func narrow(p droverdriver.ClaimParams) droverdriver.ClaimParams {
	if p.Kinds == nil || len(p.ExceptKinds) == 0 {
		return p
	}
	kinds := make([]string, 0, len(p.Kinds))
	for _, k := range p.Kinds {
		if !slices.Contains(p.ExceptKinds, k) {
			kinds = append(kinds, k)
		}
	}
	p.Kinds, p.ExceptKinds = kinds, nil
	return p
}

// ClaimVariant names the statement a claim of p runs, for every store
// (ClaimParams.Variant): the strict claim when the queue is in strict
// order (strict, which only a limited claim may be), the routed claim
// for a claimer that says what it is, both of which take every other
// part of p as parameters; otherwise the claim past a position when p
// has one (After), of the claimer's kinds when it names them (Kinds), of
// every kind but the paused ones when some are (ExceptKinds), and the
// plain claim when none of these apply. p's kinds must be narrowed
// already (ClaimStatement).
func ClaimVariant(p droverdriver.ClaimParams, strict bool) droverdriver.ClaimVariant {
	after := p.After != nil
	switch {
	case strict:
		return droverdriver.ClaimStrict
	case p.Worker != nil:
		return droverdriver.ClaimRouted
	case p.Kinds != nil && after:
		return droverdriver.ClaimKindsAfter
	case p.Kinds != nil:
		return droverdriver.ClaimKinds
	case len(p.ExceptKinds) > 0 && after:
		return droverdriver.ClaimExceptAfter
	case len(p.ExceptKinds) > 0:
		return droverdriver.ClaimExcept
	case after:
		return droverdriver.ClaimAfter
	}
	return droverdriver.ClaimPlain
}
