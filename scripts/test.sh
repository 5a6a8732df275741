#!/usr/bin/env bash
# `make test`: the SQLite pass and the PostgreSQL pass, at the same time.
#
#   scripts/test.sh [pytest arguments...]
#
# The SQLite pass runs every test; the PostgreSQL pass the tests about the database itself
# (marker `database`, tests/agentdash/conftest.py) on the project's own server
# (scripts/postgres.sh). Run one after the other, the two left the machine's cores idle at
# each pass's end (the other workers waiting on the last, longest unit) and between them; run
# together, the PostgreSQL pass fills those gaps. Its output goes to var/test-postgres.log and
# is printed after the SQLite pass's; the exit status is non-zero if either pass failed.
#
# The browser tests are the SQLite pass's longest unit of work and end it (tests/conftest.py):
# every other process — the PostgreSQL pass, and the SQLite pass's workers without the browser
# tests (tests/conftest.py) — runs at a lower priority (nice TEST_NICE, 3 by default), so that
# the browser tests take the CPU they can use and the rest shares what is left. 0: no change.
#
# Where PostgreSQL cannot be started, a developer's run warns and skips that pass; in CI (CI
# set, and not 0/false) it fails the run. The environment: TEST_WORKERS (the processes each
# pass spreads its tests over; 0: one), TEST_NICE, TEST_PG_LOG (where the PostgreSQL pass's
# output goes, var/test-postgres.log by default); the arguments go to both passes (the
# Makefile passes PYTEST_ARGS).
set -uo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
NAME=test.sh
# shellcheck source=scripts/_lib.sh
source "$ROOT/scripts/_lib.sh"
cd "$ROOT"

PY="$ROOT/.venv/bin/python"
WORKERS="${TEST_WORKERS:-3}"
export TEST_NICE="${TEST_NICE:-3}"
[[ "$WORKERS" =~ ^[0-9]+$ ]] || die "TEST_WORKERS must be a number of processes, not '$WORKERS'"
[[ "$TEST_NICE" =~ ^[0-9]+$ && "$TEST_NICE" -le 19 ]] || die "TEST_NICE must be 0 to 19, not '$TEST_NICE'"
xdist=()
[[ "$WORKERS" == 0 ]] || xdist=(-n "$WORKERS" --dist loadfile --no-loadscope-reorder)

in_ci() {
    case "${CI:-}" in "" | 0 | false | no) return 1 ;; *) return 0 ;; esac
}

mkdir -p var
pg_log="${TEST_PG_LOG:-$ROOT/var/test-postgres.log}"
pg_pid=""
pg_failed_to_start=false
stop_pg_pass() { [[ -z "$pg_pid" ]] || kill -- "$pg_pid" 2>/dev/null; }
trap stop_pg_pass INT TERM

if url="$(scripts/postgres.sh start 2>"$pg_log")"; then
    say "the PostgreSQL pass runs beside this one; its output: $pg_log (printed at the end)"
    DATABASE_URL="$url" nice -n "$TEST_NICE" "$PY" -m pytest "${xdist[@]}" tests/agentdash \
        -m "database and not browser and not own_servers" "$@" >>"$pg_log" 2>&1 &
    pg_pid=$!
else
    pg_failed_to_start=true
fi

DATABASE_URL= "$PY" -m pytest "${xdist[@]}" "$@"
sqlite_rc=$?

pg_rc=0
if [[ -n "$pg_pid" ]]; then
    wait "$pg_pid"
    pg_rc=$?
    pg_pid=""
    echo
    echo "──────────────── the PostgreSQL pass ($pg_log) ────────────────"
    cat "$pg_log"
elif $pg_failed_to_start; then
    cat "$pg_log" >&2
    if in_ci; then
        say "PostgreSQL could not be started: CI needs the PostgreSQL pass"
        pg_rc=1
    else
        say "WARNING: PostgreSQL could not be started: the PostgreSQL pass was SKIPPED (CI fails here)"
    fi
fi

say "SQLite pass: exit $sqlite_rc; PostgreSQL pass: exit $pg_rc"
[[ "$sqlite_rc" == 0 && "$pg_rc" == 0 ]]
