"""The browser tests' harness: the real server in a subprocess, and a watched Chromium page.

The server is daphne — the embedded default: an SQLite *file* in a temporary directory, the
in-memory channel layer, the inline executor, DEBUG on — after ``migrate`` and ``seed_demo``
in the same environment. (The in-memory channel layer cannot cross processes, so nothing here
shares a database or a layer with the test process: the tests act through the browser only.)
The fixtures live in conftest.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.agentdash.live_harness import ROOT, sqlite_prepared
from tests.waits import until

CHROMIUM = os.environ.get(
    "AGENTDASH_CHROMIUM", "/usr/bin/chromium-headless-shell"
)  # scripts/chromium.sh
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    # Nothing leaves the machine: every request for another host goes to a proxy at a port
    # nothing listens on, and fails there (loopback, the test servers, is never proxied).
    "--proxy-server=http://127.0.0.1:9",
]
PASSWORD = "browser-tests-password-1"
# How often a page.wait_for_function condition is tried, in ms. Playwright's default tries it
# every animation frame, which keeps the page making frames: measured on the headless shell,
# 0.54 s of Chromium CPU per 5 s waited, against 0.11 s every 20 ms (0.03 s every 50 ms, but
# a wait then ends 25 ms late on average, and the browser tests wait thousands of times in a
# row). Locators and selectors wait on DOM changes, not frames.
POLL_MS = 20
SERVER_START_TIMEOUT = 60.0

# Console messages that are not failures of the page itself: a websocket that cannot connect
# is reported by Chromium as a console error; the live tests assert the connection instead.
WEBSOCKET_FAILURE = re.compile(r"WebSocket connection to '.*' failed")
CSP_VIOLATION = re.compile(r"Content Security Policy|Refused to (execute|load|apply|connect)", re.I)


# ── The server ─────────────────────────────────────────────────────────────────────────────
@dataclass
class LiveServer:
    url: str
    process: subprocess.Popen[bytes]
    log: Path
    password: str = PASSWORD
    env: dict[str, str] = field(default_factory=dict)  # the server's: its database, its dirs
    # username → the session cookie of a login through the form (see Browser.log_in)
    logins: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # bench/ui_sessions.py serving this server's database (see session_generate)
    generator: subprocess.Popen[str] | None = None

    def log_tail(self, lines: int = 60) -> str:
        text = self.log.read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_env(tmp: Path) -> dict[str, str]:
    """The environment of the embedded default, in ``tmp``; no model keys (offline model)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "REDIS_URL", "DJANGO_SETTINGS_MODULE")
    }
    env.update(
        DATABASE_URL=f"sqlite:///{tmp / 'agentdash.sqlite3'}",
        AGENTDASH_VAR_DIR=str(tmp / "var"),
        AGENTDASH_EXECUTOR="inline",
        AGENTDASH_DEMO_PASSWORD=PASSWORD,
        DEBUG="1",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        DJANGO_SETTINGS_MODULE="agentdash.settings",
        PYTHONUNBUFFERED="1",
    )
    return env


class ServerError(RuntimeError):
    """The server could not be set up or started (the message carries its output)."""


def _wait_until_up(server: LiveServer) -> None:
    def up() -> bool:
        if server.process.poll() is not None:
            raise ServerError(
                f"daphne exited with {server.process.returncode}:\n{server.log_tail()}"
            )
        try:
            with urllib.request.urlopen(f"{server.url}/login/", timeout=2) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    try:
        until(up, "daphne to answer", timeout=SERVER_START_TIMEOUT)
    except AssertionError:
        raise ServerError(
            f"daphne did not answer in {SERVER_START_TIMEOUT:.0f} s:\n{server.log_tail()}"
        ) from None


def server_start(
    tmp: Path, *, env_extra: dict[str, str] | None = None, launcher: str = "daphne"
) -> LiveServer:
    """Migrate and seed a fresh SQLite file in ``tmp``, then start daphne on 127.0.0.1 on a
    free port; returns once it answers. ``env_extra`` adds to (or overrides) the server's
    environment, e.g. ``AGENTDASH_AGENTS``; ``launcher``, the module run (``python -m``)
    with daphne's arguments (e.g. one that slows the server down first). Raises
    :class:`ServerError`."""
    env = {**server_env(tmp), **(env_extra or {})}
    try:
        sqlite_prepared(env)
    except RuntimeError as exc:
        raise ServerError(str(exc)) from exc
    port = _free_port()
    log = tmp / "daphne.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", launcher, "-b", "127.0.0.1", "-p", str(port),
             "agentdash.asgi:application"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    server = LiveServer(url=f"http://127.0.0.1:{port}", process=process, log=log, env=env)
    try:
        _wait_until_up(server)
    except BaseException:
        server_stop(server)
        raise
    return server


