package droversqlite

import (
	"errors"

	"modernc.org/sqlite"
)

// Primary SQLite result codes that say a statement's values are at fault
// (the low byte of an extended code is its primary code).
const (
	sqliteTooBig     = 18
	sqliteConstraint = 19
	sqliteMismatch   = 20
	sqliteCantOpen   = 14
)

// Refused implements driver.RefusalReporter: a value too big, a broken
// constraint or a type mismatch fails a statement the same way however
// often it runs. Other refusals (json() of malformed text is a generic
// SQLITE_ERROR) are told apart by the completer, which sees them persist
// while the store answers.
func (e *executor) Refused(err error) bool {
	var sqlErr *sqlite.Error
	if !errors.As(err, &sqlErr) {
		return false
	}
	switch sqlErr.Code() & 0xff {
	case sqliteTooBig, sqliteConstraint, sqliteMismatch:
		return true
	}
	return false
}

// Unavailable implements droverdriver.UnavailableReporter: a database file
// SQLite cannot open (gone, its directory unmounted, its permissions
// changed) is a store out of reach. A "database is locked" past the busy
// timeout is not: the store answers, it is busy, and the call stays a
// failure.
func (e *executor) Unavailable(err error) bool {
	var sqlErr *sqlite.Error
	return errors.As(err, &sqlErr) && sqlErr.Code()&0xff == sqliteCantOpen
}
