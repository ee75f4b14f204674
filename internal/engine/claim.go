package engine

import (
	"context"

	"github.com/droverhq/drover/droverdriver"
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
// that says nothing takes plain jobs with the plain statement.
//
// The settings come from cache (Settings), so a change takes effect when
// its notification arrives, or within SettingsTTL. Jobs claimed unlimited
// during that window are not marked limited, and limited claims do not
// count them: counting every running row would need an index on running
// rows, which the fast path does not pay for.
func Claim(ctx context.Context, ex droverdriver.Executor, settings *Settings, p droverdriver.ClaimParams) ([]*droverdriver.JobRow, error) {
	s, err := settings.Get(ctx, ex, p.Queue)
	if err != nil {
		return nil, err
	}
	if s != nil && s.Paused {
		return []*droverdriver.JobRow{}, nil
	}
	if s != nil && len(s.PausedKinds) > 0 {
		p.ExceptKinds = s.PausedKinds
		if p = p.Narrowed(); p.Kinds != nil && len(p.Kinds) == 0 {
			return []*droverdriver.JobRow{}, nil
		}
	}
	p.Limited = s.Limited()
	p.Strict = p.Limited && s.Strict > 0
	return ex.JobClaim(ctx, p)
}
