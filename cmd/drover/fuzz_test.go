package main

import (
	"strings"
	"testing"
	"time"
)

// FuzzParseAt checks that --at never panics, names itself in every error,
// and turns a duration into exactly now plus that duration.
func FuzzParseAt(f *testing.F) {
	for _, seed := range []string{"", "10m", "-1h", "2025-01-02T15:04:05Z", "2025-13-02T15:04:05Z", "tomorrow", "9223372036s", "1h30m"} {
		f.Add(seed)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		at, err := parseAt(s, now)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--at ") {
				t.Fatalf("error %q does not name --at", err)
			}
			return
		}
		if d, derr := time.ParseDuration(s); derr == nil && !at.Equal(now.Add(d)) {
			if _, perr := time.Parse(time.RFC3339, s); perr != nil {
				t.Fatalf("parseAt(%q) = %s, want now + %s", s, at, d)
			}
		}
	})
}

// FuzzParseID checks that a job ID is accepted exactly when it is a
// positive decimal integer.
func FuzzParseID(f *testing.F) {
	for _, seed := range []string{"1", "0", "-1", "abc", "9223372036854775807", "9223372036854775808", " 1", "+1"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := parseID(s)
		if err != nil {
			if !strings.Contains(err.Error(), "must be a positive integer") {
				t.Fatalf("error %q does not say what an ID must be", err)
			}
			return
		}
		if id < 1 {
			t.Fatalf("parseID(%q) = %d, want a positive ID", s, id)
		}
	})
}
