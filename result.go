package drover

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/droverhq/drover/internal/driver"
)

// MaxResultBytes bounds the encoded result of one job. Results are stored
// with the finished job and read back per batch, so one oversized result
// must not bloat every page of a batch's results.
const MaxResultBytes = 64 << 10

// attemptState links a running attempt to its client: what the worker set
// as its result, and the store to read parents' results from.
type attemptState struct {
	exec   driver.Executor
	output []byte
}

// SetResult records v, encoded as JSON, as the job's result. It is stored
// with the job when this attempt completes (and dropped if it fails), in
// the same statement that finishes the job, and can then be read with
// Client.JobResult, Client.BatchResults, or by the jobs that depend on
// this one (ParentResults). A later call replaces an earlier one. Results
// over MaxResultBytes are refused with an error wrapping ErrInvalid.
func (j *Job[T]) SetResult(v any) error {
	if j.attempt == nil {
		return errors.New("set result: the job is not running in a client")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return invalidf("result of job %d: %v", j.ID, err)
	}
	if len(b) > MaxResultBytes {
		return invalidf("result of job %d: %d bytes is over the limit of %d", j.ID, len(b), MaxResultBytes)
	}
	j.attempt.output = b
	return nil
}

// ParentResults returns the state and result of every job this one depends
// on, in ID order. A job runs only once all of them completed, unless it
// was inserted with ReleaseOnParentFailure.
func (j *Job[T]) ParentResults(ctx context.Context) ([]JobResult, error) {
	if j.attempt == nil {
		return nil, errors.New("parent results: the job is not running in a client")
	}
	return parentResults(ctx, j.attempt.exec, j.ID)
}
