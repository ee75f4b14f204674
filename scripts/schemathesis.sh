#!/usr/bin/env bash
# schemathesis.sh - property-based tests of the HTTP API against its own
# document (internal/app/server/openapi.json), with Schemathesis.
#
#   scripts/schemathesis.sh
#
# Builds drover, starts `drover serve` on a fresh SQLite file and a free
# loopback port with a generated admin token, installs a pinned Schemathesis
# into a virtualenv (cached under $SCHEMATHESIS_VENV, default
# ${TMPDIR:-/tmp}/drover-schemathesis-venv), runs it for a bounded number of
# examples per operation, and stops the server. Exits non-zero when
# Schemathesis reports any failure: a server error, a response that breaks
# the document, an invalid request accepted or a valid one rejected.
#
# Environment: SCHEMATHESIS_MAX_EXAMPLES (default 150) bounds the cases per
# operation and so the run time (about 70 s on two cores, 3,400 cases);
# SCHEMATHESIS_SEED fixes the random seed (default 1, so that CI runs are
# reproducible; set it to "random" for a new one each run).
set -euo pipefail

readonly VERSION=4.32.5
readonly MAX_EXAMPLES=${SCHEMATHESIS_MAX_EXAMPLES:-150}
readonly SEED=${SCHEMATHESIS_SEED:-1}
readonly VENV=${SCHEMATHESIS_VENV:-${TMPDIR:-/tmp}/drover-schemathesis-venv}

prog=$(basename "$0")
say() { echo "$prog: $*" >&2; }
die() {
	say "error: $*"
	exit 1
}

cd "$(dirname "$0")/.."
command -v python3 >/dev/null || die "python3 is required"

work=$(mktemp -d "${TMPDIR:-/tmp}/drover-schemathesis.XXXXXX")
server_pid=
cleanup() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

say "building drover"
go build -o "$work/drover" ./cmd/drover

if ! "$VENV/bin/schemathesis" --version 2>/dev/null | grep -q "version $VERSION\$"; then
	say "installing schemathesis $VERSION into $VENV"
	python3 -m venv "$VENV"
	"$VENV/bin/pip" install -q "schemathesis==$VERSION"
fi

db="sqlite://$work/drover.db"
"$work/drover" migrate --database-url "$db" >/dev/null
"$work/drover" serve token --name schemathesis --scope admin >"$work/tokens" 2>"$work/secret"
secret=$(grep -o 'drv_[A-Za-z0-9_-]*' "$work/secret")

# Port 0: the kernel picks a free port, and serve prints it.
"$work/drover" serve --database-url "$db" --listen 127.0.0.1:0 --tokens "$work/tokens" \
	--max-wait 1s 2>"$work/serve.log" &
server_pid=$!
base=
for _ in $(seq 1 200); do
	base=$(grep -o 'serving on http://[0-9.:]*' "$work/serve.log" | sed 's/serving on //' || true)
	[ -n "$base" ] && break
	kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.log" >&2; die "drover serve exited"; }
	sleep 0.1
done
[ -n "$base" ] || die "drover serve did not start"
say "drover serve on $base"

# The document is read from the repository, not from the server, so that
# the run tests the file a reviewer reads. Long polls are capped at 1 s by
# --max-wait above; the request timeout leaves room for them.
seed_args=()
[ "$SEED" != random ] && seed_args=(--seed "$SEED")
status=0
repo=$PWD
# Run from the scratch directory: Schemathesis keeps a cache of crashes in
# ./.schemathesis, which must not land in the repository.
(
	cd "$work"
	SCHEMATHESIS_HOOKS=schemathesis_hooks PYTHONPATH="$repo/scripts" \
		"$VENV/bin/schemathesis" --config-file "$repo/scripts/schemathesis.toml" \
		run "$repo/internal/app/server/openapi.json" \
		--url "$base" \
		--header "Authorization: Bearer $secret" \
		--max-examples "$MAX_EXAMPLES" \
		"${seed_args[@]}" \
		--request-timeout 10 \
		--generation-database none \
		--output-truncate true \
		--no-color >"$work/report.txt"
) || status=$?
# The report of a failure can hold request bodies of megabytes; the
# summary and the first lines of each failure are what a reader needs.
cut -c1-400 "$work/report.txt"
if [ "$status" -ne 0 ]; then
	say "schemathesis reported failures (exit $status); server log:"
	tail -n 50 "$work/serve.log" >&2
fi
exit "$status"
