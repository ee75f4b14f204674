#!/usr/bin/env bash
# pgtmp.sh - a disposable PostgreSQL cluster for benchmarks.
#
# Unlike the cluster tests use (internal/testkit/pgcluster with fsync off), this one
# keeps production-like durability settings so benchmark numbers mean
# something: fsync and synchronous_commit are on, shared_buffers is 1GB.
# pg_stat_statements is loaded (CREATE EXTENSION pg_stat_statements in the
# database to read it), so that a run's time and WAL per statement can be
# read beside the bench's figures.
#
#   scripts/pgtmp.sh start DIR [PORT]   init (if needed) and start; prints the URL last
#   scripts/pgtmp.sh stop DIR           fast shutdown; keeps DIR for the next start
#
# Both commands are safe to repeat: start on a running cluster with the same
# port just prints the URL again, stop on a stopped cluster does nothing.
# Progress goes to stderr; stdout carries only the URL, so
#   url=$(scripts/pgtmp.sh start /tmp/bench)
# works. Remove DIR yourself when done (after stop).
set -euo pipefail

readonly DEFAULT_PORT=54329
readonly DB=drover
readonly SUPERUSER=postgres
readonly INSTALL_HINT="install PostgreSQL 15, e.g. on Debian/Ubuntu: apt-get install -y postgresql-15"

prog=$(basename "$0")

die() {
	echo "$prog: error: $*" >&2
	exit 1
}

say() {
	echo "$prog: $*" >&2
}

usage() {
	cat >&2 <<EOF
usage: $prog start DIR [PORT]   initialise (if needed) and start a cluster in DIR on 127.0.0.1:PORT (default $DEFAULT_PORT)
       $prog stop DIR           stop the cluster in DIR
EOF
	exit 2
}

# find_bindir prints the directory holding initdb and pg_ctl: the one on
# PATH if there is one, else the newest Debian-style versioned directory,
# which the postgresql packages do not put on PATH.
find_bindir() {
	local initdb d
	if initdb=$(command -v initdb) && command -v pg_ctl >/dev/null; then
		dirname "$(readlink -f "$initdb")"
		return
	fi
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		if [[ -x $d/initdb && -x $d/pg_ctl ]]; then
			echo "$d"
			return
		fi
	done
	die "initdb/pg_ctl not found on PATH or in /usr/lib/postgresql/*/bin; $INSTALL_HINT"
}

# as_pg runs a command as the postgres OS user when we are root, because
# initdb and postgres refuse to run as root.
as_pg() {
	if [[ $EUID -eq 0 ]]; then
		runuser -u "$SUPERUSER" -- "$@"
	else
		"$@"
	fi
}

# running_port prints the port of the server running on DATA, or fails if
# none is running. Line 4 of postmaster.pid is the port.
running_port() {
	as_pg "$PG_CTL" -D "$DATA" status >/dev/null 2>&1 || return 1
	sed -n 4p "$DATA/postmaster.pid"
}

log_tail() {
	if [[ -f $LOG ]]; then
		echo "--- last lines of $LOG ---" >&2
		tail -n 30 "$LOG" >&2
	fi
}

url() {
	echo "postgres://$SUPERUSER@127.0.0.1:$1/$DB?sslmode=disable"
}

# setup resolves DIR to an absolute path and sets the globals every command
# uses. It runs with cd into DIR so that, as root, the postgres user is not
# left in an inaccessible working directory.
setup() {
	DIR=$(realpath -m -- "$1")
	DATA=$DIR/data
	LOG=$DIR/postgres.log
	BINDIR=$(find_bindir)
	PG_CTL=$BINDIR/pg_ctl
	INITDB=$BINDIR/initdb
	PSQL=$(command -v psql || echo "$BINDIR/psql")
}

