package droverpg

import (
	"errors"

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
