"""Hostile bytes through the real server: daphne decodes the path (``%ED%A0%80`` becomes
U+FFFD, ``%00`` a NUL), Django's ASGI request decodes the query string strictly and form
bodies leniently; whatever arrives, the answer is a 400 for NUL and never a 500.

Raw HTTP/1.1 over a socket, so that nothing on the client side cleans the bytes first.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agentdash.live_harness import Browserless, Processes, embedded_env, sqlite_prepared

pytestmark = [pytest.mark.slow]

_STATUS = re.compile(rb"^HTTP/1\.[01] (\d{3})")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("hostile-asgi")
    env = embedded_env(tmp)
    sqlite_prepared(env)
    processes = Processes(Path(tmp))
    try:
        yield processes.daphne("daphne", env)
    finally:
        processes.stop()


def raw(url: str, head: bytes, body: bytes = b"", cookie: str = "") -> tuple[int, bytes]:
    """Send ``head`` (request line and headers, without the final blank line) and ``body``
    as they are; the status and the whole answer."""
    host, port = url.removeprefix("http://").split(":")
    extra = f"Host: {host}:{port}\r\nConnection: close\r\n".encode()
    if cookie:
        extra += f"Cookie: {cookie}\r\n".encode()
    if body:
        extra += f"Content-Length: {len(body)}\r\n".encode()
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(head + b"\r\n" + extra + b"\r\n" + body)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    found = _STATUS.match(answer)
    assert found, answer[:300]
    return int(found.group(1)), answer


LOGIN = b"POST /login/ HTTP/1.1\r\n"
TOKEN = b"&csrfmiddlewaretoken=CSRF"  # the test's CSRF token goes in place of CSRF
FORM = b"Content-Type: application/x-www-form-urlencoded"
MULTIPART = b"Content-Type: multipart/form-data; boundary=XyZ"


def multipart(name: str, value: bytes) -> bytes:
    def part(name: bytes, value: bytes) -> bytes:
        return b'--XyZ\r\nContent-Disposition: form-data; name="' + name + b'"\r\n\r\n' + value

    token = part(b"csrfmiddlewaretoken", b"CSRF")
    return b"\r\n".join([token, part(name.encode(), value), b"--XyZ--\r\n"])


CASES = [
    # (what, request head, body, expected status: exact, or None for "not 5xx")
    ("NUL in the path", b"GET /sessions/%00/ HTTP/1.1", b"", 404),
    ("NUL in a query", b"GET /login/?next=%00 HTTP/1.1", b"", 400),
    ("encoded surrogate in the path", b"GET /sessions/%ED%A0%80/ HTTP/1.1", b"", None),
    ("encoded surrogate in a query", b"GET /login/?next=%ED%A0%80 HTTP/1.1", b"", None),
    ("raw surrogate bytes in a query", b"GET /login/?next=\xed\xa0\x80 HTTP/1.1", b"", None),
    ("raw surrogate bytes in the path", b"GET /sessions/\xed\xa0\x80/ HTTP/1.1", b"", None),
    ("raw NUL byte in the path", b"GET /sessions/\x00/ HTTP/1.1", b"", None),
    ("NUL in a form field", LOGIN + FORM, b"username=%00&password=x" + TOKEN, 400),
    ("NUL in a field name", LOGIN + FORM, b"user%00=x" + TOKEN, 400),
    ("raw surrogate bytes in a form", LOGIN + FORM, b"username=\xed\xa0\x80&password=x" + TOKEN,
     None),
    ("NUL in a multipart field", LOGIN + MULTIPART, multipart("username", b"a\x00b"), 400),
    ("surrogate bytes in a multipart field", LOGIN + MULTIPART,
     multipart("username", b"a\xed\xa0\x80b"), None),
]  # fmt: skip


@pytest.mark.parametrize(("what", "head", "body", "expected"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("who", ["anonymous", "alice"])
def test_hostile_bytes_never_make_a_500(
    server: str, who: str, what: str, head: bytes, body: bytes, expected: int | None
) -> None:
    user = Browserless(server)
    if who == "alice":
        user.log_in("alice")
    token = user._csrf("/login/")  # signed in: the page it redirects to has a form too
    status, answer = raw(server, head, body.replace(b"CSRF", token.encode()), user.cookie_header())
    assert status != 403, f"{what}: the request did not pass the CSRF check"
    if expected is None:
        assert status < 500, answer[:500]
    else:
        assert status == expected, answer[:500]
    if status in (400, 404) and (b"Bad request:" in answer or b"Not found:" in answer):
        assert b"Content-Security-Policy:" in answer  # the middleware's answer, headers and all
