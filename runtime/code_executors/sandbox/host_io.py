"""What the supervisor reads and holds of the host: sealed memfds, ``/proc``'s parent and
children of a process, a pipe read to its end, a bounded wait."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

SEALS = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE


def sealed(data: bytes, name: str) -> int:
    """A memfd holding ``data``, sealed against change, at offset 0."""
    fd = os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, SEALS)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def parent_of(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("PPid:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def children_of(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []


async def read_all(fd: int, *, first: bool = False) -> bytes:
    """Everything written to pipe ``fd`` until its writers close it (``first``: as soon as
    something came)."""
    loop = asyncio.get_running_loop()
    ready = asyncio.Event()
    os.set_blocking(fd, False)
    loop.add_reader(fd, ready.set)
    data = b""
    try:
        while True:
            await ready.wait()
            ready.clear()
            try:
                chunk = os.read(fd, 4096)
            except BlockingIOError:
                continue
            if not chunk:
                return data
            data += chunk
            if first:
                return data
    finally:
        loop.remove_reader(fd)


async def within(seconds: float, awaitable: Awaitable[Any]) -> None:
    """Await ``awaitable`` for at most ``seconds``; running out is no error here (the caller
    looks at what happened). ``asyncio.timeout``: it keeps a cancellation that ``wait_for``
    on Python 3.11 can lose."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await awaitable
