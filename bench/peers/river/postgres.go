package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

type pgOps struct{ pool *pgxpool.Pool }

func (p pgOps) Exec(ctx context.Context, sql string) error {
	_, err := p.pool.Exec(ctx, sql)
	return err
}

func (p pgOps) Count(ctx context.Context, sql string) (int64, error) {
	var n int64
	err := p.pool.QueryRow(ctx, sql).Scan(&n)
	return n, err
}

// Settle vacuums and analyzes river_job, then asks for a checkpoint, which a
// role that may not run one skips (as drover bench does).
func (p pgOps) Settle(ctx context.Context) error {
	if _, err := p.pool.Exec(ctx, "VACUUM (ANALYZE) river_job"); err != nil {
		return fmt.Errorf("vacuum analyze river_job: %w", err)
	}
	if _, err := p.pool.Exec(ctx, "CHECKPOINT"); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42501" { // insufficient_privilege
			return nil
		}
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

func (p pgOps) Close() { p.pool.Close() }

func runPostgres(ctx context.Context, o *options, logger *slog.Logger) error {
	cfg, err := pgxpool.ParseConfig(o.databaseURL)
	if err != nil {
		return fmt.Errorf("parse database URL: %w", err)
	}
	if !strings.Contains(o.databaseURL, "pool_max_conns") {
		cfg.MaxConns = int32(o.poolMaxConns)
	}
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "drover-peer-river"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer pool.Close()

	var syncCommit string
	if err := pool.QueryRow(ctx, "SHOW synchronous_commit").Scan(&syncCommit); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	settings := fmt.Sprintf("pgx v5 pgxpool MaxConns=%d (river bench: pgxpool default); synchronous_commit=%s", cfg.MaxConns, syncCommit)
	if o.scenario == "latency" {
		settings += "; river_job seeded with 20,000 completed rows of another kind and ANALYZEd before the client starts (see README)"
	}
	var insertDriver riverdriver.Driver[pgx.Tx] // nil unless latency: must stay a nil interface
	if o.scenario == "latency" {
		icfg := cfg.Copy()
		icfg.MaxConns = int32(o.insertConcurrency)
		ipool, err := pgxpool.NewWithConfig(ctx, icfg)
		if err != nil {
			return fmt.Errorf("connect (insert pool): %w", err)
		}
		defer ipool.Close()
		insertDriver = riverpgxv5.New(ipool)
	}
	return bench(ctx, o, logger, "postgres", settings, riverpgxv5.New(pool), insertDriver, pgOps{pool},
		// Reset like `river bench` does (TRUNCATE + VACUUM FULL).
		[]string{"TRUNCATE river_job", "VACUUM FULL river_job"},
		// Latency: the client starts on an empty table, so the generic plans
		// Postgres caches for River's prepared statements would be made for an
		// empty table (seq scans + nested loop) and stick until autovacuum's
		// next ANALYZE, about a minute later: fetches then take seconds after
		// ~5k jobs. A production table is never empty and analyzed (River keeps
		// completed jobs 24h), so seed it with completed rows of another kind
		// and ANALYZE before the client starts.
		[]string{
			"INSERT INTO river_job (args, kind, max_attempts, queue, state, attempt, attempted_at, finalized_at) " +
				"SELECT '{}', 'drover_peer_seed', 25, 'default', 'completed', 1, now(), now() FROM generate_series(1, 20000)",
			"ANALYZE river_job",
		})
}
