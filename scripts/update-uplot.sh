#!/usr/bin/env bash
# update-uplot.sh - vendor uPlot (the dashboard's chart library) from npm.
#
#   scripts/update-uplot.sh [VERSION]    default: the version in VERSION below
#
# Fetches the package with `npm pack` (the registry's tarball, checked by
# npm against its integrity hash), and copies the minified IIFE build, its
# stylesheet and its licence into internal/app/server/ui/vendor/uplot, where
# the binary embeds them: the dashboard loads nothing from the network.
# Record the new version in VERSION and in internal/app/server/ui/vendor/uplot/README.md,
# then run the dashboard's browser test (go test ./internal/app/server -run Browser).
set -euo pipefail
VERSION=${1:-1.6.32}
dest=$(cd "$(dirname "$0")/.." && pwd)/internal/app/server/ui/vendor/uplot
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "uplot@$VERSION" >/dev/null && tar xzf "uplot-$VERSION.tgz")
cp "$tmp/package/dist/uPlot.iife.min.js" "$tmp/package/dist/uPlot.min.css" "$tmp/package/LICENSE" "$dest/"
echo "uPlot $VERSION copied to $dest" >&2
