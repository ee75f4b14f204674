package droverpg

import (
	"testing"

	"github.com/droverhq/drover/internal/driver"
)

// TestCompletions checks which flushes take JobComplete: only those whose
// every result completes its job with nothing to store, alike in Forget.
func TestCompletions(t *testing.T) {
	done := func(id int64) driver.Result {
		return driver.Result{ID: id, Attempt: 2, Outcome: driver.OutcomeCompleted}
	}
	with := func(r driver.Result, f func(*driver.Result)) driver.Result {
		f(&r)
		return r
	}
	tests := []struct {
		name    string
		results []driver.Result
		ok      bool
		forget  bool
	}{
		{"plain completions", []driver.Result{done(1), done(2)}, true, false},
		{"all forgotten", []driver.Result{with(done(1), func(r *driver.Result) { r.Forget = true }),
			with(done(2), func(r *driver.Result) { r.Forget = true })}, true, true},
		{"forget differs", []driver.Result{done(1), with(done(2), func(r *driver.Result) { r.Forget = true })}, false, false},
		{"a retry", []driver.Result{done(1), with(done(2), func(r *driver.Result) { r.Outcome = driver.OutcomeRetry })}, false, false},
		{"a discard", []driver.Result{with(done(1), func(r *driver.Result) { r.Outcome = driver.OutcomeDiscarded })}, false, false},
		{"an error", []driver.Result{with(done(1), func(r *driver.Result) { r.Error = []byte(`{}`) })}, false, false},
		{"a stored result", []driver.Result{with(done(1), func(r *driver.Result) { r.Output = []byte(`1`) })}, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ids, attempts, forget, ok := completions(tc.results)
			if ok != tc.ok || forget != tc.forget {
				t.Fatalf("ok %v forget %v, want %v %v", ok, forget, tc.ok, tc.forget)
			}
			if !ok {
				return
			}
			for i, r := range tc.results {
				if ids[i] != r.ID || int(attempts[i]) != r.Attempt {
					t.Fatalf("row %d: id %d attempt %d, want %d %d", i, ids[i], attempts[i], r.ID, r.Attempt)
				}
			}
		})
	}
}
