"""Django's ASGI handler, with a request's middleware and view run in one go on a thread kept
for requests.

Django's own handler builds the middleware chain for an event loop: every middleware that
can run either way (all of Django's) runs as a coroutine, and calls each of its sync hooks
(``process_request``, ``process_view``, ``process_response``) through ``sync_to_async`` — a
trip from the loop to the request's thread and back, each with its wake-ups and hand-overs of
the interpreter lock; a sync-only middleware between them turns the chain back the other way
(``async_to_sync``). With this project's eleven middlewares and a sync view, one request made
about twenty such trips (a one-span OTLP export: ~27 turns of the event loop).

Here the chain is built as for WSGI — sync from the first middleware to the view — and called
once through ``sync_to_async``: one trip a request (with the request-started signal's and the
response's close, three). An async view still works: Django's sync path runs it on the event
loop with ``async_to_sync`` (one trip more, for that view only). The request's body, the
response's streaming and the request-finished signal are the stock handler's.

Django gives each request a thread of its own (``ThreadSensitiveContext``), made and ended
with it (~0.2 ms). Here the thread is kept for a later request once the request is done with
it — never while code of the last request still runs on it (then it ends when that code does,
as Django's would).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.core.handlers.asgi import ASGIHandler

IDLE_THREADS = 16
"""Request threads kept idle at most (more requests at once start threads of their own)."""


class RequestThread(ThreadPoolExecutor):
    """One thread for one request at a time, which knows when no work of it is left."""

    def __init__(self) -> None:
        super().__init__(max_workers=1, thread_name_prefix="agentdash-request")
        self._guard = threading.Lock()
        self._running = 0

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        with self._guard:
            self._running += 1
        try:
            future = super().submit(fn, *args, **kwargs)
        except BaseException:
            self._finished(None)
            raise
        future.add_done_callback(self._finished)  # before any waiter's: done when it wakes
        return future

    def _finished(self, _: Future[Any] | None) -> None:
        with self._guard:
            self._running -= 1

    @property
    def idle(self) -> bool:
        with self._guard:
            return self._running == 0


class RequestThreads:
    """The idle request threads of this process."""

    def __init__(self, keep: int = IDLE_THREADS) -> None:
        self._keep = keep
        self._guard = threading.Lock()
        self._idle: list[RequestThread] = []

    def take(self) -> RequestThread:
        with self._guard:
            if self._idle:
                return self._idle.pop()
        return RequestThread()

    def give(self, thread: RequestThread) -> None:
        """Keep ``thread`` for the next request if nothing runs on it; else let it end when
        its work does."""
        if thread.idle:
            with self._guard:
                if len(self._idle) < self._keep:
                    self._idle.append(thread)
                    return
        thread.shutdown(wait=False)

    @property
    def idle_count(self) -> int:
        with self._guard:
            return len(self._idle)


class OneTripASGIHandler(ASGIHandler):
    def __init__(self) -> None:
        super().__init__()
        self.threads = RequestThreads()

    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)
        # Set just now by load_middleware; the type hints Django is checked with omit it.
        chain = self._middleware_chain  # type: ignore[has-type]
        self._middleware_chain = sync_to_async(chain, thread_sensitive=True)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        thread = self.threads.take()
        try:
            async with ThreadSensitiveContext(executor=thread):
                await self.handle(scope, receive, send)
        finally:
            self.threads.give(thread)


def one_trip_asgi_application() -> OneTripASGIHandler:
    """Django set up, and its ASGI application (as ``get_asgi_application``)."""
    import django

    django.setup(set_prefix=False)
    return OneTripASGIHandler()
