package droverpg

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestRefused: data exceptions and constraint violations are refusals of a
// statement's values, which the completer splits its flush over; anything
// else (a deadlock, a lost connection) is retried as it is.
func TestRefused(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Code: "22P05"}, true}, // unsupported Unicode escape (\u0000 in jsonb)
		{&pgconn.PgError{Code: "22021"}, true}, // character not in repertoire (a NUL byte in text)
		{fmt.Errorf("finish jobs: %w", &pgconn.PgError{Code: "23502"}), true},
		{&pgconn.PgError{Code: "40P01"}, false}, // deadlock: passes on retry
		{&pgconn.PgError{Code: "57P01"}, false}, // admin shutdown: an outage
		{errors.New("dial tcp: connection refused"), false},
	}
	var e executor
	for _, tt := range tests {
		if got := e.Refused(tt.err); got != tt.want {
			t.Errorf("Refused(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
