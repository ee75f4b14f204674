package producer

import (
	"sync"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// slowClaim is the duration past which a full claim (one from the head of
// the claim index) counts as slow. Every row a claim takes leaves a dead
// entry at the head of the index until vacuum removes it, and autovacuum
// visits a table at most once a minute: under a backlog each full claim
// walks every entry claimed since then (EXPLAIN: 3 ms of a 500-row claim's
// 7 ms after 150,000 claimed rows, growing with each claim). A long
// transaction elsewhere that pins the MVCC horizon makes it worse. A
// one-row claim on an idle queue takes well under this, so producers that
// keep up stay on full claims and exact priority order.
const slowClaim = 5 * time.Millisecond

// positionalSpan is how many times a slow full claim's duration the
// producer then claims past its last position before it tries the head
// again, so that full claims cost at most about a tenth of its claim time;
// minPositionalSpan bounds it from below.
const (
	positionalSpan    = 10
	minPositionalSpan = time.Second
)

// position decides where a claim starts. Normally every claim starts at the
// head of the claim order, so no waiting row is ever passed over. After a
// slow full claim, claims start past the last row this producer claimed
// (droverdriver.ClaimParams.After) for a while: the dead entries that made the
// claim slow all sit before that row, and new, retried and released rows
// sort after it (a workflow step released by its parents is due from its
// release). A row that sorts before it (a higher priority inserted
// meanwhile, a keyed job promoted in its key's order, an insert that
// committed after a later one) waits only until the next full claim.
//
// A positional claim that comes back short found nothing more past the
// position, so whatever still waits sorts before it: the span then ends at
// once and the next claim starts at the head. Keeping it longer stranded
// those rows: the last jobs of a backlog sat unclaimed for the rest of a
// long span (1,500 jobs of a noop burn-down left for over 60 s with 8
// processes), and under a light load, where every claim is short, one
// slow claim (a pause of the process, a checkpoint) held an insert that
// committed after a later one for up to a second: the one-second tail of
// `bench latency` (p99 300–740 ms, max 1.0 s, at 1,000 jobs/s on either
// store). A full claim that is slow again starts a new span.
type position struct {
	mu    sync.Mutex
	last  *droverdriver.ClaimPosition
	until time.Time
}

// after returns the position a claim starting now should pass, or nil for
// a full claim.
func (p *position) after(now time.Time) *droverdriver.ClaimPosition {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil || !now.Before(p.until) {
		return nil
	}
	pos := *p.last
	return &pos
}

// observe records a finished claim: how long it took, whether it was a
// full claim, the last row it claimed in claim order (nil if none), and
// whether it came back short (fewer rows than asked).
func (p *position) observe(now time.Time, full bool, took time.Duration, last *drovertype.JobRow, short bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !full && short {
		p.until = minTime(p.until, now)
	}
	if last != nil {
		pos := droverdriver.PositionOf(last)
		if full || p.last == nil || p.last.Before(pos) {
			p.last = &pos
		}
	}
	if full && took >= slowClaim {
		p.until = now.Add(max(minPositionalSpan, positionalSpan*took))
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
