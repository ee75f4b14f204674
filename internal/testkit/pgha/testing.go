package pgha

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"
)

// EnvTest names the environment variable that turns the failover tests
// on: each starts a set of its own and kills its primary, which takes tens
// of seconds, and needs pg_auto_failover installed. CI sets it (.ci/run).
const EnvTest = "DROVER_TEST_FAILOVER"

// SkipUnlessEnabled skips t, saying how to run it, unless EnvTest is set.
func SkipUnlessEnabled(t testing.TB) {
	t.Helper()
	if os.Getenv(EnvTest) == "" {
		t.Skipf("failover test: set %s=1 to run it (it needs pg_auto_failover: apt-get install -y postgresql-15-auto-failover pg-auto-failover-cli)", EnvTest)
	}
}

// StartTest starts a set for t, with t.Logf as its log, and stops it when
// t ends. It skips t, saying why, unless EnvTest is set and pg_autoctl is
// installed.
func StartTest(t testing.TB, opts Options) *Set {
	t.Helper()
	SkipUnlessEnabled(t)
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := Start(ctx, opts)
	if errors.Is(err, ErrNotInstalled) {
		t.Skipf("failover test: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	return s
}
