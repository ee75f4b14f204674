package droverpg

import (
	"time"

	"github.com/droverhq/drover/drovertype"
)

// claimArena allocates the rows of one claim in chunks: a claim reads
// hundreds of rows, and reading each made seven allocations (the row, its
// kind, args and metadata, a time for each of its two timestamps, and the
// list of scan destinations, which scanClaimed now makes once per claim):
// with the garbage collection they caused, reading claimed rows was a
// sixth of a noop worker's client CPU. Rows, times and bytes each come
// from a chunk shared with a few dozen other rows of the claim; the bytes
// are capped slices, so that appending to one never writes into another.
// A chunk stays in memory while any row of it does, which is until the
// last job of its part of the claim has run.
type claimArena struct {
	rows  []drovertype.JobRow
	clock []time.Time
	buf   []byte
	// last is the last kind read: the rows of a claim mostly share one.
	last string
}

// Chunk sizes: small enough that a claim of one row (a trickle of jobs)
// allocates little more than it did row by row.
const (
	arenaRows  = 32
	arenaBytes = 4 << 10
)

// row returns a zeroed row.
func (a *claimArena) row() *drovertype.JobRow {
	if len(a.rows) == cap(a.rows) {
		a.rows = make([]drovertype.JobRow, 0, arenaRows)
	}
	a.rows = a.rows[:len(a.rows)+1]
	return &a.rows[len(a.rows)-1]
}

// times returns two zeroed times, for a row's attempted_at and
// lease_expires_at.
func (a *claimArena) times() []time.Time {
	if len(a.clock)+2 > cap(a.clock) {
		a.clock = make([]time.Time, 0, 2*arenaRows)
	}
	a.clock = a.clock[:len(a.clock)+2]
	return a.clock[len(a.clock)-2:]
}

// bytes returns a copy of b (which the next row overwrites), nil for nil.
func (a *claimArena) bytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	if len(b) > arenaBytes/4 {
		return append([]byte(nil), b...)
	}
	if len(a.buf)+len(b) > cap(a.buf) {
		a.buf = make([]byte, 0, arenaBytes)
	}
	start := len(a.buf)
	a.buf = append(a.buf, b...)
	return a.buf[start:len(a.buf):len(a.buf)]
}

// kind returns b as a string, the last one read when it is the same.
func (a *claimArena) kind(b []byte) string {
	if string(b) != a.last {
		a.last = string(b)
	}
	return a.last
}
