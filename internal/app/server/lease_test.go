package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/server"
)

// TestForgedResultsAndHeartbeatsOverHTTP: a caller with a work token that
// never claimed a job cannot finish it or extend its lease by naming its
// ID and attempt, with no lease_token or a guessed one; a failed result's
// max_attempts is ignored; the real worker's results are applied, and the
// job's JSON counts its errors. Every check reads the store.
func TestForgedResultsAndHeartbeatsOverHTTP(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		ids := b.enqueue(t, map[string]any{"kind": "k", "args": map[string]any{"n": 1}, "max_attempts": 25})
		id := ids[0]
		jobs := b.claim(t, map[string]any{"queue": "default", "worker": "real", "lease_ms": 60000})
		if len(jobs) != 1 || jobs[0].ID != id {
			t.Fatalf("claimed %+v", jobs)
		}
		real := jobs[0].LeaseToken
		before := b.stored(t, id)

		guessed := strings.Repeat("ab", 16)
		for _, forged := range []struct {
			name string
			body string
		}{
			{"no token, completed", fmt.Sprintf(`{"results":[{"id":%d,"attempt":1,"outcome":"completed"}]}`, id)},
			{"no token, failed with max_attempts 1", fmt.Sprintf(`{"results":[{"id":%d,"attempt":1,"outcome":"failed","max_attempts":1}]}`, id)},
			{"guessed token, completed", fmt.Sprintf(`{"results":[{"id":%d,"attempt":1,"lease_token":%q,"outcome":"completed"}]}`, id, guessed)},
			{"guessed token, failed with max_attempts 1", fmt.Sprintf(`{"results":[{"id":%d,"attempt":1,"lease_token":%q,"outcome":"failed","max_attempts":1}]}`, id, guessed)},
		} {
			r := b.call(t, server.ScopeWork, "POST", "/v1/finish", forged.body, false)
			var fin struct{ Accepted, Rejected []int64 }
			r.decode(t, &fin)
			if r.status != http.StatusOK || len(fin.Accepted) != 0 || len(fin.Rejected) != 1 {
				t.Fatalf("%s: %d %s, want the result rejected", forged.name, r.status, r.body)
			}
			if row := b.stored(t, id); row.State != drovertype.JobStateRunning || row.LeaseOwner != "real" || row.ErrorCount != 0 {
				t.Fatalf("%s changed the job: %+v", forged.name, row)
			}
		}
		// A token that is not 32 lower-case hex digits (the empty one
		// included) is malformed: 400, and the job is untouched. A missing
		// one is a stale attempt's (above), not a malformed request.
		for _, bad := range []struct{ path, body string }{
			{"/v1/finish", fmt.Sprintf(`{"results":[{"id":%d,"attempt":1,"lease_token":"","outcome":"completed"}]}`, id)},
			{"/v1/finish", fmt.Sprintf(`{"results":[{"id":%d,"attempt":1,"lease_token":%q,"outcome":"completed"}]}`, id, strings.ToUpper(real))},
			{"/v1/heartbeat", fmt.Sprintf(`{"lease_ms":86400000,"attempts":[{"id":%d,"attempt":1,"lease_token":"zz"}]}`, id)},
		} {
			r := b.call(t, server.ScopeWork, "POST", bad.path, bad.body, false)
			if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "lease token") {
				t.Fatalf("%s %s: %d %s, want 400 naming the lease token", bad.path, bad.body, r.status, r.body)
			}
			if row := b.stored(t, id); row.State != drovertype.JobStateRunning || row.LeaseOwner != "real" || !row.LeaseExpiresAt.Equal(*before.LeaseExpiresAt) {
				t.Fatalf("%s changed the job: %+v", bad.body, row)
			}
		}
		for _, forged := range []string{
			fmt.Sprintf(`{"lease_ms":86400000,"attempts":[{"id":%d,"attempt":1}]}`, id),
			fmt.Sprintf(`{"lease_ms":86400000,"attempts":[{"id":%d,"attempt":1,"lease_token":%q}]}`, id, guessed),
		} {
			r := b.call(t, server.ScopeWork, "POST", "/v1/heartbeat", forged, false)
			var hb struct{ Lost []int64 }
			r.decode(t, &hb)
			if r.status != http.StatusOK || len(hb.Lost) != 1 || hb.Lost[0] != id {
				t.Fatalf("forged heartbeat %s: %d %s, want the attempt reported lost", forged, r.status, r.body)
			}
			if row := b.stored(t, id); !row.LeaseExpiresAt.Equal(*before.LeaseExpiresAt) {
				t.Fatalf("forged heartbeat moved the lease from %v to %v", before.LeaseExpiresAt, row.LeaseExpiresAt)
			}
		}

		// The real worker: its failure, claiming max_attempts 1, retries
		// the job, which has 25.
		var fin struct{ Accepted []int64 }
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/finish", map[string]any{"results": []any{
			map[string]any{"id": id, "attempt": 1, "lease_token": real, "outcome": "failed", "max_attempts": 1,
				"error": "flaky", "retry_at": "2999-01-01T00:00:00Z"},
		}}).decode(t, &fin)
		if len(fin.Accepted) != 1 {
			t.Fatalf("real result accepted %v", fin.Accepted)
		}
		if row := b.stored(t, id); row.State != drovertype.JobStateRetryable || row.MaxAttempts != 25 || row.ErrorCount != 1 {
			t.Fatalf("job after a failure claiming max_attempts 1: %+v, want retryable", row)
		}
		var got map[string]any
		b.must(t, http.StatusOK, server.ScopeAdmin, "GET", fmt.Sprintf("/v1/jobs/%d", id), nil).decode(t, &got)
		if got["error_count"] != float64(1) {
			t.Fatalf("job JSON error_count = %v, want 1", got["error_count"])
		}
		if _, shown := got["lease_token"]; shown {
			t.Fatal("GET of a job shows a lease token")
		}
	})
}
