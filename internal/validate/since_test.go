package validate

import (
	"testing"
	"time"
)

func TestTimeOrAgo(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"90m", now.Add(-90 * time.Minute), true},
		{"0s", now, true},
		{"2026-01-02T15:04:05Z", time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC), true},
		{"-5m", time.Time{}, false},
		{"yesterday", time.Time{}, false},
		{"", time.Time{}, false},
	}
	for _, tc := range cases {
		got, ok := TimeOrAgo(tc.in, now)
		if ok != tc.ok || (ok && !got.Equal(tc.want)) {
			t.Errorf("TimeOrAgo(%q) = %s, %v; want %s, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
