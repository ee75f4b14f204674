package pgha

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestSet starts a set and kills its primary's machine: the monitor
// promotes the standby, a committed row survives, the multi-host URL finds
// the node that takes writes, and Stop leaves nothing behind.
func TestSet(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	s := StartTest(t, Options{Dir: t.TempDir(), Settings: map[string]string{"fsync": "off"}})

	first, err := s.Primary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var syncNames string
	query(ctx, t, s.NodeURL(first), "SHOW synchronous_standby_names", &syncNames)
	if syncNames == "" {
		t.Fatal("the primary does not replicate synchronously (synchronous_standby_names is empty)")
	}
	query(ctx, t, s.URL(), "CREATE TABLE kept (v text)", nil)
	query(ctx, t, s.URL(), "INSERT INTO kept VALUES ('before the kill')", nil)
	var port int
	query(ctx, t, s.URL(), "SELECT inet_server_port()", &port)
	if port != first.Port {
		t.Fatalf("URL reached port %d, want the primary %s's %d", port, first.Name, first.Port)
	}

	// The machine: the standby takes over.
	keeper := first.keeper.Process.Pid
	f, err := s.FailPrimary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("failover %s -> %s: writable %s after the kill", f.From.Name, f.To.Name, f.Writable.Round(time.Millisecond))
	if f.From != first || f.To == nil || f.To == first {
		t.Fatalf("failover from %v to %v, want from %s to the other node", f.From, f.To, first.Name)
	}
	var v string
	query(ctx, t, s.URL(), "SELECT v FROM kept", &v)
	if v != "before the kill" {
		t.Fatalf("the committed row reads %q after the failover", v)
	}
	if p, err := s.Primary(ctx); err != nil || p != f.To {
		t.Fatalf("the monitor has %v (%v) as primary, want %s", p, err, f.To.Name)
	}

	base := s.base
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(base); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s remains after Stop (%v)", base, err)
	}
	if err := syscall.Kill(keeper, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the killed keeper %d is still there: %v", keeper, err)
	}
	for _, n := range append(s.nodes, s.monitor) {
		if n.keeper != nil {
			t.Errorf("%s's keeper still runs after Stop", n.Name)
		}
	}
}

// query runs one statement on a fresh connection to url, scanning its one
// row into dest when given.
func query(ctx context.Context, t *testing.T, url, sql string, dest any) {
	t.Helper()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if dest == nil {
		_, err = conn.Exec(ctx, sql)
	} else {
		err = conn.QueryRow(ctx, sql).Scan(dest)
	}
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
