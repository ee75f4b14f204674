package drover

import (
	"github.com/droverhq/drover/internal/validate"
)

// The rules for values from outside are in internal/validate, named by
// what they validate; what is here composes them for the remote calls.

// MinTime and MaxTime bound every time a caller gives: InsertOpts.RunAt,
// AttemptResult.RetryAt, and their HTTP forms. Before 1970 is never a
// schedule anyone means (and some stores read it back as another year);
// after 9999 has no RFC 3339 form, so a job holding it could not be shown
// as JSON.
var (
	MinTime = validate.MinTime
	MaxTime = validate.MaxTime
)

// checkAttemptRef checks the job ID and attempt a remote worker names;
// attempts are 32-bit in both stores.
func checkAttemptRef(id int64, attempt int) error {
	if id < 1 {
		return invalidf("id %d: must be positive", id)
	}
	if attempt < 1 {
		return invalidf("attempt %d: must be at least 1 (use the attempt the job was claimed with)", attempt)
	}
	return validate.Int32("attempt", attempt)
}

// checkRemoteResult checks the values of a remote result that would reach
// the store: its result JSON, its retry time and its max attempts. Error
// and trace text is not refused but made storable (encodeAttemptError).
func checkRemoteResult(r AttemptResult) error {
	if len(r.Result) > 0 {
		if err := validate.JSONText("result", r.Result); err != nil {
			return err
		}
	}
	if !r.RetryAt.IsZero() {
		if err := validate.Time("retry at", r.RetryAt); err != nil {
			return err
		}
	}
	return validate.Int32("max attempts", r.MaxAttempts)
}
