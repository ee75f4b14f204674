package server

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestStoreUnavailable checks which errors count as the store being out of
// reach (503) and which stay failures of a statement (500).
func TestStoreUnavailable(t *testing.T) {
	for err, want := range map[error]bool{
		fmt.Errorf("claim: %w", context.DeadlineExceeded):                  true,
		fmt.Errorf("finish: %w", errors.New("conn closed")):                true,
		fmt.Errorf("read: %w", &pgconn.PgError{Code: "57P01"}):             true,
		fmt.Errorf("read: %w", &pgconn.PgError{Code: "08006"}):             true,
		fmt.Errorf("insert: %w", &pgconn.PgError{Code: "23505"}):           false,
		errors.New("database is locked (5) (SQLITE_BUSY)"):                 false,
		fmt.Errorf("insert: %w", errors.New("sqlite: database is locked")): false,
		errors.New("some statement failed"):                                false,
	} {
		if got := storeUnavailable(err); got != want {
			t.Errorf("storeUnavailable(%v) = %v, want %v", err, got, want)
		}
	}
}
