package drovertype

import (
	"encoding/json"
	"slices"
	"time"
)

// AbsentPolicy says what becomes of a job aimed at worker names when none
// of them has been seen for Routing.AbsentAfter.
type AbsentPolicy string

// Absent policies.
const (
	// AbsentWait keeps the job waiting for its workers, reported as
	// unroutable meanwhile. It is the default.
	AbsentWait AbsentPolicy = "wait"
	// AbsentFallback lets any worker of the job's WorkerType take it; the
	// job must have one.
	AbsentFallback AbsentPolicy = "fallback"
	// AbsentFail ends the job as discarded, with an error that names the
	// workers that stayed away.
	AbsentFail AbsentPolicy = "fail"
)

// Routing says which workers may run a job, as stored (JobRow.Routing).
// Every constraint set must hold: a worker of Type (when set), named in
// Names (when set), that has every label of Labels with the same value. A
// nil *Routing is a plain job, which any worker may run.
type Routing struct {
	Type   string            `json:"type,omitempty"`
	Names  []string          `json:"names,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
	// OnAbsent applies when none of Names has been seen for AbsentAfter
	// while the job waited that long; empty means AbsentWait.
	OnAbsent    AbsentPolicy `json:"on_absent,omitempty"`
	AbsentAfter Millis       `json:"absent_after_ms,omitempty"`
	// FellBackFrom holds the names a job was aimed at before the leader
	// let any worker of its type take it (AbsentFallback); Names is empty
	// then.
	FellBackFrom []string `json:"fell_back_from,omitempty"`
}

// JSON returns the routing as the stores keep it: keys in a fixed order,
// names sorted, so that jobs with the same constraints store the same
// text and group together in reports.
func (r *Routing) JSON() []byte {
	if r == nil {
		return nil
	}
	c := *r
	c.Names = slices.Clone(r.Names)
	slices.Sort(c.Names)
	b, _ := json.Marshal(&c) // a struct of strings, maps and ints cannot fail
	return b
}

// Millis is a duration stored as whole milliseconds in JSON.
type Millis int64

// Duration returns m as a time.Duration.
func (m Millis) Duration() time.Duration { return time.Duration(m) * time.Millisecond }

// MillisOf rounds d down to whole milliseconds.
func MillisOf(d time.Duration) Millis { return Millis(d / time.Millisecond) }
