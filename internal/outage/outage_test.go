package outage

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// event is one outcome of the loop, at a time since the test began.
type event struct {
	at time.Duration
	ok bool
}

// setup returns a reporter on a fake clock and the buffer of its lines.
func setup(t *testing.T) (*Reporter, *time.Time, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	r := &Reporter{Logger: log, What: "claiming jobs", Attrs: []any{"queue", "q"}, Remind: time.Minute,
		Now: func() time.Time { return now }}
	return r, &now, &buf
}

func TestReporter(t *testing.T) {
	t.Parallel()
	fail := func(at time.Duration) event { return event{at: at} }
	ok := func(at time.Duration) event { return event{at: at, ok: true} }
	// tenASecond fails every 100 ms for d.
	tenASecond := func(from, d time.Duration) []event {
		var out []event
		for at := from; at < from+d; at += 100 * time.Millisecond {
			out = append(out, fail(at))
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		events []event
		want   []string // one substring per line logged, in order
	}{
		{"successes log nothing", []event{ok(0), ok(time.Second)}, nil},
		{"an outage of 30 s is two lines", append(tenASecond(0, 30*time.Second), ok(30*time.Second)), []string{
			`level=ERROR msg="claiming jobs failed; retrying" queue=q error=down`,
			`level=INFO msg="claiming jobs works again" queue=q after=30s failures=300`,
		}},
		{"a long outage reminds once a minute", append(tenASecond(0, 150*time.Second), ok(150*time.Second)), []string{
			`msg="claiming jobs failed; retrying"`,
			`msg="claiming jobs still failing; retrying" queue=q error=down for=1m0s failures=601 since_last_log=600`,
			`msg="claiming jobs still failing; retrying" queue=q error=down for=2m0s failures=1201 since_last_log=600`,
			`msg="claiming jobs works again" queue=q after=2m30s failures=1500`,
		}},
		{"two outages are reported apart", []event{fail(0), ok(time.Second), fail(2 * time.Second), fail(3 * time.Second), ok(4 * time.Second)}, []string{
			`msg="claiming jobs failed; retrying"`,
			`msg="claiming jobs works again" queue=q after=1s failures=1`,
			`msg="claiming jobs failed; retrying"`,
			`msg="claiming jobs works again" queue=q after=2s failures=2`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, now, buf := setup(t)
			start := *now
			for _, e := range tc.events {
				*now = start.Add(e.at)
				if e.ok {
					r.OK()
				} else {
					r.Failed(errors.New("down"))
				}
			}
			lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
			if buf.Len() == 0 {
				lines = nil
			}
			if len(lines) != len(tc.want) {
				t.Fatalf("%d lines, want %d:\n%s", len(lines), len(tc.want), buf.String())
			}
			for i, w := range tc.want {
				if !strings.Contains(lines[i], w) {
					t.Errorf("line %d = %s\nwant it to contain %s", i, lines[i], w)
				}
			}
		})
	}
}
