"""A run's three channels with its PID 1, in the slot's directory on the host (never seen by
the sandbox): the *report* FIFO (PID 1 says the interpreter ended), the *hold* FIFO (the
supervisor says PID 1 may exit) and the program. The gate opens them at fds 3-5 before it
becomes bubblewrap; PID 1 closes them for the interpreter, so the code holds none of them."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from runtime.code_executors.sandbox.command import CHANNELS

__all__ = ["Channels"]


class Channels:
    """Made by :meth:`open`, removed by :meth:`close`; ``report`` and ``hold`` are the
    supervisor's ends (each FIFO opened for reading and writing, so that neither side's
    open blocks and the report never reads as ended before PID 1 wrote)."""

    def __init__(self, home: Path, owner: int | None) -> None:
        self.home = home
        self.owner = owner
        self.report = self.hold = -1

    def path(self, name: str) -> Path:
        return self.home / name

    def open(self, code: bytes) -> None:
        self.clear()
        os.mkfifo(self.path("report"), 0o600)
        os.mkfifo(self.path("hold"), 0o600)
        fd = os.open(self.path("code"), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o400)
        try:
            view = memoryview(code)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        if self.owner is not None:
            for name in CHANNELS:
                os.chown(self.path(name), self.owner, self.owner, follow_symlinks=False)
        self.report = os.open(self.path("report"), os.O_RDWR | os.O_NONBLOCK)
        self.hold = os.open(self.path("hold"), os.O_RDWR | os.O_NONBLOCK)

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
        for fd in (self.report, self.hold):
            if fd >= 0:
                os.close(fd)
        self.report = self.hold = -1
        self.clear()
