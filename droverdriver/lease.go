package droverdriver

import (
	"strconv"
)

// ErrorsKept is how many attempt errors a job keeps: every statement that
// records an error drops the oldest beyond this many, and counts every
// error in error_count. An attempt's error may be 128 KiB and a job may
// allow a million attempts, so an unbounded history made every claim and
// read of a much-failed job carry megabytes, and every append rewrite them.
// ParseQueries splices this number into the drivers' SQL ({errors_kept}),
// so Go and the stores cannot disagree on it.
const ErrorsKept = 20

// queryVars are the placeholders ParseQueries replaces in every statement
// besides "{schema}": values that Go and SQL share.
var queryVars = map[string]string{
	"{errors_kept}": strconv.Itoa(ErrorsKept),
}
