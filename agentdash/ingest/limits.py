"""How often one ingest key may send: a token bucket per key, in this process."""

from __future__ import annotations

import threading
import time


class RateLimiter:
    """``rate`` requests per second on average, ``burst`` at once, per key (its prefix, never
    reused: a database may hand a deleted key's id to a new one). ``take``
    answers ``None`` (go on) or the seconds to wait before a request would be taken."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buckets: dict[str, tuple[float, float]] = {}  # key prefix → (tokens, at)

    def take(self, key_id: str, *, rate: float, burst: int) -> float | None:
        if rate <= 0:
            return None
        now = time.monotonic()
        capacity = float(max(burst, 1))
        with self._lock:
            tokens, at = self._buckets.get(key_id, (capacity, now))
            tokens = min(capacity, tokens + (now - at) * rate)
            if tokens >= 1.0:
                self._buckets[key_id] = (tokens - 1.0, now)
                return None
            self._buckets[key_id] = (tokens, now)
            return (1.0 - tokens) / rate

    def forget(self) -> None:
        """Every key starts full again (tests)."""
        with self._lock:
            self._buckets.clear()


limiter = RateLimiter()
sessions_limiter = RateLimiter()  # new sessions per key
