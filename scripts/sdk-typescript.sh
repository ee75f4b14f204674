#!/usr/bin/env bash
# Tests the TypeScript SDK as CI would: `npm ci` in sdk/typescript, the
# strict build (tsc), the check that src/generated/api.ts matches
# internal/server/openapi.json, then `npm test`. The tests start a real
# `drover serve` on SQLite and on PostgreSQL (scripts/sdk-env.sh builds the
# binary and starts the cluster).
set -euo pipefail
source "$(dirname "$0")/sdk-env.sh" sdk-typescript

cd sdk/typescript
npm ci --no-audit --no-fund
npm run build
npm run check-generated
npm test
