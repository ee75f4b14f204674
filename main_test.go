package drover_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/droverhq/drover/internal/testkit/testdb"
)

// TestMain stops the shared PostgreSQL cluster after the tests and then
// fails the package if any goroutine is left: a stopped client's loops
// and handlers, and the drivers' own goroutines, must all have returned.
func TestMain(m *testing.M) { goleak.VerifyTestMain(testdb.M(m)) }
