//go:build riversqlite

package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"github.com/riverqueue/river/riverdriver/riversqlite"
	_ "modernc.org/sqlite"
)

type sqliteOps struct{ db *sql.DB }

func (s sqliteOps) Exec(ctx context.Context, q string) error {
	_, err := s.db.ExecContext(ctx, q)
	return err
}

func (s sqliteOps) Count(ctx context.Context, q string) (int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, q).Scan(&n)
	return n, err
}

// Settle does nothing: Drover's SQLite store is not settled between loading
// and working either (only its PostgreSQL driver implements Settle), so the
// two SQLite runs start alike.
func (s sqliteOps) Settle(context.Context) error { return nil }

func (s sqliteOps) Close() { _ = s.db.Close() }

// runSQLite opens sqlite:///path/file.db the way River's own CLI and test
// suite do: WAL journal and a pool of exactly one connection (River's SQLite
// driver docs: "set the maximum pool size to one connection").
func runSQLite(ctx context.Context, o *options, logger *slog.Logger) error {
	path := strings.TrimPrefix(o.databaseURL, "sqlite://")
	if path == "" {
		return fmt.Errorf("no file in %q", o.databaseURL)
	}
	sync := strings.ToUpper(o.sqliteSynchronous)
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "synchronous("+sync+")")
	dsn := "file:" + path + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return fmt.Errorf("open sqlite: %w", err)
	}
	db.SetMaxOpenConns(1)
	defer db.Close()

	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("ping sqlite: %w", err)
	}
	settings := fmt.Sprintf("modernc.org/sqlite, database/sql MaxOpenConns=1 (River's SQLite driver recommendation), journal_mode=%s, synchronous=%s, busy_timeout=10s; River's SQLite driver completes and inserts one row per statement and has no LISTEN/NOTIFY (polls)", mode, sync)
	return bench(ctx, o, logger, "sqlite", settings, riversqlite.New(db), nil, sqliteOps{db},
		[]string{"DELETE FROM river_job"}, nil)
}
