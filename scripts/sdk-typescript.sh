#!/usr/bin/env bash
# Tests the TypeScript SDK as CI would: `npm ci` in sdk/typescript, the
# strict build (tsc), the check that src/generated/api.ts matches
# internal/server/openapi.json, then `npm test`. The tests start a real
# `drover serve` (built here once and handed over as DROVER_BIN) on SQLite
# and, through a throwaway cluster started by scripts/pgtmp.sh, on PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
chmod 755 "$work" # the postgres user runs the cluster inside it
pgdir=""
cleanup() {
	if [ -n "$pgdir" ]; then scripts/pgtmp.sh stop "$pgdir" >/dev/null 2>&1 || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/drover" ./cmd/drover
export DROVER_BIN="$work/drover"

if command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
	pgdir="$work/pg"
	port=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
	export DROVER_TEST_DATABASE_URL=$(scripts/pgtmp.sh start "$pgdir" "$port")
else
	echo "sdk-typescript: no PostgreSQL server binaries; testing on SQLite only"
fi

cd sdk/typescript
npm ci --no-audit --no-fund
npm run build
npm run check-generated
npm test
