#!/usr/bin/env bash
# The sandbox for model-written code (runtime/code_executors/sandbox.py), installed by the
# project itself.
#
#   scripts/sandbox.sh [install]  Debian's bubblewrap (bwrap), libseccomp2 (the system-call
#                                 filter), util-linux (prlimit) and python3 (the interpreter the
#                                 sandbox runs, with its whole standard library: it lives under
#                                 /usr, the only tree the sandbox sees), when missing and we are
#                                 root; then a probe run, which also needs a cgroup per run
#                                 (root on cgroup v1, or a delegated cgroup v2 subtree).
#   scripts/sandbox.sh check      exit 0 when a probe run works (nothing installed)
#   scripts/sandbox.sh peer       Debian's gVisor (runsc), the benchmark's peer (make bench-sandbox)
#
# Why bubblewrap: unprivileged (no setuid binary, unlike firejail), in Debian's own packages
# (nsjail is not), small, and the sandbox Flatpak relies on; it gives the namespaces (user,
# network, PID, IPC, UTS, cgroup, mount), an empty read-only root and tmpfs work dirs. Around
# it the supervisor makes a cgroup per run and loads a seccomp filter. docs/SAFETY.md says
# what each layer holds, and why not nsjail or gVisor.
#
# AGENTDASH_SANDBOX_INSTALL=0 forbids the apt-get install (the script then fails if
# something is missing).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
NAME=sandbox.sh
# shellcheck source=scripts/_lib.sh
source "$ROOT/scripts/_lib.sh"
PY="${PYTHON:-$ROOT/.venv/bin/python}"

have_tools() {
    command -v bwrap >/dev/null && command -v prlimit >/dev/null && [[ -x /usr/bin/python3 ]] &&
        /usr/bin/python3 -c 'import ctypes, statistics' 2>/dev/null &&
        ldconfig -p 2>/dev/null | grep 'libseccomp\.so\.2' >/dev/null  # not -q: under pipefail
    # grep -q's early exit can end ldconfig with SIGPIPE and fail the check at random
}

probe() {
    [[ -x "$PY" ]] || die "no Python at $PY (make install first, or set PYTHON)"
    (cd "$ROOT" && "$PY" -c 'from runtime.code_executors import sandbox_check; print(sandbox_check())')
}

case "${1:-install}" in
    install)
        have_tools || apt_install "the sandbox (bubblewrap, libseccomp, python3)" AGENTDASH_SANDBOX_INSTALL \
            bubblewrap libseccomp2 python3 util-linux
        have_tools || die "bubblewrap, libseccomp2 or python3 is still missing after apt-get"
        probe
        ;;
    check)
        have_tools && probe >/dev/null
        ;;
    peer)
        command -v runsc >/dev/null || apt_install "gVisor (runsc)" AGENTDASH_SANDBOX_INSTALL runsc
        runsc --version | head -1
        ;;
    *)
        echo "usage: $0 [install|check|peer]" >&2
        exit 2
        ;;
esac
