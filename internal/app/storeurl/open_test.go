package storeurl

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/internal/testkit/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// openErr opens raw and returns the error, failing the test if it opened.
func openErr(t *testing.T, raw string) string {
	t.Helper()
	target, err := Parse(raw, "--database-url")
	if err != nil {
		t.Fatal(err)
	}
	st, err := Open(context.Background(), target, Options{})
	if err == nil {
		st.Close()
		t.Fatalf("open %s: no error", Redact(raw))
	}
	return err.Error()
}

// withUser returns the test database URL with another user (and
// password) or database.
func withUser(t *testing.T, user, password, db string) string {
	t.Helper()
	u, err := url.Parse(testdb.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		u.User = url.UserPassword(user, password)
	}
	if db != "" {
		u.Path = "/" + db
	}
	return u.String()
}

// hbaOnce guards the lines TestPostgresConnectErrors adds to the shared
// cluster's pg_hba.conf; they concern only roles of that test.
var hbaOnce sync.Once

// TestPostgresConnectErrors: each reason a first connection fails gets
// one line naming it, without pgx's per-attempt noise or the password.
func TestPostgresConnectErrors(t *testing.T) {
	const password = "right-Pa55"
	const wrong = "wr0ng-Pa55w0rd"
	ctx := context.Background()
	if os.Getenv(testdb.EnvURL) == "" {
		// The throwaway cluster trusts every local connection: make it
		// check the password of one role and reject another, leaving every
		// other role as it was.
		hbaOnce.Do(func() {
			c := testdb.Cluster(t)
			hba := filepath.Join(c.DataDir(), "pg_hba.conf")
			old, err := os.ReadFile(hba)
			if err != nil {
				t.Fatal(err)
			}
			lines := "host all drover_pw_test all scram-sha-256\nhost all drover_rejected_test all reject\n"
			if err := os.WriteFile(hba, append([]byte(lines), old...), 0o600); err != nil {
				t.Fatal(err)
			}
			conn, err := pgx.Connect(ctx, testdb.URL(t))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			for _, stmt := range []string{
				"SET password_encryption = 'scram-sha-256'",
				"DROP ROLE IF EXISTS drover_pw_test",
				"CREATE ROLE drover_pw_test LOGIN PASSWORD '" + password + "'",
				"DROP ROLE IF EXISTS drover_rejected_test",
				"CREATE ROLE drover_rejected_test LOGIN",
				"SELECT pg_reload_conf()",
			} {
				if _, err := conn.Exec(ctx, stmt); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
		})
	}
	u, _ := url.Parse(testdb.URL(t))
	host := u.Host
	tests := []struct {
		name, url, want string
		cluster         bool // needs the pg_hba.conf lines above
	}{
		{"wrong password", withUser(t, "drover_pw_test", wrong, ""),
			`authentication failed for user "drover_pw_test" at PostgreSQL ` + host + ": check the password", true},
		{"missing database", withUser(t, "", "", "no_such_db_x"),
			`database "no_such_db_x" does not exist on PostgreSQL at ` + host, false},
		{"unknown role", withUser(t, "no_such_role_x", wrong, ""),
			`PostgreSQL at ` + host + ` refused user "no_such_role_x": role "no_such_role_x" does not exist`, false},
		{"pg_hba.conf rejects", withUser(t, "drover_rejected_test", wrong, ""),
			`PostgreSQL at ` + host + ` refused user "drover_rejected_test": pg_hba.conf rejects connection`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.cluster && os.Getenv(testdb.EnvURL) != "" {
				t.Skipf("needs pg_hba.conf lines only the throwaway cluster can have (%s is set)", testdb.EnvURL)
			}
			for _, sslmode := range []string{"disable", "prefer"} {
				raw := strings.Replace(tt.url, "sslmode=disable", "sslmode="+sslmode, 1)
				msg := openErr(t, raw)
				if !strings.HasPrefix(msg, tt.want) {
					t.Errorf("sslmode=%s: error\n got %q\nwant it to start %q", sslmode, msg, tt.want)
				}
				for _, noise := range []string{"failed to connect", "tls", "fallback", "\n", wrong} {
					if strings.Contains(msg, noise) {
						t.Errorf("sslmode=%s: error %q contains %q", sslmode, msg, noise)
					}
				}
			}
		})
	}
	t.Run("nothing listening", func(t *testing.T) {
		msg := openErr(t, fmt.Sprintf("postgres://u:%s@127.0.0.1:1/db?connect_timeout=5", wrong))
		want := "cannot connect to PostgreSQL at 127.0.0.1:1 (is the database up?): connection refused"
		if msg != want {
			t.Errorf("error\n got %q\nwant %q", msg, want)
		}
	})
}

