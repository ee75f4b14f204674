// Package outage logs the failures of a loop that retries, such as a
// claim, a flush or a heartbeat, as an operator wants to read them while
// the database is down: one line when the loop starts failing, a reminder
// at most once per interval while it keeps failing, and one line when it
// succeeds again, saying for how long and how often it failed. Without it,
// every loop of every queue logs each retry, and an outage of a minute
// buries the one line that says when it began under thousands alike.
package outage

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// RemindDefault is how often a loop that keeps failing logs again.
const RemindDefault = time.Minute

// Reporter logs one loop's failures and its recovery. Its methods may be
// called from several goroutines; OK, which a loop calls after every
// success, costs one atomic load while nothing fails.
type Reporter struct {
	// Logger receives the lines; What names the work that failed, as in
	// "claiming jobs" ("claiming jobs failed", "claiming jobs works
	// again"); Attrs are added to every line (the queue, say).
	Logger *slog.Logger
	What   string
	Attrs  []any
	// Remind is how often a failure is logged again while the loop keeps
	// failing; default RemindDefault.
	Remind time.Duration
	// Level is the level of the failure lines; the zero value (which is
	// slog.LevelInfo, too quiet for a failure) means slog.LevelError.
	Level slog.Level
	// Now returns the time; default time.Now. Tests set it.
	Now func() time.Time

	failing atomic.Bool
	mu      sync.Mutex
	since   time.Time // first failure of the outage
	logged  time.Time // last line logged
	count   int       // failures since the outage began
	quiet   int       // failures since the last line logged
}

// Failed records one failure. The first of an outage is logged at once
// with err, later ones at most once per Remind, with how many there were
// since.
func (r *Reporter) Failed(err error, attrs ...any) {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.count++
	if !r.failing.Load() {
		r.failing.Store(true)
		r.since, r.logged, r.count, r.quiet = now, now, 1, 0
		r.Logger.Log(context.Background(), r.level(), r.What+" failed; retrying", r.args(attrs, "error", err)...)
		return
	}
	r.quiet++
	remind := r.Remind
	if remind <= 0 {
		remind = RemindDefault
	}
	if now.Sub(r.logged) < remind {
		return
	}
	r.Logger.Log(context.Background(), r.level(), r.What+" still failing; retrying", r.args(attrs, "error", err,
		"for", now.Sub(r.since).Round(time.Millisecond), "failures", r.count, "since_last_log", r.quiet)...)
	r.logged, r.quiet = now, 0
}

// OK records a success: after failures it logs that the loop works again.
func (r *Reporter) OK() {
	if !r.failing.Load() {
		return
	}
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.failing.Load() {
		return
	}
	r.failing.Store(false)
	r.Logger.Info(r.What+" works again", r.args(nil, "after", now.Sub(r.since).Round(time.Millisecond), "failures", r.count)...)
}

// Failing reports whether the last outcome recorded was a failure.
func (r *Reporter) Failing() bool { return r.failing.Load() }

func (r *Reporter) level() slog.Level {
	if r.Level == 0 {
		return slog.LevelError
	}
	return r.Level
}

func (r *Reporter) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Reporter) args(attrs []any, more ...any) []any {
	out := make([]any, 0, len(r.Attrs)+len(attrs)+len(more))
	out = append(out, r.Attrs...)
	out = append(out, attrs...)
	return append(out, more...)
}