@contextlib.contextmanager
def server_running(tmp: Path, **options: Any) -> Iterator[LiveServer]:
    """:func:`server_start`'s server (``options``: its) for a ``with`` block, stopped after;
    the test fails if it does not start (a module's own server)."""
    try:
        server = server_start(tmp, **options)
    except ServerError as exc:
        pytest.fail(str(exc))
    try:
        yield server
    finally:
        server_stop(server)


def server_stop(server: LiveServer) -> None:
    if server.generator is not None:
        server.generator.stdin.close()  # type: ignore[union-attr]  # its input ends: it exits
        try:
            server.generator.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.generator.kill()
    server.process.terminate()
    try:
        server.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait(timeout=10)


GENERATOR = ROOT / "bench" / "ui_sessions.py"


GENERATE_TIMEOUT_S = 600.0


def session_generate(server: LiveServer, what: str, *args: str) -> dict[str, Any]:
    """A big session in the server's database, made through the app's services by
    ``bench/ui_sessions.py`` (``what``: ``spans`` or ``events``; ``args`` its options, e.g.
    ``"--count", "5000", "--owner", "alice"``); what it made (id, path, landmarks). One
    generator process serves a server's sessions (``serve``: Django set up once)."""
    generator = server.generator
    if generator is None or generator.poll() is not None:
        log = server.log.with_name("ui_sessions.log").open("a", encoding="utf-8")
        generator = server.generator = subprocess.Popen(
            [sys.executable, str(GENERATOR), "serve"], cwd=ROOT, env=server.env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True,
        )  # fmt: skip
        log.close()  # the child has its own
    assert generator.stdin is not None and generator.stdout is not None
    generator.stdin.write(json.dumps([what, *args]) + "\n")
    generator.stdin.flush()
    ready, _, _ = select.select([generator.stdout], [], [], GENERATE_TIMEOUT_S)
    line = generator.stdout.readline() if ready else ""
    if not line:
        generator.kill()
        raise ServerError(f"{GENERATOR.name} {what} {' '.join(args)}: no answer (it exited or"
                          f" took over {GENERATE_TIMEOUT_S:.0f} s)")  # fmt: skip
    answer: dict[str, Any] = json.loads(line)
    if "error" in answer:
        raise ServerError(f"{GENERATOR.name} {what} {' '.join(args)} failed:\n{answer['error']}")
    made: dict[str, Any] = answer["made"]
    return made


# ── The browser ────────────────────────────────────────────────────────────────────────────
@dataclass
class Console:
    """What the page said: console errors, uncaught exceptions, CSP violations, failed
    requests."""

    errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    csp: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)

    def on_console(self, message: Any) -> None:
        text = message.text
        if CSP_VIOLATION.search(text):
            self.csp.append(text)
        if message.type == "error":
            self.errors.append(text)

    def problems(self, *, allow_websocket_failures: bool = False) -> list[str]:
        errors = [
            e for e in self.errors
            if not (allow_websocket_failures and WEBSOCKET_FAILURE.search(e))
        ]  # fmt: skip
        return (
            [f"CSP: {t}" for t in self.csp]
            + [f"page error: {t}" for t in self.page_errors]
            + [f"console error: {t}" for t in errors if not CSP_VIOLATION.search(t)]
            + [f"request failed: {t}" for t in self.failed_requests]
        )

    def assert_clean(self, *, allow_websocket_failures: bool = False) -> None:
        problems = self.problems(allow_websocket_failures=allow_websocket_failures)
        assert not problems, "the page reported:\n  " + "\n  ".join(problems)


# Reported to the console by the page itself, so CSP violations are caught even where the
# browser words its own message differently. Playwright's init scripts are not subject to the
# page's CSP.
REPORT_CSP = """
document.addEventListener("securitypolicyviolation", (e) => {
  console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || "inline"}`);
});
"""


def screenshot(browser: Browser, name: str) -> None:
    """Save the page as ``name`` in ``$AGENTDASH_SCREENSHOTS`` when that is set (e.g.
    ``docs/screenshots``); otherwise nothing: a test run leaves the tree as it was."""
    directory = os.environ.get("AGENTDASH_SCREENSHOTS")
    if directory:
        Path(directory).mkdir(parents=True, exist_ok=True)
        browser.page.screenshot(path=str(Path(directory) / name), full_page=False)


