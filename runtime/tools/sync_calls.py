"""Synchronous tool functions run off the event loop, many calls per thread hand-over.

A sync tool must not block the loop (in the embedded mode the loop is the web server's), so
it runs on a thread. ``asyncio.to_thread`` hands each call over on its own: a future, a
queue entry and a wake-up of a pool thread, then a wake-up of the loop with the result —
each a turn of the interpreter's lock between threads. A model that asks for a thousand
calls of a quick function in one turn paid that a thousand times over, more than the calls.

Here the calls wait in one queue, and each pool thread takes call after call until none
waits; their outcomes go back to their loops together (one wake-up of a loop for all the
outcomes ready then). A call that blocks (I/O, a sleep) holds one thread: once the next
call has waited ``HELD_UP_S``, another thread takes it, up to ``MAX_THREADS``. Each call
runs in a copy of its caller's context, as with ``asyncio.to_thread`` (its spans are
children of the tool's).
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import os
import threading
import time
from collections.abc import Callable
from typing import Any

MAX_THREADS = min(32, (os.cpu_count() or 1) + 4)
"""Threads at most (``asyncio.to_thread``'s default pool has as many)."""

HELD_UP_S = 0.002
"""A call that has waited this long while every thread is in a call of its own gets another
thread (those calls block: I/O, a sleep); quick calls follow one another on one thread."""

_Call = tuple[
    float,
    asyncio.AbstractEventLoop,
    "asyncio.Future[Any]",
    contextvars.Context,
    Callable[..., Any],
    dict,
]


class SyncCalls:
    """A pool of daemon threads running sync calls for any event loop (see the module)."""

    def __init__(self, max_threads: int = MAX_THREADS, held_up: float = HELD_UP_S) -> None:
        self.max_threads = max_threads
        self.held_up = held_up
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._waiting: collections.deque[_Call] = collections.deque()
        self._threads = 0
        self._idle = 0
        self._checking: set[asyncio.AbstractEventLoop] = set()
        self._done: dict[asyncio.AbstractEventLoop, list[tuple[Any, Any, BaseException | None]]]
        self._done = {}

    @property
    def threads(self) -> int:
        return self._threads

    async def run(self, func: Callable[..., Any], /, **kwargs: Any) -> Any:
        """``func(**kwargs)`` on a pool thread, in a copy of the current context."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        call = (time.monotonic(), loop, future, contextvars.copy_context(), func, kwargs)
        with self._lock:
            first = not self._waiting
            self._waiting.append(call)
            if first:
                self._more()
            check = loop not in self._checking
            if check:
                self._checking = {known for known in self._checking if not known.is_closed()}
                self._checking.add(loop)
        if check:
            loop.call_later(self.held_up, self._check, loop)
        return await future

    def _more(self, *, held_up: bool = False) -> None:
        """Have one more thread take calls (lock held): an idle one; else, when there is
        none or every one is ``held_up`` in a call, a new one."""
        if self._idle:
            self._wake.notify()
        elif (held_up or not self._threads) and self._threads < self.max_threads:
            self._threads += 1
            threading.Thread(target=self._serve, name="runtime-sync-calls", daemon=True).start()

    def _check(self, loop: asyncio.AbstractEventLoop) -> None:
        """On ``loop``, every ``held_up`` while calls wait: the oldest waited that long, so
        every thread is in a call that takes its time — one more thread takes calls."""
        with self._lock:
            if self._waiting and self._waiting[0][0] <= time.monotonic() - self.held_up:
                self._more(held_up=True)
            again = bool(self._waiting)
            if not again:
                self._checking.discard(loop)
        if again:
            loop.call_later(self.held_up, self._check, loop)

    def _serve(self) -> None:
        while True:
            with self._lock:
                while not self._waiting:
                    self._idle += 1
                    self._wake.wait()
                    self._idle -= 1
                _, loop, future, context, func, kwargs = self._waiting.popleft()
            try:
                if future.cancelled() or loop.is_closed():  # nobody waits for it any more
                    outcome: tuple[Any, BaseException | None] = (None, None)
                else:
                    outcome = (context.run(func, **kwargs), None)
            except BaseException as exc:  # the caller gets it, as from to_thread
                outcome = (None, exc)
            with self._lock:
                done = self._done.setdefault(loop, [])
                first = not done
                done.append((future, *outcome))
            if first:
                try:
                    loop.call_soon_threadsafe(self._deliver, loop)
                except RuntimeError:  # the loop closed: nobody waits for these
                    with self._lock:
                        self._done.pop(loop, None)

    def _deliver(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            done = self._done.pop(loop, [])
        for future, result, error in done:
            if future.cancelled():
                continue
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result)


_calls = SyncCalls()


def _forked() -> None:
    """A forked child has none of the parent's threads (a prefork worker pool): a pool of
    its own, or calls would wait for threads that are not there."""
    global _calls
    _calls = SyncCalls()


os.register_at_fork(after_in_child=_forked)


async def run_sync(func: Callable[..., Any], /, **kwargs: Any) -> Any:
    """Run the sync ``func(**kwargs)`` off the loop (see the module docstring)."""
    return await _calls.run(func, **kwargs)
