// Package driverrows holds what both bundled drivers do to the rows they
// are handed and hand back, beyond the contract: an insert split into its
// plain and keyed jobs and merged back in input order, claimed rows put in
// claim order. Drivers import it; callers of a driver never see it.
package driverrows

import (
	"encoding/json"
	"slices"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// Positions maps the plain and the special jobs of one insert back to their
// input positions.
type Positions struct {
	plain, special []int
}

// SplitSpecial separates jobs that need the keyed insert from plain ones.
// A call with no special job returns jobs itself and no positions, so that
// plain inserts allocate nothing more.
func SplitSpecial(jobs []droverdriver.InsertParams) (plain, special []droverdriver.InsertParams, pos *Positions) {
	n := 0
	for i := range jobs {
		if jobs[i].Special() {
			n++
		}
	}
	if n == 0 {
		return jobs, nil, nil
	}
	pos = &Positions{}
	plain = make([]droverdriver.InsertParams, 0, len(jobs)-n)
	special = make([]droverdriver.InsertParams, 0, n)
	for i := range jobs {
		if jobs[i].Special() {
			special = append(special, jobs[i])
			pos.special = append(pos.special, i)
		} else {
			plain = append(plain, jobs[i])
			pos.plain = append(pos.plain, i)
		}
	}
	return plain, special, pos
}

// Merge returns the IDs in input order.
func (p *Positions) Merge(plainIDs, specialIDs []int64) []int64 {
	if p == nil {
		return plainIDs
	}
	ids := make([]int64, len(p.plain)+len(p.special))
	for i, at := range p.plain {
		ids[at] = plainIDs[i]
	}
	for i, at := range p.special {
		ids[at] = specialIDs[i]
	}
	return ids
}

// SortClaimed puts claimed rows in the claim order. Neither store's claim
// statement returns them in it (PostgreSQL's in disk order, SQLite's
// RETURNING in no set order), and sorting here rather than in the
// statement keeps the work off the database's CPU, which every process
// shares.
func SortClaimed(rows []*drovertype.JobRow) {
	slices.SortFunc(rows, func(a, b *drovertype.JobRow) int {
		return droverdriver.PositionOf(a).Compare(droverdriver.PositionOf(b))
	})
}

// DecodeErrors reads a job's stored errors column, a JSON array of
// drovertype.AttemptError, nil when it holds none. A column that does not
// decode reads as no errors: the row still shows everything else, and the
// raw errors stay in the store.
func DecodeErrors(b []byte) []drovertype.AttemptError {
	if len(b) == 0 {
		return nil
	}
	var errs []drovertype.AttemptError
	if json.Unmarshal(b, &errs) != nil {
		return nil
	}
	return errs
}
