#!/usr/bin/env bash
# Tests the Python SDK as a user would install it: a fresh virtualenv,
# `pip install ./sdk/python[test]`, then pytest, mypy --strict and ruff from
# inside sdk/python. The tests start a real `drover serve` (built here once
# and handed over as DROVER_BIN) on SQLite and, through a throwaway cluster
# started by scripts/pgtmp.sh, on PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
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

python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check "$root/sdk/python[test]"

if command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
	pgdir="$work/pg"
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	export DROVER_TEST_DATABASE_URL=$(scripts/pgtmp.sh start "$pgdir" "$port")
else
	echo "sdk-python: no PostgreSQL server binaries; testing on SQLite only"
fi

cd sdk/python
"$work/venv/bin/python" -m pytest -q
"$work/venv/bin/mypy"
"$work/venv/bin/ruff" check .
