package lease

import (
	"context"
	"errors"
	"testing"

	"github.com/droverhq/drover/droverdriver"
)

func TestTrackerInterrupts(t *testing.T) {
	errOther := errors.New("other cause")
	// Each step acts on the tracker; "add" records attempt 1 of job 1
	// with a fresh context for its handler, whose cause the case checks.
	tests := []struct {
		name  string
		steps []string
		want  error // the handler context's cause; nil: not interrupted
		held  int   // attempts held at the end
	}{
		{"a tracked handler is left alone", []string{"add"}, nil, 1},
		{"cancel", []string{"add", "cancel"}, ErrCancelRequested, 1},
		{"stop", []string{"add", "stop"}, ErrShutdown, 1},
		{"an attempt added after stop is interrupted at once", []string{"stop", "add"}, ErrShutdown, 1},
		{"the first stop's cause stays", []string{"stop", "stop other", "add"}, ErrShutdown, 1},
		{"a removed attempt hears no cancel", []string{"add", "remove", "cancel"}, nil, 0},
		{"a removed attempt hears no stop", []string{"add", "remove", "stop"}, nil, 0},
		{"a stale removal keeps the attempt", []string{"add", "remove stale", "cancel"}, ErrCancelRequested, 1},
		{"results leave together", []string{"add", "remove results", "cancel"}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := NewTracker()
			ctx := context.Background()
			for _, step := range tt.steps {
				switch step {
				case "add":
					var cancel context.CancelCauseFunc
					ctx, cancel = context.WithCancelCause(context.Background())
					defer cancel(nil)
					tr.Add([]Attempt{{ID: 1, Attempt: 1, Cancel: cancel}})
				case "cancel":
					tr.Cancel(1, ErrCancelRequested)
				case "stop":
					tr.Stop(ErrShutdown)
				case "stop other":
					tr.Stop(errOther)
				case "remove":
					tr.Remove(1, 1)
				case "remove stale":
					tr.Remove(1, 0)
				case "remove results":
					tr.RemoveResults([]droverdriver.Result{{ID: 2, Attempt: 1}, {ID: 1, Attempt: 1}})
				}
			}
			if got := context.Cause(ctx); got != tt.want {
				t.Fatalf("handler context's cause = %v, want %v", got, tt.want)
			}
			if n := tr.Len(); n != tt.held {
				t.Fatalf("%d attempts held, want %d", n, tt.held)
			}
		})
	}
}
