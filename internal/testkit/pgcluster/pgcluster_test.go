package pgcluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover/internal/testkit/cgroup"
)

// TestLifecycle exercises one cluster end to end rather than starting a
// cluster per test, because initdb dominates the run time.
func TestLifecycle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	c, err := Start(ctx, Options{
		Dir:      t.TempDir(), // exercises the 0700 parent handling when root
		Settings: map[string]string{"fsync": "off", "application_name": "it's quoted"},
		Logf:     t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			if err := c.Stop(); err != nil {
				t.Error(err)
			}
		}
	})

	if c.Port() == 0 || c.DataDir() == "" {
		t.Fatalf("Port()=%d DataDir()=%q", c.Port(), c.DataDir())
	}
	selectOne(ctx, t, c.URL())
	selectOne(ctx, t, c.AdminURL())

	conn, err := pgx.Connect(ctx, c.URL())
	if err != nil {
		t.Fatal(err)
	}
	var fsync, maxConns string
	if err := conn.QueryRow(ctx, "select current_setting('fsync'), current_setting('max_connections')").Scan(&fsync, &maxConns); err != nil {
		t.Fatal(err)
	}
	if fsync != "off" || maxConns != "300" {
		t.Errorf("fsync=%s max_connections=%s, want off and 300", fsync, maxConns)
	}

	// Restart must kill existing sessions and come back on the same port.
	port := c.Port()
	if err := c.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if c.Port() != port {
		t.Errorf("port changed from %d to %d", port, c.Port())
	}
	if err := conn.Ping(ctx); err == nil {
		t.Error("connection survived a restart")
	}
	conn.Close(ctx)
	selectOne(ctx, t, c.URL())

	// A gap of downtime: connections fail until the server is back.
	if err := c.StopServer(); err != nil {
		t.Fatal(err)
	}
	if err := c.StopServer(); err != nil {
		t.Fatalf("second StopServer: %v", err)
	}
	shortCtx, shortCancel := context.WithTimeout(ctx, 2*time.Second)
	if conn, err := pgx.Connect(shortCtx, c.URL()); err == nil {
		conn.Close(ctx)
		t.Error("connected to a stopped server")
	}
	shortCancel()
	if err := c.StartServer(ctx); err != nil {
		t.Fatal(err)
	}
	selectOne(ctx, t, c.URL())

	dir := filepath.Dir(c.DataDir())
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped = true
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still exists after Stop (err=%v)", dir, err)
	}
	if err := c.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if err := c.Restart(ctx); err == nil {
		t.Error("Restart after Stop succeeded")
	}
}

func selectOne(ctx context.Context, t *testing.T, url string) {
	t.Helper()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "select 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("select 1 on %s: n=%d err=%v", url, n, err)
	}
}

func TestVersionLess(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"9.6", "15", true},
		{"15", "9.6", false},
		{"14", "15", true},
		{"15", "15", false},
		{"16", "17", true},
	} {
		if got := versionLess(tc.a, tc.b); got != tc.want {
			t.Errorf("versionLess(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestStartFailureReportsLog checks that a server that cannot start yields an
// error carrying the server's own explanation and leaves nothing behind.
func TestStartFailureReportsLog(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	parent := t.TempDir()
	c, err := Start(ctx, Options{Dir: parent, Settings: map[string]string{"shared_buffers": "lots"}})
	if err == nil {
		c.Stop()
		t.Fatal("Start succeeded with an invalid setting")
	}
	if !strings.Contains(err.Error(), "shared_buffers") {
		t.Errorf("error does not mention the server log: %v", err)
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 0 {
		t.Errorf("Start left %d entries in %s", len(entries), parent)
	}
}

// TestCPUGroup starts a cluster inside a CPU group: the postmaster and the
// backends it forks, before and after a restart, are in the group, and
// the queries they run are counted in its usage.
func TestCPUGroup(t *testing.T) {
	g, err := cgroup.NewCPU("pgcluster-"+filepath.Base(t.TempDir()), 0.5)
	if errors.Is(err, cgroup.ErrUnavailable) {
		t.Skipf("cgroups are not writable here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Remove(); err != nil {
			t.Error(err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{Settings: map[string]string{"fsync": "off"}, CPU: g, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
	})
	inGroup := func(when string) {
		t.Helper()
		conn, err := pgx.Connect(ctx, c.URL())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var backend, postmaster int
		// A query that costs the backend some CPU, counted in the group.
		err = conn.QueryRow(ctx, `SELECT pg_backend_pid(), (SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer')
			FROM generate_series(1, 200000) GROUP BY 1, 2`).Scan(&backend, &postmaster)
		if err != nil {
			t.Fatal(err)
		}
		pids, err := g.PIDs()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(pids, backend) || !slices.Contains(pids, postmaster) {
			t.Fatalf("%s: the group holds %v, want the backend %d and the checkpointer %d in it", when, pids, backend, postmaster)
		}
	}
	inGroup("after Start")
	if err := c.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	inGroup("after Restart")
	s, err := g.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if s.Usage <= 0 {
		t.Fatalf("the group used %s of CPU, want the server's queries counted", s.Usage)
	}
	t.Logf("the server used %s of CPU", s.Usage)
}
