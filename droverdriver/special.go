package droverdriver

// Positions maps the plain and the special jobs of one insert back to their
// input positions.
type Positions struct {
	plain, special []int
}

// SplitSpecial separates jobs that need the keyed insert from plain ones.
// A call with no special job returns jobs itself and no positions, so that
// plain inserts allocate nothing more.
func SplitSpecial(jobs []InsertParams) (plain, special []InsertParams, pos *Positions) {
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
	plain = make([]InsertParams, 0, len(jobs)-n)
	special = make([]InsertParams, 0, n)
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
