#!/usr/bin/env bash
# A throw-away Redis server for the tests and the scale mode, run by the project itself.
#
#   scripts/redis.sh start    install (Debian's redis-server, when missing and we are root),
#                             start a server on 127.0.0.1 with its files in var/redis; prints
#                             the REDIS_URL. Already running (ours, or any Redis answering on
#                             the port): no-op.
#   scripts/redis.sh stop     stop the server started from this work tree (its directory stays)
#   scripts/redis.sh url      print the REDIS_URL
#   scripts/redis.sh status   exit 0 when running
#
# The server listens on 127.0.0.1 only (port AGENTDASH_REDIS_PORT, 63799 by default; its
# directory AGENTDASH_REDIS_DIR, var/redis by default) and writes its pid file, log and
# append-only file there. It is the Celery broker, so it keeps what it holds across a
# restart: AOF on, fsynced every second (a crash loses at most the last second; a clean stop
# nothing), no RDB snapshots. A queued run's message survives a Redis restart; one lost
# anyway is submitted again by the reaper (AGENTDASH_RUN_REQUEUE_AFTER_S). Messages go to
# stderr, the URL alone to stdout: REDIS_URL="$(scripts/redis.sh start)".
#
# AGENTDASH_REDIS_INSTALL=0 forbids the apt-get install (the script then fails if Redis is
# missing).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
NAME=redis.sh
# shellcheck source=scripts/_lib.sh
source "$ROOT/scripts/_lib.sh"
DIR="$(abs_path "${AGENTDASH_REDIS_DIR:-$ROOT/var/redis}")"
PORT="${AGENTDASH_REDIS_PORT:-63799}"
HOST=127.0.0.1
URL="redis://$HOST:$PORT/0"
PIDFILE="$DIR/redis.pid"
LOG="$DIR/redis.log"

server_bin() {
    command -v redis-server || { [[ -x /usr/bin/redis-server ]] && echo /usr/bin/redis-server; } || true
}

install_redis() { apt_install Redis AGENTDASH_REDIS_INSTALL redis-server; }

# Answers PING on our port (bash's /dev/tcp: no redis-cli needed).
answers() {
    local reply
    reply="$(
        exec 2>/dev/null
        exec 3<>"/dev/tcp/$HOST/$PORT" || exit 1
        printf 'PING\r\n' >&3
        IFS= read -r -t 2 line <&3 && printf '%s' "$line"
    )" || return 1
    [[ "$reply" == "+PONG"* ]]
}

ours_running() {
    [[ -f "$PIDFILE" ]] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null
}

start() {
    if ours_running && answers; then
        say "already running ($DIR, port $PORT)"
        echo "$URL"
        return 0
    fi
    local bin
    bin="$(server_bin)"
    if [[ -z "$bin" ]]; then
        install_redis
        bin="$(server_bin)"
        [[ -n "$bin" ]] || die "redis-server still not found after installing it"
    fi
    if answers; then
        # Another work tree's server (or one left behind by an earlier checkout): a broker
        # and channel layer for tests holds nothing of ours, so use it.
        say "a Redis server not started from $DIR already answers on port $PORT: using it"
        echo "$URL"
        return 0
    fi
    if (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null; then
        die "port $PORT is taken by a server that is not Redis (set AGENTDASH_REDIS_PORT)"
    fi
    mkdir -p "$DIR"
    rm -f "$PIDFILE"
    say "starting on $HOST:$PORT"
    # Options on the command line: no config file to keep in sync. The apt package's own
    # service (if any) is left alone; this is a second, private server.
    "$bin" --bind "$HOST" --port "$PORT" --protected-mode yes \
        --daemonize yes --pidfile "$PIDFILE" --logfile "$LOG" --dir "$DIR" \
        --save "" --appendonly yes --appendfsync everysec --databases 16 </dev/null >/dev/null 9>&- \
        || { tail -n 20 "$LOG" >&2 2>/dev/null; die "the server did not start (log: $LOG)"; }
    local waited=0
    until answers; do
        ((waited < 100)) || { tail -n 20 "$LOG" >&2 2>/dev/null; die "the server does not answer on port $PORT (log: $LOG)"; }
        sleep 0.1
        waited=$((waited + 1))
    done
    echo "$URL"
}

stop() {
    if ours_running; then
        local pid
        pid="$(cat "$PIDFILE")"
        kill "$pid"
        for _ in $(seq 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -0 "$pid" 2>/dev/null && die "the server (pid $pid) did not stop"
        rm -f "$PIDFILE"
        say "stopped"
    else
        say "not running"
    fi
}

case "${1:-}" in
    start) one_at_a_time "$DIR" && start ;;
    stop) one_at_a_time "$DIR" && stop ;;
    url) echo "$URL" ;;
    status) ours_running && answers ;;
    *)
        echo "usage: $0 start|stop|url|status" >&2
        exit 2
        ;;
esac
