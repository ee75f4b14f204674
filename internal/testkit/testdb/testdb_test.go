package testdb

import (
	"context"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m) }

func TestURL(t *testing.T) {
	url := URL(t)
	if again := URL(t); again != url {
		t.Fatalf("URL changed between calls: %q then %q", url, again)
	}
	pool := NewPool(t)
	var n int
	if err := pool.QueryRow(context.Background(), "select 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("select 1: n=%d err=%v", n, err)
	}
}

func TestNewSchemaIsDroppedAfterTest(t *testing.T) {
	ctx := context.Background()
	valid := regexp.MustCompile(`^t_[0-9]+_[0-9a-f]+$`)
	var name string
	t.Run("user", func(t *testing.T) {
		name = NewSchema(t)
		if !valid.MatchString(name) || len(name) > 63 {
			t.Fatalf("schema name %q is not a plain identifier", name)
		}
		if other := NewSchema(t); other == name {
			t.Fatalf("NewSchema returned %q twice", name)
		}
		pool := NewPool(t)
		if _, err := pool.Exec(ctx, "create schema "+name+"; create table "+name+".jobs (id int)"); err != nil {
			t.Fatal(err)
		}
	})

	conn, err := pgx.Connect(ctx, URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "select exists (select from pg_namespace where nspname = $1)", name).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Errorf("schema %s still exists after its test finished", name)
	}
}

// TestRestart must not run in parallel with other tests: it takes the shared
// server down.
func TestRestart(t *testing.T) {
	if os.Getenv(EnvURL) != "" {
		t.Skipf("%s is set; an external server cannot be restarted", EnvURL)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := Cluster(t)
	conn, err := pgx.Connect(ctx, URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := c.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := conn.Ping(ctx); err == nil {
		t.Error("connection survived the restart")
	}
	pool := NewPool(t)
	var n int
	if err := pool.QueryRow(ctx, "select 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("select 1 after restart: n=%d err=%v", n, err)
	}
}