@dataclass
class Browser:
    """One fresh Chromium profile (its own user-data-dir) with one page, watched."""

    page: Any
    console: Console
    server: LiveServer

    def goto(self, path: str) -> Any:
        return self.page.goto(f"{self.server.url}{path}")

    def log_in(self, username: str) -> None:
        """Logged in as ``username``, on the home page. The first time on this server
        through the login form; after that with the session cookie that login got (a
        password check costs the server half a second of CPU: PBKDF2's iterations), unless
        that session has ended (a log-out), when it is the form again."""
        home = f"{self.server.url}/"
        cookies = self.server.logins.get(username)
        if cookies:
            self.page.context.add_cookies(cookies)
            self.goto("/")
            if self.page.url == home:
                return
            self.page.context.clear_cookies(name="sessionid")
        self.goto("/login/")
        self.page.fill("#id_username", username)
        self.page.fill("#id_password", self.server.password)
        with self.page.expect_navigation():
            self.page.press("#id_password", "Enter")  # the top bar has forms of its own
        assert self.page.url == home, f"login as {username} failed"
        session = [c for c in self.page.context.cookies() if c["name"] == "sessionid"]
        self.server.logins[username] = session

    def log_out(self) -> None:
        with self.page.expect_navigation():
            self.page.click(".topbar form button[type=submit]")

    def new_chat(self, agent: str = "capital_agent", first: str | None = None) -> str:
        """Click "New chat" for ``agent`` on the home page: its new-chat page, where nothing
        is stored yet (its path is returned). With ``first``, that is sent as the first
        message too (:meth:`send_first`): the session's page then, its path returned. From
        the home page as :meth:`log_in` leaves it, without loading it again (a page load is
        most of what a browser test costs the browser)."""
        if self.page.url != f"{self.server.url}/":
            self.goto("/")
        with self.page.expect_navigation():
            self.page.click(f"form.new-chat button[data-agent='{agent}']")
        path = self.page.url.removeprefix(self.server.url)
        assert path.startswith("/chat/?agent="), path
        return path if first is None else self.send_first(first)

    def send_first(self, text: str) -> str:
        """On a new-chat page, send ``text``: the session starts with it and its page opens;
        that page's path."""
        with self.page.expect_navigation(url=re.compile(r"/sessions/[^/]+/$")):
            self.page.fill("#composer-text", text)
            self.page.press("#composer-text", "Enter")
        path = self.page.url.removeprefix(self.server.url)
        assert re.fullmatch(r"/sessions/[^/]+/", path), path
        return path


def details_drawn(browser: Browser, span_id: str, *, timeout: float) -> Any:
    """Wait until the details pane shows span ``span_id`` with its attributes drawn; the
    pane's locator."""
    page = browser.page
    page.wait_for_function(
        """(id) => {
          const pane = document.querySelector("#span-detail");
          return pane && !pane.hidden && pane.dataset.spanId === id &&
            !!pane.querySelector('table[aria-label="attributes"]');
        }""",
        arg=span_id,
        timeout=timeout,
        polling=POLL_MS,
    )
    return page.locator("#span-detail")


def tree_complete(browser: Browser, total: int, *, timeout: float) -> None:
    """Wait until the timeline holds the session's every span (``total``): a live connection
    says nothing of whether the first page of spans has been drawn yet."""
    browser.page.wait_for_function(
        """(total) => {
          const tree = document.querySelector("#span-tree");
          return tree && tree.dataset.complete === "true" && Number(tree.dataset.spans) === total;
        }""",
        arg=total,
        timeout=timeout,
        polling=POLL_MS,
    )


def switched(browser: Browser, box: Any) -> None:
    """Click the callback switch ``box`` and wait for the server's answer, failing with what
    the page said unless it is "ok" (the page itself asks again while the answer is
    ``unavailable``: a busy database on a loaded machine changed nothing)."""
    page = browser.page
    status = page.locator("#callbacks-status")
    status.evaluate("(s) => { delete s.dataset.kind; }")
    box.evaluate("(input) => input.click()")  # the checkbox is drawn as a track
    page.locator(
        "#callbacks-status[data-kind='ok'], #callbacks-status[data-kind='error']"
    ).wait_for(timeout=60_000)  # ms: a run's turn and a few asks again on a loaded machine
    assert status.get_attribute("data-kind") == "ok", status.inner_text()
