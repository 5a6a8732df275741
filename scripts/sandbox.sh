#!/usr/bin/env bash
# The sandbox for model-written code (runtime/code_executors/sandbox.py), installed by the
# project itself.
#
#   scripts/sandbox.sh [install]  Debian's bubblewrap (bwrap) and python3 (the interpreter the
#                                 sandbox runs: it lives under /usr, the only tree the sandbox
#                                 sees), when missing and we are root; then a probe run.
#   scripts/sandbox.sh check      exit 0 when a probe run works (nothing installed)
#
# Why bubblewrap: unprivileged (no setuid binary, unlike firejail), in Debian's own packages
# (nsjail is not), small, and the sandbox Flatpak relies on; it gives the namespaces (user,
# network, PID, IPC, UTS, cgroup, mount), an empty read-only root and tmpfs work dirs, and
# the limits come from prlimit (util-linux). docs/SAFETY.md says more.
#
# AGENTDASH_SANDBOX_INSTALL=0 forbids the apt-get install (the script then fails if
# something is missing).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
NAME=sandbox.sh
# shellcheck source=scripts/_lib.sh
source "$ROOT/scripts/_lib.sh"
PY="${PYTHON:-$ROOT/.venv/bin/python}"

have_tools() { command -v bwrap >/dev/null && command -v prlimit >/dev/null && [[ -x /usr/bin/python3 ]]; }

probe() {
    [[ -x "$PY" ]] || die "no Python at $PY (make install first, or set PYTHON)"
    (cd "$ROOT" && "$PY" -c 'from runtime.code_executors import sandbox_check; print(sandbox_check())')
}

case "${1:-install}" in
    install)
        have_tools || apt_install "the sandbox (bubblewrap, python3)" AGENTDASH_SANDBOX_INSTALL bubblewrap python3-minimal util-linux
        have_tools || die "bubblewrap or python3 is still missing after apt-get"
        probe
        ;;
    check)
        have_tools && probe >/dev/null
        ;;
    *)
        echo "usage: $0 [install|check]" >&2
        exit 2
        ;;
esac
