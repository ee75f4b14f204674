#!/usr/bin/env bash
# Runs every fuzz target of the repository for a bounded time each
# (FUZZTIME, default 15s), so that CI explores inputs beyond the seed
# corpora that `go test` replays. Targets are found by name, so a new
# Fuzz function is fuzzed without editing this script. A failure leaves its
# input under the package's testdata/fuzz, where `go test` replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-15s}

targets=$(git ls-files '*_test.go' | xargs grep -H '^func Fuzz' | sed -E 's#^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*).*#\1 \2#; s#^[^/ ]*_test\.go:func (Fuzz[A-Za-z0-9_]*).*#. \1#' | sort -u)
if [ -z "$targets" ]; then
	echo "fuzz: no targets found"; exit 1
fi
n=0
while read -r dir name; do
	echo "fuzz: $dir $name for $fuzztime"
	go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "./$dir"
	n=$((n + 1))
done <<<"$targets"
echo "fuzz: $n targets, no failure"
