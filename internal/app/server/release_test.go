package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/server"
)

// TestReleaseAndSnoozeOverHTTP: an HTTP worker gives back a claimed job
// (POST /v1/release) and puts another off (outcome snoozed, by retry_at
// and by snooze_ms) without using an attempt; forged lease tokens change
// nothing; the released job is claimed again with the same attempt number
// and the snoozed ones wait. Every check reads the store.
func TestReleaseAndSnoozeOverHTTP(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		ids := b.enqueue(t, map[string]any{"kind": "k", "args": map[string]any{"n": 1}, "max_attempts": 1},
			map[string]any{"kind": "k", "args": map[string]any{"n": 2}, "max_attempts": 1},
			map[string]any{"kind": "k", "args": map[string]any{"n": 3}, "max_attempts": 1})
		released, atTime, byDelay := ids[0], ids[1], ids[2]
		if jobs := b.claim(t, map[string]any{"queue": "default", "worker": "w", "max": 10, "lease_ms": 60000}); len(jobs) != 3 {
			t.Fatalf("claimed %+v", jobs)
		}
		guessed := strings.Repeat("ab", 16)
		ref := func(id int64, token string) map[string]any {
			return map[string]any{"id": id, "attempt": 1, "lease_token": token}
		}
		var rel struct{ Released, Rejected []int64 }
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/release",
			map[string]any{"attempts": []any{ref(released, guessed)}}).decode(t, &rel)
		if len(rel.Released) != 0 || len(rel.Rejected) != 1 {
			t.Fatalf("release with a forged token = %+v", rel)
		}
		retryAt := time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
		var fin struct{ Accepted, Rejected []int64 }
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/finish", map[string]any{"results": []any{
			map[string]any{"id": atTime, "attempt": 1, "lease_token": guessed, "outcome": "snoozed", "retry_at": retryAt},
		}}).decode(t, &fin)
		if len(fin.Accepted) != 0 || len(fin.Rejected) != 1 {
			t.Fatalf("snooze with a forged token = %+v", fin)
		}
		for _, id := range ids {
			if row := b.stored(t, id); row.State != drovertype.JobStateRunning || row.LeaseOwner != "w" {
				t.Fatalf("a forged token changed job %d: %+v", id, row)
			}
		}

		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/release",
			map[string]any{"attempts": []any{ref(released, b.lease(released))}}).decode(t, &rel)
		if len(rel.Released) != 1 || rel.Released[0] != released || len(rel.Rejected) != 0 {
			t.Fatalf("release = %+v", rel)
		}
		before := time.Now()
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/finish", map[string]any{"results": []any{
			map[string]any{"id": atTime, "attempt": 1, "lease_token": b.lease(atTime), "outcome": "snoozed", "retry_at": retryAt},
			map[string]any{"id": byDelay, "attempt": 1, "lease_token": b.lease(byDelay), "outcome": "snoozed", "snooze_ms": 3600000},
		}}).decode(t, &fin)
		if len(fin.Accepted) != 2 || len(fin.Rejected) != 0 {
			t.Fatalf("snooze = %+v", fin)
		}
		if row := b.stored(t, released); row.State != drovertype.JobStateAvailable || row.Attempt != 0 || row.ErrorCount != 0 {
			t.Fatalf("released job = %+v, want available with its attempt undone", row)
		}
		if row := b.stored(t, atTime); row.Attempt != 0 || row.ErrorCount != 0 || !row.RunAt.Equal(retryAt) {
			t.Fatalf("job snoozed to %v = %+v", retryAt, row)
		}
		if row := b.stored(t, byDelay); row.Attempt != 0 || row.ErrorCount != 0 ||
			row.RunAt.Before(before.Add(59*time.Minute)) || row.RunAt.After(time.Now().Add(61*time.Minute)) {
			t.Fatalf("job snoozed for an hour = %+v", row)
		}

		jobs := b.claim(t, map[string]any{"queue": "default", "worker": "w2", "max": 10})
		if len(jobs) != 1 || jobs[0].ID != released || jobs[0].Attempt != 1 {
			t.Fatalf("claim after release = %+v, want job %d at attempt 1 only", jobs, released)
		}

		// Malformed snoozes are refused whole.
		for _, bad := range []map[string]any{
			{"id": atTime, "attempt": 1, "lease_token": guessed, "outcome": "snoozed"},
			{"id": atTime, "attempt": 1, "lease_token": guessed, "outcome": "failed", "snooze_ms": 10},
			{"id": atTime, "attempt": 1, "lease_token": guessed, "outcome": "snoozed", "snooze_ms": 10, "retry_at": retryAt},
		} {
			if r := b.call(t, server.ScopeWork, "POST", "/v1/finish", map[string]any{"results": []any{bad}}, false); r.status != http.StatusBadRequest {
				t.Errorf("finish %v = %d %s, want 400", bad, r.status, r.body)
			}
		}
	})
}

// TestTimeoutPastDurationRefused: a timeout_ms past what a duration holds
// (the schema's maximum) is refused with 400 rather than saturated and
// stored, and the largest one allowed is accepted.
func TestTimeoutPastDurationRefused(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		r := b.call(t, server.ScopeEnqueue, "POST", "/v1/jobs",
			`{"jobs":[{"kind":"k","args":{"n":1},"timeout_ms":9223372036855}]}`, false)
		if r.status != http.StatusBadRequest || !strings.Contains(r.errorMessage(t), "timeout_ms") {
			t.Fatalf("timeout_ms past the maximum = %d %s, want 400", r.status, r.body)
		}
		b.must(t, http.StatusCreated, server.ScopeEnqueue, "POST", "/v1/jobs",
			`{"jobs":[{"kind":"k","args":{"n":1},"timeout_ms":9223372036854}]}`)
	})
}
