package server

import (
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
)

// TestForgedHeartbeatKeepsTheRealAttempt: a heartbeat naming a held
// attempt with a token it was not claimed with is reported lost by the
// store; the server must not take that as the end of the real worker's
// attempt, or its result would be counted as unknown.
func TestForgedHeartbeatKeepsTheRealAttempt(t *testing.T) {
	real, err := drovertype.ParseLeaseToken("00112233445566778899aabbccddeeff")
	if err != nil {
		t.Fatal(err)
	}
	forged, err := drovertype.ParseLeaseToken("ffeeddccbbaa99887766554433221100")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tests := []struct {
		name string
		ref  drover.AttemptRef
		kept bool
	}{
		{"forged token", drover.AttemptRef{ID: 7, Attempt: 1, LeaseToken: forged}, true},
		{"stale attempt", drover.AttemptRef{ID: 7, Attempt: 2, LeaseToken: real}, true},
		{"the real worker's", drover.AttemptRef{ID: 7, Attempt: 1, LeaseToken: real}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newInflight()
			f.claimed("worker-a", []attemptInfo{{id: 7, attempt: 1, token: real, expires: now.Add(time.Minute)}})
			f.extended([]drover.AttemptRef{tt.ref}, []int64{7}, now.Add(time.Hour))
			if _, kept := f.attempts[7]; kept != tt.kept {
				t.Fatalf("attempt 7 kept: %v, want %v", kept, tt.kept)
			}
		})
	}
	t.Run("kept attempts are extended only by their own token", func(t *testing.T) {
		f := newInflight()
		f.claimed("worker-a", []attemptInfo{{id: 7, attempt: 1, token: real, expires: now.Add(time.Minute)}})
		f.extended([]drover.AttemptRef{{ID: 7, Attempt: 1, LeaseToken: forged}}, nil, now.Add(time.Hour))
		if got := f.attempts[7].expires; !got.Equal(now.Add(time.Minute)) {
			t.Fatalf("a forged heartbeat moved the expiry to %s", got)
		}
		f.extended([]drover.AttemptRef{{ID: 7, Attempt: 1, LeaseToken: real}}, nil, now.Add(time.Hour))
		if got := f.attempts[7].expires; !got.Equal(now.Add(time.Hour)) {
			t.Fatalf("the real heartbeat left the expiry at %s", got)
		}
	})
}

// TestMillisSaturates: milliseconds past what a Duration holds must not
// wrap into a small duration that passes a range check (18446744073770 ms
// wrapped to about 60 s, a valid lease).
func TestMillisSaturates(t *testing.T) {
	for _, tt := range []struct {
		ms   int64
		want time.Duration
	}{
		{1500, 1500 * time.Millisecond},
		{-1, -time.Millisecond},
		{18446744073770, time.Duration(1<<63 - 1)},
		{-18446744073770, time.Duration(-1 << 63)},
	} {
		if got := millis(tt.ms); got != tt.want {
			t.Errorf("millis(%d) = %s, want %s", tt.ms, got, tt.want)
		}
	}
}
