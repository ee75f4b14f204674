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
# inputs DIR NAME prints how many inputs the target's corpus holds.
inputs() {
	if [ -d "$1/testdata/fuzz/$2" ]; then find "$1/testdata/fuzz/$2" -type f | wc -l; else echo 0; fi
}
n=0
while read -r dir name; do
	echo "fuzz: $dir $name for $fuzztime"
	# Go's fuzzing coordinator can fail a target with "context deadline
	# exceeded" at the -fuzztime boundary when the machine is loaded (a race
	# between its deadline and its workers, not a finding: no input is
	# written under testdata/fuzz). Such a run is tried once more; any other
	# failure, or one that wrote a crasher, fails the script.
	before=$(inputs "$dir" "$name")
	if ! out=$(go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "./$dir" 2>&1); then
		after=$(inputs "$dir" "$name")
		if [ "$after" -eq "$before" ] && grep -q 'context deadline exceeded' <<<"$out"; then
			echo "fuzz: $name stopped by the deadline race, nothing found; trying once more"
			go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "./$dir"
		else
			echo "$out"
			exit 1
		fi
	else
		echo "$out"
	fi
	n=$((n + 1))
done <<<"$targets"
echo "fuzz: $n targets, no failure"
