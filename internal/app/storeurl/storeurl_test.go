package storeurl

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		raw      string
		kind     string
		url      string
		params   string
		wantErr  string
		noSecret bool
	}{
		{raw: "", kind: SQLite, url: DefaultPath},
		{raw: "sqlite:///tmp/x.db", kind: SQLite, url: "/tmp/x.db"},
		{raw: "sqlite::memory:", kind: SQLite, url: ":memory:"},
		{raw: "sqlite:rel.db", kind: SQLite, url: "rel.db"},
		{raw: "sqlite:///tmp/x.db?_pragma=foreign_keys(1)", kind: SQLite, url: "/tmp/x.db", params: "_pragma=foreign_keys(1)"},
		{raw: "sqlite:rel.db?cache=private", kind: SQLite, url: "rel.db", params: "cache=private"},
		{raw: "sqlite:?cache=private", wantErr: "sqlite URL has no file path"},
		{raw: "postgres://u:pw@localhost:5432/db", kind: Postgres, url: "postgres://u:pw@localhost:5432/db"},
		{raw: "postgresql://localhost/db?sslmode=disable", kind: Postgres, url: "postgresql://localhost/db?sslmode=disable"},
		{raw: "postgres://h:54x32/db", wantErr: `--database-url: invalid port "54x32"`},
		{raw: "postgres://u:secret@h:99999/db", wantErr: `--database-url: invalid port "99999"`, noSecret: true},
		{raw: "mysql://h/db", wantErr: `unsupported scheme "mysql"`},
		{raw: "sqlite://", wantErr: "sqlite URL has no file path"},
		{raw: "localhost:5432", wantErr: "--database-url"},
		{raw: "postgres://u:secret@[::1/db", wantErr: "--database-url", noSecret: true},
	}
	for _, tc := range cases {
		t.Run(tc.raw, func(t *testing.T) {
			got, err := Parse(tc.raw, "--database-url")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if tc.noSecret && strings.Contains(err.Error(), "secret") {
					t.Fatalf("error leaks the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Kind != tc.kind || got.URL != tc.url || got.Params != tc.params {
				t.Fatalf("got %+v, want kind %s url %s params %q", got, tc.kind, tc.url, tc.params)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	tests := []struct {
		raw, secret, keep string
	}{
		{"postgres://bob:hunter2@db:5432/x", "hunter2", "bob"},
		{"postgres://db/x", "", "postgres://db/x"},
		// pgx honours a password in the query string; it is as secret as
		// the user info's.
		{"postgres://bob@db/x?password=qs-hunter2&sslmode=disable", "qs-hunter2", "sslmode=disable"},
		{"postgres://bob@db/x?sslpassword=k3y", "k3y", "bob@db"},
		{"host=db user=bob password=kw-hunter2", "kw-hunter2", "user=bob"},
	}
	for _, tt := range tests {
		got := Redact(tt.raw)
		if tt.secret != "" && strings.Contains(got, tt.secret) {
			t.Errorf("Redact(%q) = %q: the secret survives", tt.raw, got)
		}
		if !strings.Contains(got, tt.keep) {
			t.Errorf("Redact(%q) = %q: lost %q", tt.raw, got, tt.keep)
		}
	}
}

// FuzzParse checks that URL parsing never panics and never echoes a
// password in its errors.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{"", "postgres://u:pw@h:5432/db", "postgres://h:54x32/db", "sqlite:///x.db", "sqlite::memory:", "mysql://h", "postgres://u:pw@[::1", "%%"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		_, err := Parse(raw, "--database-url")
		if err == nil {
			return
		}
		if !strings.HasPrefix(err.Error(), "--database-url") {
			t.Fatalf("error %q does not name the flag", err)
		}
		const secret = "s3cr3tpw"
		if _, err := Parse("postgres://user:"+secret+"@"+raw, "--database-url"); err != nil && strings.Contains(err.Error(), secret) {
			t.Fatalf("error leaks the password: %q", err)
		}
	})
}
