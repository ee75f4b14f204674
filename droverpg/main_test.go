package droverpg_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/droverhq/drover/internal/testkit/testdb"
)

// TestMain stops the shared PostgreSQL cluster after the tests and then
// fails the package if any goroutine is left: the driver's waker and
// listener, and the clients the tests start, must all stop with their
// owners.
func TestMain(m *testing.M) { goleak.VerifyTestMain(testdb.M(m)) }
