"""A run's standard output and error, read as they come, kept up to the output limit."""

from __future__ import annotations

import asyncio
import os

__all__ = ["RunOutput"]

CHUNK = 64 * 1024


class RunOutput:
    """Standard output and error, kept up to the limit together; past it, read and dropped
    (a pipe left unread would block its writer)."""

    def __init__(self, limit: int, wake: asyncio.Event) -> None:
        self.limit = limit
        self.wake = wake
        self.kept = {"stdout": bytearray(), "stderr": bytearray()}
        self.total = 0
        self.over = False
        self.open: dict[int, str] = {}

    def watch(self, fd: int, name: str) -> None:
        os.set_blocking(fd, False)
        self.open[fd] = name
        asyncio.get_running_loop().add_reader(fd, self._read, fd)

    def _read(self, fd: int) -> bool | None:
        """Read once: ``True`` if something came, ``False`` at the end, ``None`` if nothing
        is there yet."""
        try:
            chunk = os.read(fd, CHUNK)
        except BlockingIOError:
            return None
        except OSError:
            chunk = b""
        if not chunk:
            self._close(fd)
            return False
        room = self.limit - self.total
        if room > 0:
            self.kept[self.open[fd]] += chunk[:room]
        self.total += len(chunk)
        if self.total > self.limit and not self.over:
            self.over = True
            self.wake.set()
        return True

    def _close(self, fd: int) -> None:
        if self.open.pop(fd, None) is not None:
            asyncio.get_running_loop().remove_reader(fd)

    def drain(self) -> None:
        """Read what is left once the run's processes are gone; should a writer somehow be
        left, what was read is the output."""
        for fd in list(self.open):
            while self._read(fd):
                pass
            self._close(fd)

    def text(self, name: str) -> str:
        return self.kept[name].decode("utf-8", "replace")
