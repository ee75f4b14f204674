#!/usr/bin/env bash
# Tests the Python SDK as a user would install it: a fresh virtualenv,
# `pip install ./sdk/python[test]`, then pytest, mypy --strict and ruff from
# inside sdk/python, and `drover bench --via python`'s test with that
# Python. The tests start a real `drover serve` on SQLite and on PostgreSQL
# (scripts/sdk-env.sh builds the binary and starts the cluster).
set -euo pipefail
source "$(dirname "$0")/sdk-env.sh" sdk-python

python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check "./sdk/python[test]"

cd sdk/python
"$work/venv/bin/python" -m pytest -q
"$work/venv/bin/mypy"
"$work/venv/bin/ruff" check .
cd ../..

# bench --via python with the same install (skipped by go test without it).
DROVER_BENCH_PYTHON="$work/venv/bin/python" go test -count=1 -run TestViaPython ./internal/bench
