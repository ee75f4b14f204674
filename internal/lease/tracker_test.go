package lease

import (
	"context"
	"errors"
	"testing"

	"github.com/droverhq/drover/droverdriver"
)

func TestTrackerInterrupts(t *testing.T) {
	errOther := errors.New("other cause")
	// Each step acts on the tracker; job 1 is tracked from the start, and
	// "start" runs its handler (Started) with a fresh context.
	tests := []struct {
		name  string
		steps []string
		want  error // the handler context's cause; nil: still running
	}{
		{"a running handler is left alone", []string{"start"}, nil},
		{"cancel while running", []string{"start", "cancel"}, ErrCancelRequested},
		{"cancel before the handler starts", []string{"cancel", "start"}, ErrCancelRequested},
		{"stop while running", []string{"start", "stop"}, ErrShutdown},
		{"a handler starting after stop is interrupted at once", []string{"stop", "start"}, ErrShutdown},
		{"the first stop's cause stays", []string{"stop", "stop other", "start"}, ErrShutdown},
		{"an untracked job's handler still hears stop", []string{"remove", "stop", "start"}, ErrShutdown},
		{"a removed job's handler hears no cancel", []string{"remove", "start", "cancel"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := NewTracker()
			tr.Add(1, 1, droverdriver.LeaseToken{})
			var ctx context.Context
			for _, step := range tt.steps {
				switch step {
				case "start":
					var cancel context.CancelCauseFunc
					ctx, cancel = context.WithCancelCause(context.Background())
					defer cancel(nil)
					tr.Started(1, cancel)
				case "cancel":
					tr.Cancel(1, ErrCancelRequested)
				case "stop":
					tr.Stop(ErrShutdown)
				case "stop other":
					tr.Stop(errOther)
				case "remove":
					tr.Remove(1, 1)
				}
			}
			if got := context.Cause(ctx); got != tt.want {
				t.Fatalf("handler context's cause = %v, want %v", got, tt.want)
			}
		})
	}
}
