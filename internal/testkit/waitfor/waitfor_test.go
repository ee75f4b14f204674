package waitfor

import (
	"testing"
	"time"
)

func TestWithin(t *testing.T) {
	t.Parallel()
	t.Run("holds once the condition does", func(t *testing.T) {
		t.Parallel()
		polls := 0
		if !Within(time.Minute, func() bool { polls++; return polls == 3 }) {
			t.Fatal("reported a timeout for a condition that held")
		}
		if polls != 3 {
			t.Fatalf("polled %d times after the condition held at the third", polls)
		}
	})
	t.Run("gives up at the deadline", func(t *testing.T) {
		t.Parallel()
		start := time.Now()
		if Within(20*time.Millisecond, func() bool { return false }) {
			t.Fatal("reported a condition that never held")
		}
		if took := time.Since(start); took < 20*time.Millisecond {
			t.Fatalf("gave up after %s, before the deadline", took)
		}
	})
}
