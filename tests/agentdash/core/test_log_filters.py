"""The console's repeat filter: the same record again within the window is held back, and
the next one shown says how many were."""

from __future__ import annotations

import logging
import time

from agentdash.core.log_filters import RepeatFilter


def record(msg: str, name: str = "channels_redis.pubsub") -> logging.LogRecord:
    return logging.LogRecord(name, logging.ERROR, __file__, 1, msg, None, None)


def test_repeats_are_held_back_then_counted() -> None:
    repeats = RepeatFilter(window=0.05)
    assert repeats.filter(record("Unexpected exception in receive task"))
    assert not repeats.filter(record("Unexpected exception in receive task"))
    assert not repeats.filter(record("Unexpected exception in receive task"))
    assert repeats.filter(record("something else"))  # another message is shown at once
    assert repeats.filter(record("Unexpected exception in receive task", name="other"))
    time.sleep(0.06)
    again = record("Unexpected exception in receive task")
    assert repeats.filter(again)
    assert again.getMessage().endswith("[2 more like this in the last 0.05 s]")
