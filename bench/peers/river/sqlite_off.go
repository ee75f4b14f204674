//go:build !riversqlite

package main

import (
	"context"
	"errors"
	"log/slog"
)

func runSQLite(ctx context.Context, o *options, logger *slog.Logger) error {
	return errors.New("this binary was built without SQLite support: build it with " +
		"`go build -modfile=go.sqlite.mod -tags riversqlite -o river-bench-sqlite .` (see README)")
}
