#!/usr/bin/env bash
# The browser for the browser tests (tests/agentdash/browser/), installed by the project itself.
#
#   scripts/chromium.sh [install]  Debian's chromium-headless-shell (apt-get, when missing and
#                                  we are root) and the Python ``playwright`` package in the
#                                  venv when it is not importable there; prints the browser's
#                                  path. Idempotent.
#   scripts/chromium.sh path       print the browser's path (exit 1 when it is missing)
#   scripts/chromium.sh check      exit 0 when both the browser and playwright are there
#
# Never ``playwright install``: it downloads a browser build of its own, which this project's
# machines cannot fetch. Playwright drives Debian's browser through ``executable_path``.
#
# The headless shell is Chromium's own headless build (the same engine, no browser window
# around it; Playwright's default for headless runs): measured on the 2-core machine, a fresh
# context costs it a quarter of the CPU the full browser's does, a navigation a quarter, and an
# idle page nothing (the full browser draws ~0.1 core per idle page).
#
# Environment: AGENTDASH_CHROMIUM (the browser, default /usr/bin/chromium-headless-shell),
# PYTHON (the venv's interpreter, default .venv/bin/python), AGENTDASH_CHROMIUM_INSTALL=0
# forbids installing (the script then fails when something is missing). Messages go to stderr, the path alone to
# stdout.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
NAME=chromium.sh
# shellcheck source=scripts/_lib.sh
source "$ROOT/scripts/_lib.sh"
BROWSER="${AGENTDASH_CHROMIUM:-/usr/bin/chromium-headless-shell}"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
# Keep in step with pyproject.toml's dev extra.
PLAYWRIGHT_REQ="playwright>=1.49"

have_browser() { [[ -x "$BROWSER" ]]; }
have_playwright() { "$PY" -c "import playwright.sync_api" >/dev/null 2>&1; }

install_browser() {
    apt_install "$BROWSER" AGENTDASH_CHROMIUM_INSTALL chromium-headless-shell fonts-dejavu-core
    have_browser || die "apt-get installed chromium-headless-shell, but $BROWSER is still missing"
}

install_playwright() {
    [[ "${AGENTDASH_CHROMIUM_INSTALL:-1}" != "0" ]] || die "playwright is not importable by $PY and AGENTDASH_CHROMIUM_INSTALL=0"
    [[ -x "$PY" ]] || die "no Python at $PY (make install first, or set PYTHON)"
    say "installing the Python package $PLAYWRIGHT_REQ into $("$PY" -c 'import sys; print(sys.prefix)')…"
    "$PY" -m pip install --quiet "$PLAYWRIGHT_REQ" >&2 </dev/null
    have_playwright || die "playwright is still not importable by $PY"
}

case "${1:-install}" in
    install)
        have_browser || install_browser
        have_playwright || install_playwright
        echo "$BROWSER"
        ;;
    path)
        have_browser || die "$BROWSER is missing: run scripts/chromium.sh install"
        echo "$BROWSER"
        ;;
    check)
        have_browser && have_playwright
        ;;
    *)
        echo "usage: $0 [install|path|check]" >&2
        exit 2
        ;;
esac
