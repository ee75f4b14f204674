package drover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/validate"
)

// MaxResultBytes bounds the encoded result of one job. Results are stored
// with the finished job and read back per batch, so one oversized result
// must not bloat every page of a batch's results.
const MaxResultBytes = 64 << 10

// attemptState links a running attempt to its client: what the worker set
// as its result, and the store to read parents' results from.
type attemptState struct {
	exec   droverdriver.Executor
	output []byte
	// refused is SetResult's last error, if its last call failed: the
	// attempt then fails even if the handler returns nil.
	refused error
	// job is the attempt's *Job[T], its args decoded (decoded) once for
	// the worker's Timeout, Work and NextRetry alike; decodeErr is why
	// they did not decode.
	job       any
	decoded   bool
	decodeErr error
}

// SetResult records v, encoded as JSON, as the job's result. It is stored
// with the job when this attempt completes (and dropped if it fails), in
// the same statement that finishes the job, and can then be read with
// Client.JobResult, Client.BatchResults, or by the jobs that depend on
// this one (ParentResults). A later call replaces an earlier one. Results
// over MaxResultBytes, or holding text the store cannot (a NUL character,
// invalid UTF-8), are refused with an error wrapping ErrInvalid, and the
// attempt then fails even if the handler returns nil, unless a later call
// succeeds.
func (j *Job[T]) SetResult(v any) error {
	if j.attempt == nil {
		return errors.New("set result: the job is not running in a client")
	}
	b, err := encodeResult(j.ID, v)
	j.attempt.refused = err
	if err != nil {
		return err
	}
	j.attempt.output = b
	return nil
}

// encodeResult encodes a handler's result and checks that the store can
// hold it: a string with a NUL encodes as \u0000, and a json.RawMessage
// or custom MarshalJSON can carry invalid UTF-8, either of which
// PostgreSQL's jsonb refuses. Refused here, it fails its own attempt
// instead of the flush that would carry it with other jobs' results.
func encodeResult(id int64, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, invalidf("result of job %d: %v", id, err)
	}
	if len(b) > MaxResultBytes {
		return nil, invalidf("result of job %d: %d bytes is over the limit of %d", id, len(b), MaxResultBytes)
	}
	if err := validate.JSONText("result", b); err != nil {
		return nil, fmt.Errorf("job %d: %w", id, err)
	}
	return b, nil
}

// ParentResults returns the state and result of every job this one depends
// on, in ID order. A job runs only once all of them completed, unless it
// was inserted with ReleaseOnParentFailure.
func (j *Job[T]) ParentResults(ctx context.Context) ([]drovertype.JobResult, error) {
	if j.attempt == nil {
		return nil, errors.New("parent results: the job is not running in a client")
	}
	return parentResults(ctx, j.attempt.exec, j.ID)
}
