#!/usr/bin/env bash
# A throw-away PostgreSQL server for the tests, run by the project itself.
#
#   scripts/postgres.sh start   install (Debian's postgresql, when missing and we are root),
#                               create the cluster in var/pg, start it, create role and
#                               database; prints the DATABASE_URL. Already running: no-op.
#   scripts/postgres.sh stop    stop the server (the cluster stays in var/pg)
#   scripts/postgres.sh url     print the DATABASE_URL
#   scripts/postgres.sh status  exit 0 when running
#
# The server listens on 127.0.0.1 only (port AGENTDASH_PG_PORT, 54329 by default) and on a
# Unix socket inside its own data directory. Role ``agentdash`` (CREATEDB, so Django can
# create its test database) is trusted on loopback; nothing else is. Messages go to stderr,
# the URL alone to stdout: DATABASE_URL="$(scripts/postgres.sh start)".
#
# AGENTDASH_PG_INSTALL=0 forbids the apt-get install (the script then fails if PostgreSQL
# is missing).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
NAME=postgres.sh
# shellcheck source=scripts/_lib.sh
source "$ROOT/scripts/_lib.sh"
PGDATA="$(abs_path "${AGENTDASH_PG_DIR:-$ROOT/var/pg}")"
PORT="${AGENTDASH_PG_PORT:-54329}"
HOST=127.0.0.1
ROLE=agentdash
DB=agentdash
URL="postgres://$ROLE@$HOST:$PORT/$DB"
LOG="$PGDATA.log"

pg_bindir() {
    # The newest server installed by Debian's packages, else whatever is on PATH.
    local dir
    dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
    if [[ -n "$dir" && -x "$dir/initdb" && -x "$dir/pg_ctl" ]]; then
        echo "$dir"
    elif command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
        dirname "$(command -v pg_ctl)"
    fi
}

install_postgres() { apt_install PostgreSQL AGENTDASH_PG_INSTALL postgresql; }

