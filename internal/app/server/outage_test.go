package server_test

import (
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/internal/app/server"
	"github.com/droverhq/drover/internal/testkit/pgcluster"
	"github.com/droverhq/drover/internal/testkit/testdb"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// TestStoreOutageAnswers503 stops PostgreSQL under a running server: API
// calls must answer 503 with Retry-After (the client should come back),
// never a 500, and succeed again once PostgreSQL is back. The test runs
// its own cluster, so that stopping it disturbs no other test.
func TestStoreOutageAnswers503(t *testing.T) {
	if os.Getenv(testdb.EnvURL) != "" {
		t.Skip("stops the server: needs a throwaway cluster, not " + testdb.EnvURL)
	}
	ctx := context.Background()
	cluster, err := pgcluster.Start(ctx, pgcluster.Options{Settings: map[string]string{"fsync": "off"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cluster.Stop() })
	open := func(t *testing.T) (droverdriver.Driver, testClient) {
		pool, err := pgxpool.New(ctx, cluster.URL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		d, err := droverpg.New(pool)
		if err != nil {
			t.Fatal(err)
		}
		return d, newClient(t, d, func(cfg *drover.Config) (testClient, error) { return drover.NewClient(d, cfg) })
	}
	b := setup(t, open)
	id := b.enqueue(t, map[string]any{"kind": "k", "args": map[string]any{"n": 1}})[0]
	b.must(t, http.StatusOK, server.ScopeAdmin, "GET", "/v1/jobs/"+itoa(id), nil)

	if err := cluster.StopServer(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			cluster.StartServer(ctx)
		}
	})
	// Reads, writes and a claim all run into the outage; repeat them so
	// that both pooled connections that died and new ones are met.
	for range 3 {
		for _, c := range []struct {
			scope        server.Scope
			method, path string
			body         any
		}{
			{server.ScopeAdmin, "GET", "/v1/jobs/" + itoa(id), nil},
			{server.ScopeEnqueue, "POST", "/v1/jobs", map[string]any{"jobs": []any{map[string]any{"kind": "k", "args": map[string]any{"n": 1}}}}},
			{server.ScopeWork, "POST", "/v1/claim", map[string]any{"queue": "default", "worker": "w"}},
			{server.ScopeAdmin, "GET", "/v1/stats", nil},
		} {
			r := b.call(t, c.scope, c.method, c.path, c.body, true)
			if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "1" {
				t.Errorf("%s %s with the store down = %d (Retry-After %q), want 503 with Retry-After 1: %s",
					c.method, c.path, r.status, r.header.Get("Retry-After"), r.body)
			}
		}
	}

	if err := cluster.StartServer(ctx); err != nil {
		t.Fatal(err)
	}
	restarted = true
	if !waitfor.Within(30*time.Second, func() bool {
		return b.call(t, server.ScopeAdmin, "GET", "/v1/jobs/"+itoa(id), nil, true).status == http.StatusOK
	}) {
		t.Fatal("the server does not answer 200 within 30s of the store's return")
	}
	b.must(t, http.StatusCreated, server.ScopeEnqueue, "POST", "/v1/jobs", map[string]any{"jobs": []any{map[string]any{"kind": "k", "args": map[string]any{"n": 2}}}})
	b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/claim", map[string]any{"queue": "default", "worker": "w"})
}
