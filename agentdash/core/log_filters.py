"""Logging that stays readable during an outage.

While Redis or the database is away, libraries retry every second and log the same traceback
each time (channels_redis: "Unexpected exception in receive task", ~45 lines a second per
process). :class:`RepeatFilter`, on the console handler, lets the first such record through,
holds back the same one — same logger, same message template, same exception type — for
``window`` seconds, and then lets one through again saying how many it held back.
"""

from __future__ import annotations

import logging
import threading
import time

WINDOW_S = 30.0
MAX_KEYS = 1_000


class RepeatFilter(logging.Filter):
    def __init__(self, window: float = WINDOW_S) -> None:
        super().__init__()
        self.window = window
        self._lock = threading.Lock()
        self._seen: dict[tuple[str, str, str], tuple[float, int]] = {}  # key → (last shown, held)

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[0].__name__ if record.exc_info and record.exc_info[0] else ""
        key = (record.name, str(record.msg), error)
        now = time.monotonic()
        with self._lock:
            shown, held = self._seen.get(key, (0.0, 0))
            if shown and now - shown < self.window:
                self._seen[key] = (shown, held + 1)
                return False
            if len(self._seen) >= MAX_KEYS:
                self._seen.clear()
            self._seen[key] = (now, 0)
        if held:
            record.msg = f"{record.msg} [{held} more like this in the last {self.window:g} s]"
        return True
