"""A real local webhook receiver for the alert tests: an HTTP server on a port of its own,
in a thread, that keeps every post (headers and body exactly as received) and answers with
the statuses it is told, in turn (then 200)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Post:
    path: str
    headers: dict[str, str]  # names in lower case (HTTP's are not case-sensitive)
    body: bytes


@dataclass
class Receiver:
    url: str
    port: int
    posts: list[Post] = field(default_factory=list)
    answers: list[int] = field(default_factory=list)
    got: threading.Condition = field(default_factory=threading.Condition)

    def wait_for(self, count: int, timeout: float = 60.0) -> list[Post]:
        """The posts once there are ``count`` (fails after ``timeout``: it bounds a wait)."""
        with self.got:
            if not self.got.wait_for(lambda: len(self.posts) >= count, timeout):
                raise AssertionError(f"the receiver got {len(self.posts)} posts, not {count}")
            return list(self.posts)


@contextmanager
def receiver_serving(port: int = 0) -> Iterator[Receiver]:
    """A receiver on ``port`` of 127.0.0.1 (0: any free one), until the block ends."""
    found: list[Receiver] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            me = found[0]
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with me.got:
                me.posts.append(
                    Post(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
                status = me.answers.pop(0) if me.answers else 200
                me.got.notify_all()
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    bound = server.server_address[1]
    found.append(Receiver(url=f"http://127.0.0.1:{bound}/hooks/agentdash", port=int(bound)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield found[0]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
