"""Waiting, in sync test code (:func:`until`) or async (:func:`eventually`), for a
condition another thread, task or process makes true (a worker's log, a database lock's
queue): its value once truthy, polled every ``POLL_S``; an ``AssertionError`` naming
``what`` (and ``detail()``: logs, say) after ``timeout`` — which only bounds the wait and
measures nothing."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

POLL_S = 0.05


def until(
    check: Callable[[], Any],
    what: str,
    *,
    timeout: float = 60.0,
    detail: Callable[[], str] = lambda: "",
) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() >= deadline:
            raise AssertionError(f"gave up waiting for {what}\n{detail()}")
        time.sleep(POLL_S)


async def eventually(check: Callable[[], Any], what: str, *, timeout: float = 10.0) -> Any:
    """:func:`until` for async code: ``check`` (sync, or returning an awaitable) polled on
    the running loop, which goes on meanwhile."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if asyncio.iscoroutine(found):
            found = await found
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        await asyncio.sleep(0.01)
