package drovertype

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
)

// LeaseToken is the secret a claim hands to the worker with every job it
// claims, and which every later call about that attempt (finish,
// heartbeat, release) must present. Job IDs are sequential and attempts
// mostly 1, so fencing by (ID, attempt) alone let any caller who could
// reach the store guess a running attempt and finish it, or extend its
// lease; 128 random bits cannot be guessed. It plays the part of an SQS
// receipt handle, and encodes as 32 hex digits in text and JSON.
//
// One token covers every job of one claim statement: the worker that holds
// the claim holds all its jobs anyway, and one draw from crypto/rand per
// claim keeps the claim's cost independent of the batch size. The store
// keeps the token only while the job runs; a job that leaves running
// (finished, retried, released or rescued) loses it, so no later call can
// use an old one. The zero token is never issued and matches no job.
type LeaseToken [16]byte

// NewLeaseToken draws a fresh token from crypto/rand.
func NewLeaseToken() LeaseToken {
	var t LeaseToken
	for t.IsZero() {
		_, _ = rand.Read(t[:]) // never fails since Go 1.24
	}
	return t
}

// IsZero reports whether t is the zero token: none was presented.
func (t LeaseToken) IsZero() bool { return t == LeaseToken{} }

// String returns the token as 32 lowercase hex digits, the form the HTTP
// API and the SQLite store use.
func (t LeaseToken) String() string { return hex.EncodeToString(t[:]) }

// AppendHex appends the token as 32 lowercase hex digits.
func (t LeaseToken) AppendHex(b []byte) []byte { return hex.AppendEncode(b, t[:]) }

// ParseLeaseToken reads the 32 hex digits String returns.
func ParseLeaseToken(s string) (LeaseToken, error) {
	var t LeaseToken
	if len(s) != 2*len(t) {
		return t, fmt.Errorf("lease token: want %d hex digits, got %d characters", 2*len(t), len(s))
	}
	// Lower case only, as MarshalText writes it: one spelling per token,
	// which the HTTP API's document states as a pattern.
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return LeaseToken{}, fmt.Errorf("lease token: %q at offset %d is not a lower-case hex digit", c, i)
		}
	}
	if _, err := hex.Decode(t[:], []byte(s)); err != nil {
		return LeaseToken{}, fmt.Errorf("lease token: %w", err)
	}
	return t, nil
}

// MarshalText encodes the token as String does, so that JSON carries it
// as a string.
func (t LeaseToken) MarshalText() ([]byte, error) { return t.AppendHex(nil), nil }

// UnmarshalText reads what MarshalText wrote; anything else, the empty
// text included, is a malformed token.
func (t *LeaseToken) UnmarshalText(b []byte) error {
	v, err := ParseLeaseToken(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}
