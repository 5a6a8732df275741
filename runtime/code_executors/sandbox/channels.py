"""A run's three channels with its PID 1: FIFOs in the slot's directory on the host (never
seen by the sandbox) — *report* (PID 1 says the interpreter ended), *hold* (the supervisor
says PID 1 may exit) and *code* (the program, which the supervisor writes in as the
interpreter reads it). The gate opens them at fds 3-5 before it becomes bubblewrap; PID 1
closes *report* and *hold* for the interpreter, whose standard input is *code*: a pipe,
which holds nothing on the host's disk and which the code cannot turn into a file. The
FIFOs belong to the worker, with the slot's group: the code cannot change them."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

from runtime.code_executors.sandbox.command import CHANNELS

__all__ = ["Channels"]


class Channels:
    """Made by :meth:`open`, removed by :meth:`close`. ``report``, ``hold`` and ``code`` are
    the supervisor's ends, each FIFO opened for reading and writing so that neither side's
    open blocks and none reads as ended before the other side has written."""

    def __init__(self, home: Path, group: int | None) -> None:
        self.home = home
        self.group = group
        self.report = self.hold = self.code = -1

    def path(self, name: str) -> Path:
        return self.home / name

    def open(self) -> None:
        self.clear()
        for name, mode in zip(CHANNELS, (0o660, 0o660, 0o640), strict=True):
            os.mkfifo(self.path(name), mode)
            if self.group is not None:
                os.chown(self.path(name), os.geteuid(), self.group, follow_symlinks=False)
            os.chmod(self.path(name), mode, follow_symlinks=False)
        self.report, self.hold, self.code = (
            os.open(self.path(name), os.O_RDWR | os.O_NONBLOCK) for name in CHANNELS
        )

    async def feed(self, program: bytes) -> None:
        """Write ``program`` into *code* as the interpreter reads it, then close our end: the
        interpreter sees the end of its program. Only once the gate has opened *code*: a FIFO
        that every side has closed drops what it holds."""
        loop = asyncio.get_running_loop()
        ready = asyncio.Event()
        view = memoryview(program)
        loop.add_writer(self.code, ready.set)
        try:
            while view:
                try:
                    view = view[os.write(self.code, view) :]
                except BlockingIOError:
                    ready.clear()
                    await ready.wait()
        finally:
            loop.remove_writer(self.code)
        os.close(self.code)
        self.code = -1

    def release(self) -> None:
        """Let PID 1 exit."""
        if self.hold >= 0:
            with contextlib.suppress(OSError):
                os.write(self.hold, b"done\n")
            os.close(self.hold)
            self.hold = -1

    def clear(self) -> None:
        for name in CHANNELS:
            with contextlib.suppress(FileNotFoundError):
                self.path(name).unlink()

    def close(self) -> None:
        for fd in (self.report, self.hold, self.code):
            if fd >= 0:
                os.close(fd)
        self.report = self.hold = self.code = -1
        self.clear()