cmd_start() {
	local port=${2:-$DEFAULT_PORT}
	[[ $port =~ ^[0-9]+$ ]] && ((port > 0 && port < 65536)) || die "invalid port: $port"
	setup "$1"

	if [[ $EUID -eq 0 ]]; then
		id "$SUPERUSER" >/dev/null 2>&1 || die "running as root but there is no '$SUPERUSER' OS user to run the server as; $INSTALL_HINT"
		command -v runuser >/dev/null || die "running as root needs runuser (util-linux) to drop privileges"
	fi

	# New directories get 0755 so that the postgres user can traverse them.
	umask 022
	mkdir -p -- "$DIR" || die "cannot create $DIR"
	if [[ $EUID -eq 0 ]]; then
		chown "$SUPERUSER:" "$DIR"
		if ! runuser -u "$SUPERUSER" -- test -w "$DIR" -a -x "$DIR"; then
			die "the $SUPERUSER user cannot write to $DIR; use a directory under /tmp or make its parents traversable (chmod o+x)"
		fi
	fi
	cd "$DIR"

	if [[ -f $DATA/PG_VERSION ]]; then
		local running
		if running=$(running_port); then
			[[ $running == "$port" ]] || die "cluster in $DIR is already running on port $running, not $port; stop it first"
			say "already running"
			url "$port"
			return
		fi
		say "reusing existing cluster in $DATA"
	else
		[[ -e $DATA ]] && die "$DATA exists but is not a PostgreSQL data directory; remove it or choose another DIR"
		say "initdb in $DATA ($INITDB)"
		as_pg "$INITDB" -D "$DATA" -A trust -U "$SUPERUSER" -E UTF8 --locale=C >"$DIR/initdb.log" 2>&1 ||
			{ cat "$DIR/initdb.log" >&2; die "initdb failed"; }
	fi

	# Our settings live in their own file, rewritten on every start (so the
	# port can change), and included once from postgresql.conf.
	local sockdir=$DIR
	((${#DIR} + 20 < 107)) || sockdir="" # unix socket paths are limited to 107 bytes
	as_pg tee "$DATA/drover.conf" >/dev/null <<EOF
# Written by scripts/pgtmp.sh; overrides postgresql.conf.
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$sockdir'
max_connections = 200
shared_buffers = '1GB'
fsync = on
synchronous_commit = on
full_page_writes = on
max_wal_size = '8GB'
checkpoint_timeout = '30min'
shared_preload_libraries = 'pg_stat_statements'
EOF
	grep -qxF "include = 'drover.conf'" "$DATA/postgresql.conf" ||
		echo "include = 'drover.conf'" | as_pg tee -a "$DATA/postgresql.conf" >/dev/null

	say "starting server on 127.0.0.1:$port (log: $LOG)"
	if ! as_pg "$PG_CTL" -D "$DATA" -l "$LOG" -w -t 60 start >&2; then
		log_tail
		die "server did not start"
	fi

	local exists
	exists=$("$PSQL" -X -q -h 127.0.0.1 -p "$port" -U "$SUPERUSER" -d postgres -tAc \
		"select 1 from pg_database where datname = '$DB'") || die "cannot connect to the server on port $port"
	if [[ $exists != 1 ]]; then
		"$PSQL" -X -q -h 127.0.0.1 -p "$port" -U "$SUPERUSER" -d postgres -c "create database $DB" >&2 ||
			die "cannot create database $DB"
	fi
	url "$port"
}

cmd_stop() {
	setup "$1"
	[[ -f $DATA/PG_VERSION ]] || die "no cluster in $DIR (expected $DATA)"
	cd "$DIR"
	if ! running_port >/dev/null; then
		say "not running"
		return
	fi
	say "stopping server in $DATA"
	if ! as_pg "$PG_CTL" -D "$DATA" -m fast -w -t 60 stop >&2; then
		log_tail
		die "server did not stop"
	fi
}

case ${1:-} in
start)
	(($# == 2 || $# == 3)) || usage
	cmd_start "$2" "${3:-}"
	;;
stop)
	(($# == 2)) || usage
	cmd_stop "$2"
	;;
-h | --help | help) usage ;;
*) usage ;;
esac
