"""Static files for the embedded default, served on daphne's event loop.

With DEBUG on, daphne serves /static/ itself (as runserver does). Django's own handler sends
every file through a worker thread and back (the view in one, the file's chunks in another),
and the session page fetches some forty modules and stylesheets at once: on a 2-core machine
that queue was the page's longest wait before its first script ran. Here a file is found
through the staticfiles finders once, read once, and kept while its size and modification
time stay the same, so an edit shows on the next reload and a request costs a `stat`.

Every answer says `Cache-Control: no-cache` with an ETag: the browser keeps the file and asks
again on each load; an unchanged file is a bodiless 304.
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
import posixpath
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from email.utils import formatdate
from typing import Any
from urllib.parse import unquote

from django.conf import settings
from django.contrib.staticfiles import finders
from django.core.exceptions import SuspiciousFileOperation

# As Django's ASGIHandler takes them.
Scope = dict[str, Any]
Message = Mapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# Files above this are read for each request and not kept (none of the project's are).
KEEP_AT_MOST = 1 << 20


def security_headers() -> list[tuple[bytes, bytes]]:
    """What Django's SecurityMiddleware adds to the site's responses, from the same settings
    (these answers do not pass through it)."""
    found = []
    if settings.SECURE_CONTENT_TYPE_NOSNIFF:
        found.append((b"x-content-type-options", b"nosniff"))
    if settings.SECURE_REFERRER_POLICY:
        policy = settings.SECURE_REFERRER_POLICY
        text = policy if isinstance(policy, str) else ",".join(policy)
        found.append((b"referrer-policy", text.encode()))
    if settings.SECURE_CROSS_ORIGIN_OPENER_POLICY:
        found.append(
            (b"cross-origin-opener-policy", settings.SECURE_CROSS_ORIGIN_OPENER_POLICY.encode())
        )
    return found


@dataclass(frozen=True)
class StaticFile:
    path: str
    size: int
    mtime_ns: int
    body: bytes
    etag: bytes
    content_type: bytes
    last_modified: bytes


def content_type_of(path: str) -> bytes:
    kind, encoding = mimetypes.guess_type(path)
    if encoding or not kind:
        return b"application/octet-stream"
    if kind.startswith("text/") or kind in ("application/javascript", "application/json"):
        kind = "text/javascript" if kind == "application/javascript" else kind
        return f"{kind}; charset=utf-8".encode()
    return kind.encode()


def relative_path(url_path: str, prefix: str) -> str | None:
    """The file's path below the static root, or None for a path no file can have."""
    relative = unquote(url_path[len(prefix) :])
    if not relative or "\x00" in relative or "\\" in relative:
        return None
    normal = posixpath.normpath(relative).lstrip("/")
    if normal != relative or normal.startswith(".."):
        return None
    return normal


def if_none_match(scope: Scope) -> list[bytes]:
    for name, value in scope.get("headers", []):
        if name.lower() == b"if-none-match":
            return [tag.strip().removeprefix(b"W/") for tag in value.split(b",")]
    return []


class StaticFiles:
    """The ASGI app in front of `application` that answers requests below STATIC_URL."""

    def __init__(self, application: ASGIApp, prefix: str) -> None:
        self.application = application
        self.prefix = prefix if prefix.endswith("/") else prefix + "/"
        self.kept: dict[str, StaticFile] = {}
        self.headers = security_headers()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(self.prefix):
            await self.application(scope, receive, send)
            return
        await self.answer(scope, send)

    def find(self, relative: str) -> StaticFile | None:
        kept = self.kept.get(relative)
        path = kept.path if kept else None
        if path is None:
            try:
                found = finders.find(relative)
            except (SuspiciousFileOperation, ValueError, UnicodeError):
                return None
            if not isinstance(found, str):
                return None
            path = found
        try:
            info = os.stat(path)
        except (OSError, ValueError):
            self.kept.pop(relative, None)
            return None
        if kept and kept.size == info.st_size and kept.mtime_ns == info.st_mtime_ns:
            return kept
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as handle:
            body = handle.read()
        digest = hashlib.blake2b(body, digest_size=12).hexdigest()
        file = StaticFile(
            path=path,
            size=len(body),
            mtime_ns=info.st_mtime_ns,
            body=body,
            etag=f'"{digest}"'.encode(),
            content_type=content_type_of(path),
            last_modified=formatdate(info.st_mtime, usegmt=True).encode(),
        )
        if len(body) <= KEEP_AT_MOST:
            self.kept[relative] = file
        return file

    async def answer(self, scope: Scope, send: Send) -> None:
        method = scope.get("method", "GET")
        if method not in ("GET", "HEAD"):
            await self.respond(send, 405, [(b"allow", b"GET, HEAD")], b"Method not allowed\n")
            return
        relative = relative_path(scope["path"], self.prefix)
        file = self.find(relative) if relative else None
        if file is None:
            await self.respond(send, 404, [], b"Not found\n", head=method == "HEAD")
            return
        headers = [
            (b"content-type", file.content_type),
            (b"etag", file.etag),
            (b"last-modified", file.last_modified),
            (b"cache-control", b"no-cache"),
        ]
        if file.etag in if_none_match(scope):
            await self.respond(send, 304, headers, b"")
            return
        await self.respond(send, 200, headers, file.body, head=method == "HEAD")

    async def respond(
        self,
        send: Send,
        status: int,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        *,
        head: bool = False,
    ) -> None:
        if status != 304:
            headers = [*headers, (b"content-length", str(len(body)).encode())]
        if status >= 400:
            headers = [*headers, (b"content-type", b"text/plain; charset=utf-8")]
        start = {"type": "http.response.start", "status": status, "headers": headers + self.headers}
        await send(start)
        await send({"type": "http.response.body", "body": b"" if head or status == 304 else body})
