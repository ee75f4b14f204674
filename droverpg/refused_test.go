package droverpg

import (
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestRefused: data exceptions and constraint violations are refusals of a
// statement's values, which the completer splits its flush over; anything
// else (a deadlock, a lost connection) is retried as it is.
func TestRefused(t *testing.T) {
	t.Parallel()
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

// TestUnavailable: lost or refused connections and the server shutting
// down are outages (the HTTP server answers 503); a statement's failure,
// even a refusal of its values, is not.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("finish: %w", errors.New("conn closed")), true},
		{fmt.Errorf("read: %w", &pgconn.PgError{Code: "57P01"}), true}, // admin shutdown
		{fmt.Errorf("read: %w", &pgconn.PgError{Code: "08006"}), true}, // connection failure
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, true},
		{fmt.Errorf("insert: %w", &pgconn.PgError{Code: "23505"}), false},
		{&pgconn.PgError{Code: "40P01"}, false}, // deadlock
		{errors.New("some statement failed"), false},
	}
	var e executor
	for _, tt := range tests {
		if got := e.Unavailable(tt.err); got != tt.want {
			t.Errorf("Unavailable(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
