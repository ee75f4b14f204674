package droversqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
)

// TestRefused: SQLite's constraint errors are refusals of a statement's
// values; a generic error (a syntax error here) is not, and is left to
// the completer's probe.
func TestRefused(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (x INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	_, constraint := db.ExecContext(ctx, `INSERT INTO t VALUES (NULL)`)
	_, syntax := db.ExecContext(ctx, `INSERT INTO`)
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"constraint", fmt.Errorf("finish jobs: %w", constraint), true},
		{"syntax", syntax, false},
		{"not sqlite", errors.New("disk I/O"), false},
	}
	var e executor
	for _, tt := range tests {
		if tt.err == nil {
			t.Fatalf("%s: the statement did not fail", tt.name)
		}
		if got := e.Refused(tt.err); got != tt.want {
			t.Errorf("Refused(%s: %v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

// TestUnavailable: a database file SQLite cannot open is a store out of
// reach; a locked database (busy past the timeout) and a statement's
// failure are not.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "missing", "drover.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cantOpen := db.PingContext(context.Background())
	mem, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	_, syntax := mem.ExecContext(context.Background(), `INSERT INTO`)
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"cannot open", fmt.Errorf("claim: %w", cantOpen), true},
		{"syntax", syntax, false},
		{"locked", errors.New("database is locked (5) (SQLITE_BUSY)"), false},
		{"not sqlite", errors.New("some statement failed"), false},
	}
	var e executor
	for _, tt := range tests {
		if tt.err == nil {
			t.Fatalf("%s: the statement did not fail", tt.name)
		}
		if got := e.Unavailable(tt.err); got != tt.want {
			t.Errorf("Unavailable(%s: %v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}
