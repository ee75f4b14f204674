package droverdriver

import (
	"encoding/json"
	"strconv"

	"github.com/droverhq/drover/drovertype"
)

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

// queryVars are the placeholders ParseQueries replaces in every statement
// besides "{schema}": values that Go and SQL share.
var queryVars = map[string]string{
	"{errors_kept}": strconv.Itoa(drovertype.ErrorsKept),
}
