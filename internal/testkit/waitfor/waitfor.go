// Package waitfor is how tests wait for something another goroutine or
// process does: they poll a condition until it holds or a deadline passes,
// and fail with what they were waiting for. Polling observes progress; it
// never stands in for an assertion about timing, so the deadline is long
// and only a hung test ever reaches it.
package waitfor

import (
	"testing"
	"time"
)

// Timeout is how long Cond waits. It is far above any wait a passing test
// makes, so a slow or busy machine does not fail a correct test: 20 s was
// not, when a shared 2-core machine at load 30 worked 20,000 jobs on
// SQLite (TestExactlyOnceUnderConcurrency).
const Timeout = time.Minute

// maxInterval caps the pause between two polls. The pause starts at a
// millisecond, so a condition that is nearly true is seen at once, and
// doubles up to this cap, so a condition that queries a store does not
// flood it with statements.
const maxInterval = 10 * time.Millisecond

// Cond polls cond until it holds, failing the test with what it was
// waiting for after Timeout. cond runs on the test's goroutine and may
// itself fail the test.
func Cond(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if !Within(Timeout, cond) {
		t.Fatalf("timed out after %s waiting for %s", Timeout, what)
	}
}

// Within polls cond until it holds or timeout passes, and reports whether
// it held. It is for waits whose failure message must say what the test
// saw last (cond records it) or whose bound differs from Timeout.
func Within(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	interval := time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
		interval = min(2*interval, maxInterval)
	}
	return true
}
