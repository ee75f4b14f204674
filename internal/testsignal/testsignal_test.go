package testsignal

import (
	"sync/atomic"
	"testing"

	"github.com/droverhq/drover/internal/testkit/waitfor"
)

func TestSignal(t *testing.T) {
	t.Parallel()
	t.Run("off until Init: sends are skipped", func(t *testing.T) {
		t.Parallel()
		var s Signal[int]
		s.Send(1) // must neither block nor panic
		if s.ch != nil {
			t.Fatal("a send turned the signal on")
		}
	})
	t.Run("Wait returns what was sent, in order", func(t *testing.T) {
		t.Parallel()
		var s Signal[int]
		s.Init()
		s.Send(1)
		s.Send(2)
		if a, b := s.Wait(t), s.Wait(t); a != 1 || b != 2 {
			t.Fatalf("waited %d then %d, want 1 then 2", a, b)
		}
	})
	t.Run("a copy made after Init shares the channel, and Init again keeps it", func(t *testing.T) {
		t.Parallel()
		var s Signal[int]
		s.Init()
		held := s // what a service is handed
		s.Init()
		held.Send(7)
		if got := s.Wait(t); got != 7 {
			t.Fatalf("waited %d, want 7 sent on the copy", got)
		}
	})
	t.Run("a full buffer drops sends instead of blocking", func(t *testing.T) {
		t.Parallel()
		var s Signal[int]
		s.Init()
		for i := range buffer + 10 {
			s.Send(i)
		}
		if len(s.ch) != buffer {
			t.Fatalf("%d sends buffered, want %d", len(s.ch), buffer)
		}
	})
}

func TestUntil(t *testing.T) {
	t.Parallel()
	t.Run("checks again after each signal of any source", func(t *testing.T) {
		t.Parallel()
		var ints Signal[int]
		var empties Signal[struct{}]
		ints.Init()
		empties.Init()
		var checks, work atomic.Int32
		go func() {
			work.Add(1)
			ints.Send(1)
			work.Add(1)
			empties.Send(struct{}{})
		}()
		Until(t, "two units of work", func() bool { checks.Add(1); return work.Load() == 2 }, &ints, &empties)
		if n := checks.Load(); n < 2 || n > 3 {
			t.Fatalf("checked %d times, want once before the signals and once per signal at most", n)
		}
	})
	t.Run("holds at once without a signal when the condition does", func(t *testing.T) {
		t.Parallel()
		var s Signal[int]
		s.Init()
		Until(t, "a condition already true", func() bool { return true }, &s)
	})
}

// TestTimeoutIsWaitfors keeps the two waits' deadlines one: a test that
// waits on a signal gives a loaded machine as long as one that polls.
func TestTimeoutIsWaitfors(t *testing.T) {
	t.Parallel()
	if Timeout != waitfor.Timeout {
		t.Fatalf("testsignal.Timeout %s, waitfor.Timeout %s: they must agree", Timeout, waitfor.Timeout)
	}
}
