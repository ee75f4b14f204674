package droversqlite

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind. The
// driver starts none of its own, but each database handle it opens runs
// one (database/sql's connection opener) until the driver closes it, and
// the tests run claimers concurrently.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
