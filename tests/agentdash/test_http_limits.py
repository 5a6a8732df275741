"""A real daphne refuses what it must not read: a body longer than its route takes (declared,
or sent chunked), an OTLP body with no key, a request line or headers past Twisted's limits
— answered at once (413, 401, 414, 431), the connection closed, daphne's memory flat."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agentdash.live_harness import Processes, embedded_env, sqlite_prepared

pytestmark = [pytest.mark.slow, pytest.mark.own_servers]

GIB = 1 << 30


@pytest.fixture(scope="module")
def daphne(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, int]]:
    """(port, pid) of a daphne on the embedded default."""
    tmp: Path = tmp_path_factory.mktemp("http-limits")
    env = embedded_env(tmp)
    sqlite_prepared(env, seed=False)
    procs = Processes(tmp)
    try:
        url = procs.daphne("daphne", env)
        yield int(url.rsplit(":", 1)[1]), procs.procs[0][1].pid
    finally:
        procs.stop()


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def exchange(port: int, head: bytes, body: Iterator[bytes] = iter(())) -> bytes:
    """Send ``head`` then ``body`` (while the server lets us); everything it answered."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head)
        try:
            for chunk in body:
                sock.sendall(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused: it closed the connection on us
        answer = b""
        while True:
            try:
                got = sock.recv(65536)
            except ConnectionResetError:
                break
            if not got:
                break
            answer += got
    return answer


def post(path: str, length: int | str, *headers: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", *headers]
    lines.append(
        "Transfer-Encoding: chunked" if length == "chunked" else f"Content-Length: {length}"
    )
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def test_a_declared_gigabyte_is_refused_before_it_is_read(daphne: tuple[int, int]) -> None:
    port, pid = daphne
    before = rss_kb(pid)
    started = time.monotonic()
    for path, headers, expected in [
        ("/v1/traces", ["Content-Type: application/x-protobuf"], 401),  # no key: 401 at once
        (
            "/v1/traces",
            ["Authorization: Bearer agd_x", "Content-Type: application/x-protobuf"],
            413,
        ),
        ("/api/public/otel/v1/traces", ["Authorization: Bearer agd_x"], 413),
        ("/login/", ["Content-Type: application/x-www-form-urlencoded"], 413),
        ("/sessions/s1/rename/", ["Content-Type: application/x-www-form-urlencoded"], 413),
    ]:
        # Declared as a gigabyte, and a megabyte sent of it: the answer comes without the rest.
        answer = exchange(port, post(path, GIB, *headers), iter([b"x" * (1 << 20)]))
        assert status(answer) == expected, (path, answer[:300])
        assert b"Connection: close" in answer
    assert time.monotonic() - started < 60  # not a benchmark: nothing waited for a gigabyte
    assert rss_kb(pid) - before < 64 * 1024


def test_a_chunked_body_is_refused_once_it_passes_the_limit(daphne: tuple[int, int]) -> None:
    port, pid = daphne
    before = rss_kb(pid)
    megabyte = b"100000\r\n" + b"y" * (1 << 20) + b"\r\n"  # one chunk: 0x100000 bytes
    sent = {"chunks": 0}

    def chunks(count: int) -> Iterator[bytes]:
        for _ in range(count):
            sent["chunks"] += 1
            yield megabyte

    otlp = post("/v1/traces", "chunked", "Authorization: Bearer agd_x",
                "Content-Type: application/x-protobuf")  # fmt: skip
    answer = exchange(port, otlp, chunks(256))
    assert status(answer) == 413 and b'"code": 8' in answer
    assert sent["chunks"] < 256  # it stopped reading long before the end
    form = post("/login/", "chunked", "Content-Type: application/x-www-form-urlencoded")
    assert status(exchange(port, form, chunks(64))) == 413
    assert rss_kb(pid) - before < 64 * 1024


def test_long_request_lines_and_headers_are_answered(daphne: tuple[int, int]) -> None:
    port, _ = daphne
    line = f"GET /?q={'a' * 20_000} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    assert status(exchange(port, line)) == 414
    cookie = f"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: c={'b' * 100_000}\r\n\r\n".encode()
    assert status(exchange(port, cookie)) == 431
    many = "".join(f"X-H{i}: {'c' * 200}\r\n" for i in range(100))
    headers = f"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n{many}\r\n".encode()
    assert status(exchange(port, headers)) == 431


def test_requests_within_the_limits_go_on_as_before(daphne: tuple[int, int]) -> None:
    port, _ = daphne
    page = exchange(port, b"GET /login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    assert status(page) == 200
    body = b"\x0a\x00"
    head = post("/v1/traces", len(body), "Authorization: Bearer agd_not_a_key",
                "Content-Type: application/x-protobuf", "Connection: close")  # fmt: skip
    bad_key = exchange(port, head + body)
    assert status(bad_key) == 401  # the view's own answer: the key is checked there
