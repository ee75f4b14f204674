# sdk-env.sh - sourced by the SDK test scripts (sdk-python.sh,
# sdk-typescript.sh) for what they share: a scratch directory removed on
# exit, the drover binary built once and handed to the tests as DROVER_BIN,
# and, where the PostgreSQL server binaries are installed, a throwaway
# cluster (scripts/pgtmp.sh) handed over as DROVER_TEST_DATABASE_URL and
# stopped on exit. It leaves the caller at the repository root with $work
# set; $1 names the caller in messages.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
sdk_name=$1
work=$(mktemp -d)
chmod 755 "$work" # the postgres user runs the cluster inside it
pgdir=""
sdk_cleanup() {
	if [ -n "$pgdir" ]; then scripts/pgtmp.sh stop "$pgdir" >/dev/null 2>&1 || true; fi
	rm -rf "$work"
}
trap sdk_cleanup EXIT

go build -o "$work/drover" ./cmd/drover
export DROVER_BIN="$work/drover"

if command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
	pgdir="$work/pg"
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	DROVER_TEST_DATABASE_URL=$(scripts/pgtmp.sh start "$pgdir" "$port")
	export DROVER_TEST_DATABASE_URL
else
	echo "$sdk_name: no PostgreSQL server binaries; testing on SQLite only"
fi