# Run a command as the cluster's owner: ``postgres`` when we are root (initdb refuses root),
# ourselves otherwise.
as_owner() {
    if [[ "$(id -u)" == 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

running() {
    local bin="$1"
    [[ -f "$PGDATA/PG_VERSION" ]] && as_owner "$bin/pg_ctl" status -D "$PGDATA" >/dev/null 2>&1
}

sql() {
    # Superuser SQL over the private socket in the data directory.
    local bin="$1" db="$2"
    shift 2
    as_owner "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$PGDATA" -p "$PORT" -U postgres -d "$db" "$@"
}

init_cluster() {
    local bin="$1"
    (( ${#PGDATA} < 80 )) || die "$PGDATA is too long a path for the server's Unix socket; set AGENTDASH_PG_DIR"
    mkdir -p "$(dirname "$PGDATA")"
    if [[ "$(id -u)" == 0 ]]; then
        id postgres >/dev/null 2>&1 || die "no 'postgres' system user to own the cluster"
        # The owner must be able to reach its data directory.
        runuser -u postgres -- test -x "$(dirname "$PGDATA")" \
            || die "user postgres cannot enter $(dirname "$PGDATA"); set AGENTDASH_PG_DIR"
        install -d -m 700 -o postgres -g postgres "$PGDATA"
        install -m 600 -o postgres -g postgres /dev/null "$LOG"
    else
        install -d -m 700 "$PGDATA"
        : >"$LOG"
    fi
    say "creating the cluster in $PGDATA"
    as_owner "$bin/initdb" -D "$PGDATA" -U postgres --auth-local=peer --auth-host=reject \
        -E UTF8 --locale=C.UTF-8 >>"$LOG" 2>&1 </dev/null \
        || { tail -n 20 "$LOG" >&2; die "initdb failed (log: $LOG)"; }
    local owner
    owner="$(as_owner id -un)"
    as_owner tee -a "$PGDATA/postgresql.conf" >/dev/null <<EOF

# scripts/postgres.sh: a test server on loopback only, tuned for speed over durability.
listen_addresses = '$HOST'
port = $PORT
unix_socket_directories = '$PGDATA'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 100
EOF
    as_owner tee "$PGDATA/pg_hba.conf" >/dev/null <<EOF
# scripts/postgres.sh: the owner through the private socket; the test role on loopback.
local   all   postgres               peer map=owner
host    all   $ROLE   127.0.0.1/32   trust
EOF
    # Root runs the owner's psql as postgres, so ``peer`` sees postgres: map it to the
    # superuser name initdb was given.
    as_owner tee "$PGDATA/pg_ident.conf" >/dev/null <<EOF
owner   $owner   postgres
EOF
}

start() {
    local bin
    bin="$(pg_bindir)"
    if [[ -z "$bin" ]]; then
        install_postgres
        bin="$(pg_bindir)"
        [[ -n "$bin" ]] || die "PostgreSQL still not found after installing it"
    fi
    if running "$bin"; then
        local actual
        actual="$(sed -n 4p "$PGDATA/postmaster.pid" 2>/dev/null || true)"
        [[ -z "$actual" || "$actual" == "$PORT" ]] \
            || die "$PGDATA is already served on port $actual, not $PORT: scripts/postgres.sh stop first"
        say "already running ($PGDATA, port $PORT)"
        echo "$URL"
        return 0
    fi
    if [[ -f "$PGDATA/PG_VERSION" ]]; then
        # A cluster made by another major version (the machine's PostgreSQL changed): it
        # holds nothing worth keeping, so make a new one.
        local major
        major="$("$bin/pg_ctl" --version | sed -E 's/.* ([0-9]+)(\.[0-9]+)*.*/\1/')"
        if [[ "$(cat "$PGDATA/PG_VERSION")" != "$major" ]]; then
            say "$PGDATA was made by PostgreSQL $(cat "$PGDATA/PG_VERSION"), this is $major: recreating it"
            rm -rf "$PGDATA"
        fi
    fi
    [[ -f "$PGDATA/PG_VERSION" ]] || init_cluster "$bin"
    if (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null; then
        die "port $PORT is taken by another server (another work tree's? run its scripts/postgres.sh stop, or set AGENTDASH_PG_PORT)"
    fi
    say "starting on $HOST:$PORT"
    # 9>&-: the server must not hold one_at_a_time's lock for as long as it runs
    as_owner "$bin/pg_ctl" start -D "$PGDATA" -l "$LOG" -o "-p $PORT" -w -t 60 >/dev/null </dev/null 9>&- \
        || { tail -n 20 "$LOG" >&2; die "the server did not start (log: $LOG)"; }
    sql "$bin" postgres <<EOF || die "could not create role and database"
SELECT 'CREATE ROLE $ROLE LOGIN CREATEDB'
WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$ROLE') \gexec
-- DROP DATABASE … WITH (FORCE) (tests, benchmarks) ends every session of the database,
-- autovacuum's worker too, which belongs to no role: only this grant allows that.
GRANT pg_signal_backend TO $ROLE;
SELECT 'CREATE DATABASE $DB OWNER $ROLE'
WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$DB') \gexec
EOF
    echo "$URL"
}

stop() {
    local bin
    bin="$(pg_bindir)"
    if [[ -n "$bin" ]] && running "$bin"; then
        as_owner "$bin/pg_ctl" stop -D "$PGDATA" -m fast -w >/dev/null </dev/null
        say "stopped"
    else
        say "not running"
    fi
}

case "${1:-}" in
    start) one_at_a_time "$PGDATA" && start ;;
    stop) one_at_a_time "$PGDATA" && stop ;;
    url) echo "$URL" ;;
    status)
        bin="$(pg_bindir)"
        [[ -n "$bin" ]] && running "$bin"
        ;;
    *)
        echo "usage: $0 start|stop|url|status" >&2
        exit 2
        ;;
esac
