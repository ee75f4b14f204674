package drover

import (
	"slices"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
)

// TestLastTicks checks the ticks a catch-up inserts: the last n of the
// window (from, to], in order, or all of them when there are fewer.
func TestLastTicks(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	minute := func(m int) time.Time { return base.Add(time.Duration(m) * time.Minute) }
	tests := []struct {
		name     string
		schedule string
		n        int
		want     []time.Time
	}{
		{"cron, last 3 of 10", "* * * * *", 3, []time.Time{minute(8), minute(9), minute(10)}},
		{"cron, fewer than n", "* * * * *", 20, []time.Time{minute(1), minute(2), minute(3), minute(4), minute(5),
			minute(6), minute(7), minute(8), minute(9), minute(10)}},
		{"every, last 2", "@every 1m", 2, []time.Time{minute(9), minute(10)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sched, err := cron.ParseStandard(tc.schedule)
			if err != nil {
				t.Fatal(err)
			}
			if got := lastTicks(sched, base, minute(10), tc.n); !slices.Equal(got, tc.want) {
				t.Fatalf("ticks %v, want %v", got, tc.want)
			}
		})
	}
}

// TestParseScheduleMinimum: every schedule robfig/cron takes is taken but
// an @every interval under MinPeriodicEvery or not of whole seconds, which
// it would silently turn into another one.
func TestParseScheduleMinimum(t *testing.T) {
	for spec, ok := range map[string]bool{
		"@every 1s": true, "@every 90s": true, "@every 1m30s": true, "CRON_TZ=Europe/Paris @every 2s": true,
		"*/5 * * * *": true, "@hourly": true,
		"@every 1ms": false, "@every 0s": false, "@every 999ms": false, "@every 1.5s": false, "TZ=UTC @every 10ms": false,
	} {
		if _, err := parseSchedule(spec); (err == nil) != ok {
			t.Errorf("parseSchedule(%q) = %v, want ok %v", spec, err, ok)
		}
	}
}
