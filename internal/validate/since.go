package validate

import "time"

// TimeOrAgo reads a point in time the way the CLI and the dashboard take
// one from people: an RFC 3339 time, or a duration before now ("90m").
// It reports false when s is neither, leaving the error's wording to the
// caller, which names its own flag or field.
func TimeOrAgo(s string, now time.Time) (time.Time, bool) {
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), true
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}
