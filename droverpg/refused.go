package droverpg

import (
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Refused implements driver.RefusalReporter: SQLSTATE classes 22 (data
// exception, such as \u0000 in jsonb or a NUL byte in text) and 23
// (integrity constraint violation) say the statement's values are at
// fault, so running it again unchanged can never succeed.
func (e *executor) Refused(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || len(pgErr.Code) < 2 {
		return false
	}
	class := pgErr.Code[:2]
	return class == "22" || class == "23"
}

// Unavailable implements droverdriver.UnavailableReporter: a connection
// that could not be made or was lost (pgx's ConnectError, a network error,
// "conn closed", a stream cut short), SQLSTATE class 08 (connection
// exception) and 57P01-57P03 (the server shutting down or not yet
// accepting connections).
func (e *executor) Unavailable(err error) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &ce), errors.As(err, &ne):
		return true
	case errors.As(err, &pe):
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	// pgx reports a connection lost under a statement as "conn closed",
	// and a cut stream as an unexpected EOF.
	msg := err.Error()
	return strings.Contains(msg, "conn closed") || errors.Is(err, io.ErrUnexpectedEOF) ||
		strings.HasSuffix(msg, "unexpected EOF")
}
