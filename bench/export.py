"""Exports of a big session, timed (docs/BENCHMARKS.md, "Export"; docs/EXPORT.md).

  .venv/bin/python bench/export.py [--spans 50000]

The embedded default as the browser tests' harness starts it (one daphne, an SQLite file, in
a temporary directory), a session of ``--spans`` spans generated through the app's services
(``bench/ui_sessions.py``, as ``make bench-ui``'s), then each download as a browser makes it
— signed in as its owner, over HTTP — and ``manage.py export_session`` for each format.
For each: the time to the first byte and to the last, the size, and memory: the daphne
process's peak resident size (``VmHWM``) before and after the downloads, the command's own
peak. Every OTLP document is read back by protobuf's parser (tests/agentdash/otlp_receiver).
Prints a Markdown table; nothing is written to the docs.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.agentdash.dashboard.browser.harness import (  # noqa: E402
    PASSWORD,
    LiveServer,
    server_start,
    server_stop,
    session_generate,
)
from tests.agentdash.otlp_receiver import otlp_parse, strict_json  # noqa: E402

OWNER = "alice"
CHUNK = 1 << 16


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident set size so far (``VmHWM``), in MB."""
    status = Path(f"/proc/{pid}/status").read_text()
    found = re.search(r"^VmHWM:\s+(\d+) kB", status, re.M)
    return int(found.group(1)) / 1024 if found else float("nan")


def signed_in(server: LiveServer) -> urllib.request.OpenerDirector:
    """An HTTP client signed in as the session's owner through the login form."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    opener.open(f"{server.url}/login/").read()
    token = next(c.value for c in jar if c.name == "csrftoken")
    form = urllib.parse.urlencode(
        {"username": OWNER, "password": PASSWORD, "csrfmiddlewaretoken": token}
    ).encode()
    request = urllib.request.Request(
        f"{server.url}/login/", data=form, headers={"Referer": f"{server.url}/login/"}
    )
    opener.open(request).read()
    return opener


def download(opener: urllib.request.OpenerDirector, url: str) -> dict[str, Any]:
    started = time.perf_counter()
    first = None
    parts = []
    with opener.open(url) as response:
        while chunk := response.read1(CHUNK):
            first = first if first is not None else time.perf_counter() - started
            parts.append(chunk)
    total = time.perf_counter() - started
    return {"first_s": first or total, "total_s": total, "data": b"".join(parts)}


# The command reports its own peak (``VmHWM`` of its own memory, at exit): a child's rusage
# would also count the memory of this process at the fork (Linux keeps the high-water mark
# across exec), and this process holds whole documents while it checks them.
PEAK_AT_EXIT = (
    "import atexit, re, runpy, sys\n"
    "def peak():\n"
    "    status = open('/proc/self/status').read()\n"
    "    sys.stderr.write('peak_kb=' + re.search(r'VmHWM:\\s+(\\d+)', status).group(1) + '\\n')\n"
    "atexit.register(peak)\n"
    "sys.argv = ['manage.py', *sys.argv[1:]]\n"
    "runpy.run_path('manage.py', run_name='__main__')\n"
)


def command(server: LiveServer, *args: str) -> dict[str, Any]:
    """``manage.py export_session`` in its own process: wall time and its peak resident
    size."""
    started = time.perf_counter()
    found = subprocess.run(
        [sys.executable, "-c", PEAK_AT_EXIT, "export_session", *args], cwd=ROOT,
        env=server.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    total = time.perf_counter() - started
    if found.returncode != 0 and "there is no session" not in found.stderr:
        raise SystemExit(f"export_session {' '.join(args)} failed: {found.stderr}")
    peak = re.search(r"peak_kb=(\d+)", found.stderr)
    return {"total_s": total, "peak_mb": int(peak.group(1)) / 1024 if peak else float("nan")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=50_000)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentdash-bench-export-") as tmp:
        server = server_start(Path(tmp))
        try:
            made = session_generate(server, "spans", "--count", str(options.spans),
                                    "--owner", OWNER)  # fmt: skip
            rows = measure(server, made, Path(tmp))
        finally:
            server_stop(server)
    print(report(options.spans, rows))


def measure(server: LiveServer, made: dict[str, Any], tmp: Path) -> list[dict[str, Any]]:
    session_id, trace_id = made["session_id"], made["last_span"]["trace_id"]
    base = f"{server.url}/sessions/{session_id}/export"
    opener = signed_in(server)
    rows = []
    for what, path, otlp in (
        ("session JSON", "/session/", False),
        ("all traces, OTLP JSON", "/otlp/", True),
        ("one trace (one run), OTLP JSON", f"/otlp/{trace_id}/", True),
    ):
        before = peak_rss_mb(server.process.pid)
        got = download(opener, base + path)
        after = peak_rss_mb(server.process.pid)
        data = got.pop("data")
        if otlp:
            spans = len(otlp_parse(data).resource_spans[0].scope_spans[0].spans)
        else:
            spans = len(strict_json(data)["spans"])
        rows.append({"what": f"download: {what}", "bytes": len(data), "spans": spans,
                     "peak": f"{before:.0f} → {after:.0f} MB (daphne)", **got})  # fmt: skip
    out = tmp / "export.json"
    for what, args in (
        ("session JSON", ["--format", "session"]),
        ("all traces, OTLP JSON", ["--format", "otlp"]),
        ("a session that is not there (start-up alone)", ["--format", "otlp"]),
    ):
        wanted = "not-there" if "not there" in what else session_id
        out.unlink(missing_ok=True)
        got = command(server, wanted, *args, "-o", str(out))
        rows.append({"what": f"export_session: {what}", "spans": None, "first_s": None,
                     "bytes": out.stat().st_size if out.exists() else 0,
                     "peak": f"{got['peak_mb']:.0f} MB (the command)", **got})  # fmt: skip
    return rows


def report(spans: int, rows: list[dict[str, Any]]) -> str:
    cpu = platform.processor() or platform.machine()
    lines = [
        f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {cpu}, "
        f"{os.cpu_count()} CPUs (load average {os.getloadavg()[0]:.1f}); a session of "
        f"{spans:,} spans (`bench/export.py --spans {spans}`).",
        "",
        "| export | first byte | whole | size | spans read back | peak memory |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        first = f"{row['first_s'] * 1000:.0f} ms" if row["first_s"] is not None else "—"
        read = f"{row['spans']:,}" if row["spans"] is not None else "—"
        lines.append(
            f"| {row['what']} | {first} | {row['total_s']:.1f} s | "
            f"{row['bytes'] / 1e6:.0f} MB | {read} | {row['peak']} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
