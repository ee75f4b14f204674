// Package testdb gives tests a PostgreSQL database without any setup.
//
// By default the first test that asks for a database starts one throwaway
// cluster (see internal/testkit/pgcluster) that the whole test binary shares, and
// Main stops it when the tests are done. Setting DROVER_TEST_DATABASE_URL
// points tests at an existing database instead, for example in CI jobs that
// provide a service container; nothing is started then.
//
// Tests isolate themselves from each other with NewSchema rather than with
// separate databases, because creating a schema is far cheaper and works the
// same against an external database.
//
// A package that uses testdb must have
//
//	func TestMain(m *testing.M) { testdb.Main(m) }
//
// (or hand testdb.M(m) to a wrapper such as goleak.VerifyTestMain),
// otherwise the server would outlive the test binary.
package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/droverhq/drover/internal/testkit/pgcluster"
)

// EnvURL names the environment variable that, when set, makes tests use an
// existing database instead of starting a cluster.
const EnvURL = "DROVER_TEST_DATABASE_URL"

// startTimeout bounds initdb plus server start-up; generous because CI
// machines can be slow, but finite so a wedged start fails the run.
const startTimeout = 2 * time.Minute

// cleanupTimeout bounds the per-test DROP SCHEMA, which could otherwise block
// forever behind a lock held by a goroutine the test forgot to stop.
const cleanupTimeout = 30 * time.Second

var (
	// mainUsed records that Main is in charge of this binary, which is the
	// only way the cluster gets stopped again.
	mainUsed atomic.Bool

	// mu guards the shared cluster. It is held during start-up so that
	// parallel tests wait for the one start instead of racing their own.
	mu        sync.Mutex
	attempted bool
	cluster   *pgcluster.Cluster
	startErr  error

	schemaSeq atomic.Uint64
)

// Main runs the tests and then stops the shared cluster, if one was started,
// before exiting with the tests' status. Use it as the body of TestMain.
func Main(m *testing.M) { os.Exit(M(m).Run()) }

// M returns m with a Run that also stops the shared cluster once the tests
// are done, for a TestMain that hands its tests to a wrapper which runs
// them and then checks what they left behind, with the cluster already
// gone:
//
//	func TestMain(m *testing.M) { goleak.VerifyTestMain(testdb.M(m)) }
func M(m *testing.M) interface{ Run() int } {
	mainUsed.Store(true)
	return stopsCluster{m}
}

type stopsCluster struct{ m *testing.M }

// Run runs the tests, stops the cluster and returns the exit code.
func (s stopsCluster) Run() int {
	code := s.m.Run()
	mu.Lock()
	c := cluster
	cluster = nil
	mu.Unlock()
	if c != nil {
		if err := c.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "testdb: stopping PostgreSQL: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// URL returns a connection string for the test database: the value of
// DROVER_TEST_DATABASE_URL if set, otherwise that of the shared cluster,
// starting it on first use. If the cluster cannot be started the test fails
// rather than skips, so a missing PostgreSQL installation is never mistaken
// for passing tests.
func URL(tb testing.TB) string {
	tb.Helper()
	if u := os.Getenv(EnvURL); u != "" {
		return u
	}
	return sharedCluster(tb).URL()
}

// Cluster returns the shared cluster, starting it if needed, for tests that
// restart or stop the server. It fails the test when DROVER_TEST_DATABASE_URL
// is set, since an external server cannot be controlled.
//
// The cluster is shared by all tests in the binary, so a test that stops or
// restarts it must not run in parallel with other database tests, and must
// leave the server running when it returns.
func Cluster(tb testing.TB) *pgcluster.Cluster {
	tb.Helper()
	if os.Getenv(EnvURL) != "" {
		tb.Fatalf("testdb: this test needs a cluster it can restart, but %s is set to an external database; unset it to run this test", EnvURL)
	}
	return sharedCluster(tb)
}

func sharedCluster(tb testing.TB) *pgcluster.Cluster {
	tb.Helper()
	if !mainUsed.Load() {
		tb.Fatalf("testdb: add `func TestMain(m *testing.M) { testdb.Main(m) }` to this package so the PostgreSQL cluster is stopped when the tests finish (or set %s)", EnvURL)
	}
	mu.Lock()
	defer mu.Unlock()
	if !attempted {
		attempted = true
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		defer cancel()
		// Durability is worthless for a database that is deleted after the
		// run, and turning it off makes the tests noticeably faster.
		cluster, startErr = pgcluster.Start(ctx, pgcluster.Options{
			Settings: map[string]string{
				"fsync":              "off",
				"synchronous_commit": "off",
				"full_page_writes":   "off",
			},
		})
	}
	if startErr != nil {
		tb.Fatalf("testdb: starting PostgreSQL for tests: %v", startErr)
	}
	if cluster == nil {
		tb.Fatalf("testdb: the PostgreSQL cluster was already stopped by testdb.Main")
	}
	return cluster
}

// NewSchema returns a fresh schema name for the calling test and arranges for
// that schema to be dropped, with everything in it, when the test finishes.
// It does not create the schema: the code under test is expected to do that
// through its migrations.
//
// Names look like t_<counter>_<random hex>. The counter keeps them readable
// and ordered within one binary; the random part keeps them unique across
// test binaries that share one database through DROVER_TEST_DATABASE_URL.
// They are lowercase and short, so they need no quoting in SQL.
func NewSchema(tb testing.TB) string {
	tb.Helper()
	url := URL(tb)
	name := fmt.Sprintf("t_%d_%s", schemaSeq.Add(1), randomHex(4))
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			tb.Errorf("testdb: dropping schema %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
			tb.Errorf("testdb: dropping schema %s: %v", name, err)
		}
	})
	return name
}

// PoolAt returns a pool of at most maxConns connections on url, a server
// the test started itself (a failover set, a shard of its own), closed when
// the test finishes. It does not ping: the server may be down on purpose.
func PoolAt(tb testing.TB, url string, maxConns int32) *pgxpool.Pool {
	tb.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		tb.Fatalf("testdb: parsing %s: %v", url, err)
	}
	cfg.MaxConns = maxConns
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("testdb: creating pool: %v", err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

// NewPool returns a connection pool on the test database that is closed when
// the test finishes. It pings the server first so that connection problems
// fail the test here, with a clear message, rather than in the code under
// test.
func NewPool(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	url := URL(tb)
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		tb.Fatalf("testdb: creating pool: %v", err)
	}
	tb.Cleanup(pool.Close)
	if err := pool.Ping(ctx); err != nil {
		tb.Fatalf("testdb: connecting to test database: %v", err)
	}
	return pool
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never returns an error; it crashes the program instead
	return hex.EncodeToString(b)
}
