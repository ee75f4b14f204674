package drover

import (
	"github.com/droverhq/drover/drovertype"
)

// mapAll returns f applied to each element of s, in order: the store's
// rows turned into the public types.
func mapAll[S, D any](s []S, f func(S) D) []D {
	out := make([]D, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out
}

// Job is a job with its args decoded, as a Worker receives it.
type Job[T Args] struct {
	*drovertype.JobRow
	Args T
	// attempt is the running attempt's link to its client (result.go);
	// nil in a Job built outside a client.
	attempt *attemptState
}
