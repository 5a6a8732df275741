"""An event loop of its own, run by a daemon thread: for work that must not wait behind the
coroutines of the loop it would otherwise share (Celery worker processes have no loop; the
live pipeline's publishing must not queue behind agents running flat out)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def call_on_loop(loop: asyncio.AbstractEventLoop | None, call: Callable[[], None]) -> None:
    """``call()`` on ``loop`` from any thread: at once when running on it, else as soon as the
    loop gets to it; nothing when there is no loop or it is closed (or closes meanwhile)."""
    if loop is None or loop.is_closed():
        return
    if asyncio._get_running_loop() is loop:
        call()
        return
    with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
        loop.call_soon_threadsafe(call)


class LoopThread:
    """A new event loop, running in a daemon thread named ``name`` from construction until
    :meth:`stop` (which closes it)."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            self.loop.close()

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float) -> T:
        """Run ``coroutine`` on the loop and return its result (from another thread)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def stop(self, timeout: float) -> None:
        """Stop the loop and wait for the thread to end (from another thread)."""
        if not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout)
