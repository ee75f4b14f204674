#!/usr/bin/env bash
# Builds the peer benchmarks and runs every scenario, writing one JSON report
# per run into $OUT. See README.md.
#
#   DATABASE_URL=postgres://postgres@127.0.0.1:54400/drover bench/peers/run.sh
#
# Environment: DATABASE_URL (required, PostgreSQL), JOBS (200000), RATE (1000),
# DURATION (10s), PROCESSES (4, graphile-worker), OUT (bench/peers/out),
# SQLITE_DIR (a temporary directory), ONLY (river|graphile-worker: run one).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
: "${DATABASE_URL:?set DATABASE_URL to a postgres:// URL}"
JOBS="${JOBS:-200000}" RATE="${RATE:-1000}" DURATION="${DURATION:-10s}"
PROCESSES="${PROCESSES:-4}" OUT="${OUT:-$here/out}" ONLY="${ONLY:-}"
mkdir -p "$OUT"
sqlite_dir="${SQLITE_DIR:-$(mktemp -d)}"

if [ -z "$ONLY" ] || [ "$ONLY" = river ]; then
  (cd "$here/river" &&
    go build -o bin/river-bench . &&
    go build -modfile=go.sqlite.mod -tags riversqlite -o bin/river-bench-sqlite .)
  for scenario in burndown latency; do
    "$here/river/bin/river-bench" --database-url "$DATABASE_URL" --scenario "$scenario" \
      --jobs "$JOBS" --rate "$RATE" --duration "$DURATION" \
      --json "$OUT/river-postgres-$scenario.json" >/dev/null
    rm -f "$sqlite_dir"/river.db*
    "$here/river/bin/river-bench-sqlite" --database-url "sqlite://$sqlite_dir/river.db" --scenario "$scenario" \
      --jobs "$JOBS" --rate "$RATE" --duration "$DURATION" \
      --json "$OUT/river-sqlite-$scenario.json" >/dev/null
  done
fi

if [ -z "$ONLY" ] || [ "$ONLY" = graphile-worker ]; then
  (cd "$here/graphile-worker" && { [ -d node_modules ] || npm ci --no-audit --no-fund; })
  for scenario in burndown latency; do
    node "$here/graphile-worker/bench.js" --database-url "$DATABASE_URL" --scenario "$scenario" \
      --jobs "$JOBS" --rate "$RATE" --duration "$DURATION" --processes "$PROCESSES" \
      --json "$OUT/graphile-worker-postgres-$scenario.json" >/dev/null
  done
fi

for f in "$OUT"/*.json; do
  python3 - "$f" <<'PY' 2>/dev/null || echo "$f"
import json, sys
r = json.load(open(sys.argv[1]))
print(f"{r['system']:<24} {r['driver']:<8} {r['scenario']:<8} jobs={r['jobs']:<7} "
      f"jobs/s={r['jobs_per_sec']:<9} steady={r['steady_jobs_per_sec']:<9} insert/s={r['insert_per_sec']:<9} "
      f"p50/p99ms={r['latency_ms']['p50']}/{r['latency_ms']['p99']} lost={r['lost']} dup={r['duplicates']}")
PY
done
