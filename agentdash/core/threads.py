"""Blocking Django work from async code: one unit of work in a pool thread."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import wraps
from typing import Any, ParamSpec, TypeVar

from asgiref.sync import sync_to_async
from django.db import close_old_connections, connections

P = ParamSpec("P")
R = TypeVar("R")


def in_worker_thread(
    func: Callable[P, R], *, executor: ThreadPoolExecutor | None = None
) -> Callable[P, Any]:
    """``func`` as a coroutine run in a pool thread with its own database connection (a
    thread of the loop's default pool, or of ``executor``).

    Each call is one unit of work, like a request: connections that broke or outlived
    ``CONN_MAX_AGE`` are dropped before and after it, and a statement it left part-way is
    ended (a kept SQLite connection would read its old snapshot in the next unit). A
    transaction never spans an ``await``: every write is one sync function, committed before
    the coroutine resumes.
    """

    @wraps(func)
    def unit_of_work(*args: P.args, **kwargs: P.kwargs) -> R:
        close_old_connections()
        try:
            return func(*args, **kwargs)
        finally:
            _statements_end()
            close_old_connections()

    return sync_to_async(unit_of_work, thread_sensitive=False, executor=executor)


def _statements_end() -> None:
    for connection in connections.all(initialized_only=True):
        end = getattr(connection, "statements_end", None)  # (this project's SQLite backend)
        if end is not None and connection.connection is not None:
            end()


async def thread_pool_close(executor: ThreadPoolExecutor) -> None:
    """Let ``executor``'s threads go, their database connections closed first, each in the
    thread that opened it (a connection is not to be closed from another thread)."""
    await asyncio.wrap_future(executor.submit(connections.close_all))
    executor.shutdown(wait=False)
