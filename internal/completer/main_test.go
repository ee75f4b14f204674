package completer

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: the
// completer's loop and its flushes must have returned once it is closed.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
