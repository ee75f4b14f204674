package server_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/server"
)

// TestReadinessOnNewerSchema checks that a server whose store was migrated
// by a newer Drover says it is not ready, and why, instead of taking
// traffic its statements may misapply.
func TestReadinessOnNewerSchema(t *testing.T) {
	ctx := context.Background()
	d, err := droversqlite.Open(ctx, filepath.Join(t.TempDir(), "newer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := drover.Migrate(ctx, d); err != nil {
		t.Fatal(err)
	}
	latest := droverdriver.LatestVersion(d)
	err = d.MigrateTx(ctx, func(ctx context.Context, m droverdriver.Migrator) error {
		return m.Apply(ctx, drovertype.Migration{Version: latest + 1, Name: "from_the_future", SQL: "SELECT 1"})
	})
	if err != nil {
		t.Fatal(err)
	}
	if ready := readinessOf(t, d); ready.Ready || !strings.Contains(ready.Checks["schema"], "upgrade drover") {
		t.Fatalf("readyz on a newer schema = %+v", ready)
	}
}

// readiness is what /readyz answers.
type readiness struct {
	Ready  bool              `json:"ready"`
	Checks map[string]string `json:"checks"`
}

// readinessOf serves d and asks /readyz, which must answer 503: the
// callers give stores that are not ready.
func readinessOf(t *testing.T, d *droversqlite.Driver) readiness {
	t.Helper()
	client, err := drover.NewClient(d, &drover.Config{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	b := setup(t, func(*testing.T) (droverdriver.Driver, testClient) { return d, client })
	var ready readiness
	b.must(t, http.StatusServiceUnavailable, server.ScopeAdmin, "GET", "/readyz", nil).decode(t, &ready)
	return ready
}