// TestSQLitePathErrors: a path SQLite cannot use is named with the reason,
// not as "unable to open database file (14)".
func TestSQLitePathErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plain")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, path, want string }{
		{"directory", dir, fmt.Sprintf("open sqlite store %s: %s is a directory, not a database file (use a file in it, e.g. %s/drover.db)", dir, dir, dir)},
		{"missing parent", filepath.Join(dir, "absent", "x.db"),
			fmt.Sprintf("open sqlite store %s/absent/x.db: directory %s/absent does not exist (create it, or point --database-url elsewhere)", dir, dir)},
		{"parent is a file", filepath.Join(file, "x.db"), fmt.Sprintf("open sqlite store %s/x.db: %s is not a directory", file, file)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := openErr(t, "sqlite://"+tt.path); got != tt.want {
				t.Errorf("error\n got %q\nwant %q", got, tt.want)
			}
		})
	}
	t.Run("unwritable file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ro.db")
		if err := os.WriteFile(path, nil, 0o400); err != nil {
			t.Fatal(err)
		}
		if f, err := os.OpenFile(path, os.O_RDWR, 0); err == nil {
			// Root writes whatever the mode; a sysfs attribute without a
			// write handler stays unwritable even for root.
			f.Close()
			path = "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size"
			if f, err := os.OpenFile(path, os.O_RDWR, 0); err == nil || os.IsNotExist(err) {
				if err == nil {
					f.Close()
				}
				t.Skip("no file this user cannot write")
			}
		}
		want := fmt.Sprintf("open sqlite store %s: cannot open the file for writing: permission denied", path)
		if got := openErr(t, "sqlite://"+path); got != want {
			t.Errorf("error\n got %q\nwant %q", got, want)
		}
	})
	t.Run("unwritable directory", func(t *testing.T) {
		ro := t.TempDir()
		if err := os.Chmod(ro, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(ro, 0o700) })
		if f, err := os.CreateTemp(ro, "probe"); err == nil {
			f.Close()
			os.Remove(f.Name())
			t.Skip("this user writes in any directory (root)")
		}
		want := fmt.Sprintf("open sqlite store %s/x.db: directory %s is not writable: permission denied", ro, ro)
		if got := openErr(t, "sqlite://"+filepath.Join(ro, "x.db")); got != want {
			t.Errorf("error\n got %q\nwant %q", got, want)
		}
	})
}

// TestSQLiteURLParams checks that a SQLite URL's parameters reach the
// driver, as a file: URI's do, rather than becoming part of the file name.
func TestSQLiteURLParams(t *testing.T) {
	dir := t.TempDir()
	target, err := Parse("sqlite://"+filepath.Join(dir, "app.db")+"?_pragma=foreign_keys(1)", "--database-url")
	if err != nil {
		t.Fatal(err)
	}
	st, err := Open(context.Background(), target, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var on int
	if err := st.Driver.(*droversqlite.Driver).DB().QueryRow("PRAGMA foreign_keys").Scan(&on); err != nil {
		t.Fatal(err)
	}
	if on != 1 {
		t.Errorf("PRAGMA foreign_keys = %d, want the URL's 1", on)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), "?") {
			t.Errorf("file %q made of the URL's parameters", e.Name())
		}
	}
}

// TestAutoMigrateSaysOneLine: a fresh store migrated on open reports it in
// one line, however many migrations it took (issue 38: every `drover
// bench` run began with one line per migration), and a current one says
// nothing.
func TestAutoMigrateSaysOneLine(t *testing.T) {
	target, err := Parse("sqlite://"+filepath.Join(t.TempDir(), "app.db"), "--database-url")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []int{1, 0} {
		var lines []string
		st, err := Open(context.Background(), target, Options{Schema: "drover", AutoMigrate: true,
			Logf: func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) }})
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
		if len(lines) != want || want == 1 && !strings.HasPrefix(lines[0], `migrated schema "drover" to version `) {
			t.Errorf("open %d printed %q, want %d line(s)", 2-want, lines, want)
		}
	}
}
