"""HTTP requests' own limits, enforced by daphne before a body is buffered.

Twisted (under daphne) reads a request's whole body — into memory or a temporary file —
before daphne hands the request to Django, so a limit checked in a view comes after a
client sent as much as it liked: a 1 GiB POST grew daphne by a gigabyte and left its
temporary files, and only then was it told 401. :func:`http_limits_apply` makes every request
of this process check, as soon as its headers are in:

- the **declared length** against the route's limit (``413`` at once, the body never read),
  and every chunk received against it (a chunked or lying client: ``413`` past the limit);
- an OTLP export with a body and **no** ``Authorization`` header: ``401`` at once (a key's
  validity needs the database: the view checks it);
- and the connection's lines: a request line past Twisted's 16 KB is ``414``, a header line
  (a huge cookie) or all headers past it ``431`` — Twisted dropped the connection unanswered,
  or answered a bare 400.

A body of a declared length up to :data:`IN_MEMORY_BYTES` is kept in memory and handed to
the application whole (:class:`WholeBody`), not through a temporary file in daphne's 8 KB
pieces (Twisted spools a body from 100 KB on to a file, and daphne passes it on one ASGI
message a buffer: an OTLP export of 330 KB was a file made, written and read back, and 41
messages through the event loop).

Limits: the OTLP paths take ``INGEST_MAX_BODY_BYTES``; every other request
``HTTP_MAX_BODY_BYTES`` (forms, uploads of eval sets, JSON). Each refusal closes the
connection (the rest of the body is never read). ``asgi.py`` applies it, so it holds however
daphne is started; a proxy in front should keep its own limits too (docs/DEPLOY.md).
"""

from __future__ import annotations

import io
import json
from typing import Any

from daphne import http_protocol
from twisted.web import http

from agentdash.core.conf import agentdash_setting

__all__ = ["IN_MEMORY_BYTES", "OTLP_PATHS", "WholeBody", "http_limits_apply"]

IN_MEMORY_BYTES = 4 * 1024 * 1024
"""The longest declared body kept in memory (a longer one goes to a temporary file, as
Twisted does)."""

OTLP_PATHS = (b"/v1/traces", b"/api/public/otel/v1/traces")
_REASONS = {
    401: b"Unauthorized",
    413: b"Content Too Large",
    414: b"URI Too Long",
    431: b"Request Header Fields Too Large",
}


def _response(status: int, body: bytes, kind: bytes, extra: bytes = b"") -> bytes:
    return (
        b"HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n"
        % (status, _REASONS[status], kind, len(body))
        + extra
        + b"\r\n"
        + body
    )


def _refusal(status: int, message: str, *, otlp: bool) -> bytes:
    """An answer in the route's terms: a ``google.rpc.Status`` as JSON for OTLP (what its
    exporters read), plain text elsewhere."""
    if otlp:
        code = 16 if status == 401 else 8  # UNAUTHENTICATED, RESOURCE_EXHAUSTED
        body = json.dumps({"code": code, "message": message}).encode()
        extra = b'WWW-Authenticate: Bearer realm="agentdash ingest"\r\n' if status == 401 else b""
        return _response(status, body, b"application/json", extra)
    return _response(status, f"{message}\n".encode(), b"text/plain; charset=utf-8")


class WholeBody(io.BytesIO):
    """A request body in memory that daphne reads whole: ``read`` gives all that is left
    whatever size it asks for (daphne asks for its buffer's size, and sends the application
    one message a read)."""

    def read(self, size: int | None = -1) -> bytes:
        return super().read()


class LimitedRequest(http_protocol.WebRequest):
    """daphne's request, refusing what it must not read (see the module docstring)."""

    refused = False
    otlp = False
    limit = 0
    received = 0

    def gotLength(self, length: int | None) -> None:
        path = (getattr(self.channel, "_path", b"") or b"").split(b"?", 1)[0]
        otlp = path in OTLP_PATHS
        self.limit = int(
            agentdash_setting("INGEST_MAX_BODY_BYTES" if otlp else "HTTP_MAX_BODY_BYTES")
        )
        has_body = length is None or length > 0
        if otlp and has_body and not self.requestHeaders.hasHeader(b"authorization"):
            self.refuse(401, "no ingest key: send 'Authorization: Bearer <ingest key>'", otlp)
            return
        if length is not None and length > self.limit:
            self.refuse(413, f"the body is larger than {self.limit} bytes", otlp)
            return
        self.otlp = otlp
        if length is not None and length <= IN_MEMORY_BYTES:
            self.content: Any = WholeBody()
        else:
            super().gotLength(length)

    def handleContentChunk(self, data: bytes) -> None:
        if self.refused:
            return
        self.received += len(data)
        if self.received > self.limit:
            self.refuse(413, f"the body is larger than {self.limit} bytes", self.otlp)
            return
        super().handleContentChunk(data)

    def requestReceived(self, command: bytes, path: bytes, version: bytes) -> None:
        if self.refused:
            return  # answered already: the application never sees it
        super().requestReceived(command, path, version)

    def refuse(self, status: int, message: str, otlp: bool) -> None:
        self.refused = True
        self.content = None
        channel = self.channel
        if channel is not None and channel.transport is not None:
            channel.transport.write(_refusal(status, message, otlp=otlp))
            channel.loseConnection()


def _line_too_long(self: Any, line: bytes) -> None:
    """A line past Twisted's limit: the request line (414) or a header line (431)."""
    first = getattr(self, "_HTTPChannel__first_line", 0)
    status, what = (414, "request line") if first else (431, "header")
    self.transport.write(_refusal(status, f"the {what} is too long", otlp=False))
    self.loseConnection()


def _bad_request(self: Any) -> None:
    """Twisted's bare 400, or 431 when it is the headers' total size that is over."""
    if getattr(self, "_receivedHeaderSize", 0) > getattr(self, "totalHeadersSize", 1 << 62):
        self.transport.write(_refusal(431, "the headers are too large", otlp=False))
        self.loseConnection()
        return
    _original_bad_request(self)


_original_bad_request = http.HTTPChannel._respondToBadRequestAndDisconnect

# Methods of Twisted's channel replaced in place: daphne makes the channels, from that class.
_CHANNEL_PATCHES = {
    "lineLengthExceeded": _line_too_long,
    "_respondToBadRequestAndDisconnect": _bad_request,
}


def http_limits_apply() -> None:
    """Make this process's daphne refuse oversized bodies and lines at once (see the module
    docstring). Idempotent; daphne builds each connection's request with the class set here."""
    http_protocol.WebRequest = LimitedRequest
    for name, method in _CHANNEL_PATCHES.items():
        setattr(http.HTTPChannel, name, method)
