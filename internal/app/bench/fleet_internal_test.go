package bench

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/droverhq/drover"
)

// TestWorkerStatsJSON: the line `drover worker --stats` prints has
// snake_case keys, durations in milliseconds under keys that say so, and
// reads back into the same counters the bench sums.
func TestWorkerStatsJSON(t *testing.T) {
	in := workerStats{Stats: drover.Stats{Claims: 3, ClaimedJobs: 30, ClaimTime: 1500 * time.Microsecond,
		Ran: 30, RunTime: 2 * time.Second, Completed: 29, Failed: 1, Flushes: 2, FlushedResults: 30, Written: 30,
		FlushTime: 4 * time.Millisecond, Held: 5}, P99Ms: 12.5, Ready: true}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]any
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	for k := range keys {
		if !snake.MatchString(k) {
			t.Errorf("key %q is not snake_case in %s", k, b)
		}
	}
	for k, want := range map[string]float64{"claim_time_ms": 1.5, "run_time_ms": 2000, "flush_time_ms": 4, "pickup_p99_ms": 12.5} {
		if keys[k] != want {
			t.Errorf("%s = %v, want %v in %s", k, keys[k], want, b)
		}
	}
	var out workerStats
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Fatalf("round trip:\n got %+v\nwant %+v", out, in)
	}
}
