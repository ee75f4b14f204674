package producer

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/lease"
)

func TestJobContext(t *testing.T) {
	hour := time.Hour
	tests := []struct {
		name      string
		timeout   *time.Duration // nil: no timeout
		past      bool           // the timeout has passed already
		cancel    error          // the tracker cancels with this first
		wantErr   error          // nil: still running
		wantCause error          // the timeout's: a *TimeoutError for the timeout given
	}{
		{"no timeout, nothing cancels it", nil, false, nil, nil, nil},
		{"a timeout to come", &hour, false, nil, nil, nil},
		{"the timeout passes", &hour, true, nil, context.DeadlineExceeded, &TimeoutError{Timeout: hour}},
		{"a cancel request", &hour, false, lease.ErrCancelRequested, context.Canceled, lease.ErrCancelRequested},
		{"a cancel request, then the timeout passes", &hour, true, lease.ErrShutdown, context.Canceled, lease.ErrShutdown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &deadlines{}
			defer d.stop()
			start := time.Now()
			if tt.past {
				start = start.Add(-2 * hour)
			}
			c := &newJobContexts(1, d)[0]
			c.begin(start)
			defer c.Release()
			if tt.cancel != nil {
				c.cancel(tt.cancel)
			}
			if tt.timeout != nil {
				c.SetTimeout(*tt.timeout)
				if at, ok := c.Deadline(); !ok || !at.Equal(start.Add(*tt.timeout)) {
					t.Fatalf("Deadline() = %v, %v", at, ok)
				}
			} else if _, ok := c.Deadline(); ok {
				t.Fatal("a deadline without a timeout")
			}
			if tt.wantErr != nil {
				<-c.Done()
			}
			if err := c.Err(); err != tt.wantErr {
				t.Fatalf("Err() = %v, want %v", err, tt.wantErr)
			}
			cause := context.Cause(c)
			if want, ok := tt.wantCause.(*TimeoutError); ok {
				if got, ok := cause.(*TimeoutError); !ok || *got != *want || got.Error() != "job timed out after 1h0m0s" {
					t.Fatalf("Cause = %v, want %v", cause, want)
				}
			} else if cause != tt.wantCause {
				t.Fatalf("Cause = %v, want %v", cause, tt.wantCause)
			}
		})
	}
}

// TestDeadlinesHeap checks that the heap gives up its contexts in deadline
// order whatever the order of adds and removes.
func TestDeadlinesHeap(t *testing.T) {
	tests := []struct {
		name    string
		adds    []int // deadlines, in minutes from a common start
		removes []int // indexes into adds
	}{
		{"in order", []int{1, 2, 3, 4, 5}, nil},
		{"reversed", []int{5, 4, 3, 2, 1}, nil},
		{"shuffled, with ties", []int{3, 1, 4, 1, 5, 9, 2, 6, 5, 3}, nil},
		{"the earliest removed", []int{3, 1, 4, 1, 5}, []int{1, 3}},
		{"the last removed", []int{3, 1, 4, 1, 5}, []int{4}},
		{"from the middle", []int{8, 7, 6, 5, 4, 3, 2, 1}, []int{2, 5, 0}},
		{"every one removed", []int{2, 1, 3}, []int{0, 1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &deadlines{}
			defer d.stop()
			// Far in the future: the timer never fires during the test.
			start := time.Now().Add(24 * time.Hour)
			// The contexts of one claim, allocated together.
			claim := newJobContexts(len(tt.adds), d)
			cs := make([]*JobContext, len(tt.adds))
			for i, m := range tt.adds {
				cs[i] = &claim[i]
				cs[i].begin(start)
				cs[i].SetTimeout(time.Duration(m) * time.Minute)
			}
			removed := map[int]bool{}
			for _, i := range tt.removes {
				cs[i].Release()
				removed[i] = true
			}
			for i, c := range cs {
				if removed[i] != (c.index < 0) {
					t.Fatalf("context %d: index %d, removed %v", i, c.index, removed[i])
				}
			}
			// The timer is set for the earliest deadline added; removals
			// leave it, to fire once for nothing.
			earliest := slices.Min(tt.adds)
			if !d.at.Equal(start.Add(time.Duration(earliest) * time.Minute)) {
				t.Fatalf("timer set for %v, want %dm", d.at.Sub(start), earliest)
			}
			var prev time.Time
			for len(d.heap) > 0 {
				c := d.heap[0]
				if c.deadline.Before(prev) {
					t.Fatalf("deadline %v after %v", c.deadline.Sub(start), prev.Sub(start))
				}
				prev = c.deadline
				c.Release()
			}
		})
	}
}

// TestJobContextsOfAClaimAreApart checks that the contexts of one claim,
// allocated together, end apart: one attempt's end, cancel request or
// timeout reaches its own handler's context and no other.
func TestJobContextsOfAClaimAreApart(t *testing.T) {
	d := &deadlines{}
	defer d.stop()
	cs := newJobContexts(4, d)
	now := time.Now()
	for i := range cs {
		cs[i].begin(now)
	}
	cs[1].cancel(lease.ErrCancelRequested)
	cs[2].begin(now.Add(-time.Hour))
	cs[2].SetTimeout(time.Minute) // already past: the timer fires at once
	cs[3].SetTimeout(time.Hour)
	cs[0].Release()
	<-cs[2].Done()
	want := []struct {
		err   error
		cause error
	}{
		{context.Canceled, context.Canceled},
		{context.Canceled, lease.ErrCancelRequested},
		{context.DeadlineExceeded, &cs[2].timedOut},
		{nil, nil},
	}
	for i, w := range want {
		if err, cause := cs[i].Err(), context.Cause(&cs[i]); err != w.err || cause != w.cause {
			t.Errorf("context %d: Err %v, Cause %v; want %v, %v", i, err, cause, w.err, w.cause)
		}
	}
	if dl, ok := cs[3].Deadline(); !ok || !dl.Equal(now.Add(time.Hour)) {
		t.Errorf("context 3: Deadline %v, %v", dl, ok)
	}
	if _, ok := cs[1].Deadline(); ok {
		t.Error("context 1 has a deadline it was never given")
	}
	cs[3].Release()
	if cs[3].index != -1 || len(d.heap) != 0 {
		t.Errorf("released contexts left %d in the heap", len(d.heap))
	}
}
