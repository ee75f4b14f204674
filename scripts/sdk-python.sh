#!/usr/bin/env bash
# Tests the Python SDK (distribution drover-client, import package drover)
# as a user would get it: the sdist and the wheel are built as a release
# builds them (the wheel from the sdist), the sdist is installed into a
# fresh virtualenv and imported, the wheel with its test extra into another,
# and pytest, mypy --strict and ruff run from inside sdk/python against that
# installed package; then `drover bench --via python`'s test with that
# Python. The tests start a real `drover serve` on SQLite and on PostgreSQL
# (scripts/sdk-env.sh builds the binary and starts the cluster).
set -euo pipefail
source "$(dirname "$0")/sdk-env.sh" sdk-python
repo=$PWD
pip=(--disable-pip-version-check -q)

# The sync client is generated from the async one; they must agree.
python3 sdk/python/scripts/unasync.py --check

python3 -m venv "$work/build"
"$work/build/bin/pip" install "${pip[@]}" build
"$work/build/bin/python" -m build --outdir "$work/dist" sdk/python >/dev/null
sdist=$(ls "$work"/dist/drover_client-*.tar.gz)
wheel=$(ls "$work"/dist/drover_client-*.whl)
echo "sdk-python: built $(basename "$sdist") and $(basename "$wheel")"

# The sdist, installed from a directory that is not the checkout.
python3 -m venv "$work/sdist-venv"
"$work/sdist-venv/bin/pip" install "${pip[@]}" "$sdist"
(cd "$work" && "$work/sdist-venv/bin/python" -c '
import drover, drover.cli, drover.consumer, drover.worker
assert "site-packages" in drover.__file__, drover.__file__
print("sdk-python: the sdist imports:", drover.__version__, [n for n in ("AsyncClient", "Consumer") if hasattr(drover, n)])')
"$work/sdist-venv/bin/drover-worker" --help >/dev/null

# The wheel with the test extra: the tests import it, not the checkout's src/.
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install "${pip[@]}" "$wheel[test]"
cd sdk/python
"$work/venv/bin/python" -c 'import drover; assert "site-packages" in drover.__file__, drover.__file__'
"$work/venv/bin/python" -m pytest -q
"$work/venv/bin/mypy"
"$work/venv/bin/ruff" check .
cd "$repo"

# bench --via python with the same install (skipped by go test without it).
DROVER_BENCH_PYTHON="$work/venv/bin/python" go test -count=1 -run TestViaPython ./internal/app/bench
