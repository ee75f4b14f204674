package producer

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: a
// producer's fetch loop, dispatcher, claims and handlers must all have
// returned once Run has.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
