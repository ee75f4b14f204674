package drover

import (
	"errors"
	"fmt"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/engine"
	"github.com/droverhq/drover/internal/validate"
)

// ErrNotFound is returned when no job has the requested ID.
var ErrNotFound = droverdriver.ErrNotFound

// ErrSchemaMissing is returned when the store is not migrated to the version
// this binary needs. Run `drover migrate` or call Migrate.
var ErrSchemaMissing = droverdriver.ErrSchemaMissing

// ErrSchemaNewer is returned when the store's schema is newer than this
// binary knows (a newer Drover migrated it). Upgrade Drover; nothing is
// read or written until then.
var ErrSchemaNewer = droverdriver.ErrSchemaNewer

// ErrNotRetryable is returned by JobRetry for a finished batch member or a
// finished job with dependants: its end was already counted on its batch
// and settled its dependants, so running it again would count and settle
// twice. Insert a new job instead.
var ErrNotRetryable = engine.ErrNotRetryable

// ErrUnknownKind is returned when inserting a job whose kind no registered
// worker handles, before anything is stored.
var ErrUnknownKind = errors.New("unknown job kind")

// ErrUniqueConflict is returned by JobRetry for a finished unique job that
// gave up its key (InsertOpts.UniqueStates) when another job holds that key
// now: the job stays as it was.
var ErrUniqueConflict = droverdriver.ErrUniqueConflict

// ErrInvalid is wrapped by every error about bad input (args, options,
// queue names), so callers can tell input errors from store failures.
var ErrInvalid = validate.ErrInvalid

// Cancel wraps err so that returning it from Work finishes the job as
// cancelled instead of retrying it.
func Cancel(err error) error {
	if err == nil {
		err = errors.New("cancelled by worker")
	}
	return &cancelError{err: err}
}

type cancelError struct{ err error }

func (e *cancelError) Error() string { return "cancel: " + e.err.Error() }
func (e *cancelError) Unwrap() error { return e.err }

// invalidf builds an input error that names the offending field.
func invalidf(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
}
