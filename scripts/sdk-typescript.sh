#!/usr/bin/env bash
# Tests the TypeScript SDK (@drover/client) as a user would get it: `npm ci`
# in sdk/typescript, the check that src/generated/api.ts matches
# internal/app/server/openapi.json, the strict build (tsc) compared with the
# committed dist/ (what `npm install ./sdk/typescript` links), then the
# package is packed and installed into a fresh project, and the compiled
# tests run there, importing the installed package (and `drover bench --via
# typescript`'s test with the linked install). The tests start a real
# `drover serve` on SQLite and on PostgreSQL (scripts/sdk-env.sh builds the
# binary and starts the cluster).
set -euo pipefail
source "$(dirname "$0")/sdk-env.sh" sdk-typescript
repo=$PWD
npmq=(--no-audit --no-fund --loglevel=error)

cd sdk/typescript
npm ci "${npmq[@]}"
npm run check-generated
npm run check-build
npm run build:test
tarball=$(npm pack --silent --pack-destination "$work" | tail -1)
echo "sdk-typescript: packed $tarball"

# The README's line: a local install of the checkout's folder imports as is.
linked="$work/linked"
mkdir -p "$linked"
cd "$linked"
printf '{"name":"drover-linked","private":true,"type":"module"}\n' >package.json
npm install "${npmq[@]}" "$repo/sdk/typescript"
node -e 'import("@drover/client").then((m) => { if (typeof m.Consumer !== "function") process.exit(1); console.log("sdk-typescript: npm install ./sdk/typescript imports"); })'

# bench --via typescript with that install (skipped by go test without it).
(cd "$repo" && DROVER_BENCH_NODE_PROJECT="$linked" go test -count=1 -run TestViaTypeScript ./internal/app/bench)

# The tarball in a fresh project, and the tests against it.
proj="$work/project"
mkdir -p "$proj"
cd "$proj"
printf '{"name":"drover-sdk-tests","private":true,"type":"module"}\n' >package.json
npm install "${npmq[@]}" "$work/$tarball"
cp -r "$repo/sdk/typescript/build/test" "$proj/test"
DROVER_REPO="$repo" DROVER_TS_TESTS="$proj/test" node "$repo/sdk/typescript/scripts/test.mjs"
