#!/usr/bin/env bash
# A real load balancer (HAProxy) in front of several daphne processes, run by the project
# itself: for the scale-out tests and benchmarks, and to try the production set-up on one
# machine. Its configuration is the one docs/DEPLOY.md ships (the ```haproxy block of
# "Several daphnes behind a load balancer"), read from there at each start.
#
#   scripts/haproxy.sh start    install (Debian's haproxy, when missing and we are root),
#                               write the configuration — DEPLOY.md's, then a server line per
#                               address of AGENTDASH_LB_SERVERS —, check it, start HAProxy;
#                               prints the balancer's URL once it accepts connections
#   scripts/haproxy.sh stop     stop the HAProxy started from this directory
#   scripts/haproxy.sh status   exit 0 when running
#   scripts/haproxy.sh url      print the URL
#   scripts/haproxy.sh admin "CMD"
#                               one command of HAProxy's runtime API, its answer on stdout
#                               (e.g. "show servers state", "set server daphnes/web1 state drain")
#
# AGENTDASH_LB_SERVERS  the daphnes, "host:port host:port …" (required to start)
# AGENTDASH_LB_PORT     the balancer's port on 127.0.0.1 (8080)
# AGENTDASH_LB_DIR      its configuration, pid file and runtime socket (var/haproxy)
# AGENTDASH_LB_HEALTH_HOST  the Host of the health checks (localhost: in ALLOWED_HOSTS)
# AGENTDASH_HAPROXY_INSTALL=0 forbids the apt-get install.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
NAME=haproxy.sh
# shellcheck source=scripts/_lib.sh
source "$ROOT/scripts/_lib.sh"
DIR="$(abs_path "${AGENTDASH_LB_DIR:-$ROOT/var/haproxy}")"
PORT="${AGENTDASH_LB_PORT:-8080}"
HOST=127.0.0.1
PIDFILE="$DIR/haproxy.pid"
CONFIG="$DIR/haproxy.cfg"
SOCKET="$DIR/admin.sock"
LOG="$DIR/haproxy.log"
DOC="$ROOT/docs/DEPLOY.md"

haproxy_bin() {
    command -v haproxy || { [[ -x /usr/sbin/haproxy ]] && echo /usr/sbin/haproxy; } || true
}

running() {
    [[ -f "$PIDFILE" ]] && kill -0 "$(head -n 1 "$PIDFILE")" 2>/dev/null
}

accepts() { (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null; }

# The documented configuration: the lines of DEPLOY.md's first ```haproxy block.
documented() {
    awk '/^```haproxy$/ { inside = 1; next } inside && /^```$/ { exit } inside { print }' "$DOC"
}

write_config() {
    local servers="${AGENTDASH_LB_SERVERS:-}" n=0
    [[ -n "${servers// /}" ]] || die "AGENTDASH_LB_SERVERS is empty: name the daphnes (host:port …)"
    local body
    body="$(documented)"
    [[ -n "$body" ]] || die "no \`\`\`haproxy block in $DOC"
    {
        echo "# Written by scripts/haproxy.sh from docs/DEPLOY.md; do not edit."
        echo "$body"
        for address in $servers; do
            [[ "$address" =~ ^[A-Za-z0-9.:_-]+:[0-9]+$ ]] || die "not a host:port: $address"
            n=$((n + 1))
            echo "    server web$n $address"
        done
    } >"$CONFIG"
}

start() {
    if running && accepts; then
        say "already running ($DIR, port $PORT)"
        echo "http://$HOST:$PORT"
        return 0
    fi
    local bin
    bin="$(haproxy_bin)"
    if [[ -z "$bin" ]]; then
        apt_install HAProxy AGENTDASH_HAPROXY_INSTALL haproxy
        bin="$(haproxy_bin)"
        [[ -n "$bin" ]] || die "haproxy still not found after installing it"
    fi
    accepts && die "port $PORT is taken (set AGENTDASH_LB_PORT)"
    mkdir -p "$DIR"
    rm -f "$PIDFILE" "$SOCKET"
    write_config
    export AGENTDASH_LB_BIND="$HOST:$PORT" AGENTDASH_LB_SOCKET="$SOCKET"
    export AGENTDASH_LB_HEALTH_HOST="${AGENTDASH_LB_HEALTH_HOST:-localhost}"
    "$bin" -c -q -f "$CONFIG" >"$LOG" 2>&1 || { cat "$LOG" >&2; die "the configuration does not check ($CONFIG)"; }
    say "starting on $HOST:$PORT before ${AGENTDASH_LB_SERVERS}"
    "$bin" -D -p "$PIDFILE" -f "$CONFIG" >>"$LOG" 2>&1 </dev/null 9>&- \
        || { tail -n 20 "$LOG" >&2; die "HAProxy did not start (log: $LOG)"; }
    local waited=0
    until accepts; do
        ((waited < 100)) || { tail -n 20 "$LOG" >&2; die "HAProxy does not accept on port $PORT"; }
        sleep 0.1
        waited=$((waited + 1))
    done
    echo "http://$HOST:$PORT"
}

stop() {
    if running; then
        local pid
        pid="$(head -n 1 "$PIDFILE")"
        kill "$pid"
        for _ in $(seq 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -0 "$pid" 2>/dev/null && die "HAProxy (pid $pid) did not stop"
        rm -f "$PIDFILE" "$SOCKET"
        say "stopped"
    else
        say "not running"
    fi
}

# One runtime-API command over the socket (no socat needed: Python's socket module).
admin() {
    [[ -S "$SOCKET" ]] || die "no runtime socket at $SOCKET: is HAProxy running?"
    python3 - "$SOCKET" "$1" <<'PY'
import socket, sys
with socket.socket(socket.AF_UNIX) as s:
    s.connect(sys.argv[1])
    s.sendall(sys.argv[2].encode() + b"\n")
    out = b""
    while chunk := s.recv(65536):
        out += chunk
sys.stdout.write(out.decode(errors="replace"))
PY
}

case "${1:-}" in
    start) one_at_a_time "$DIR" && start ;;
    stop) one_at_a_time "$DIR" && stop ;;
    status) running && accepts ;;
    url) echo "http://$HOST:$PORT" ;;
    admin)
        [[ $# -eq 2 ]] || die "usage: $0 admin \"COMMAND\""
        admin "$2"
        ;;
    *)
        echo "usage: $0 start|stop|status|url|admin \"COMMAND\"" >&2
        exit 2
        ;;
esac
