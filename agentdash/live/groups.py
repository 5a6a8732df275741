"""The live pipeline's channel-layer groups: their names, and sending changes to them."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any

from agentdash.changes.items import Item
from agentdash.core.outages import error_chain
from agentdash.live.flush_writer import Batch

_SAFE_GROUP = re.compile(r"[A-Za-z0-9_.-]{1,90}")


def session_group(session_id: str) -> str:
    """The channel-layer group of a session's live clients. Group names allow only ASCII
    letters, digits, ``-_.`` and under 100 characters; other ids are hashed."""
    if _SAFE_GROUP.fullmatch(session_id):
        return f"session.{session_id}"
    return "session-sha." + hashlib.sha256(session_id.encode()).hexdigest()[:40]


async def changes_send(layer: Any, batches: Sequence[Batch]) -> list[BaseException | None]:
    """Send each batch to its session's group as one ``session.changes`` message, all at
    once (over a network layer each would otherwise wait for the one before); the outcome
    of each, in order: ``None`` when the layer took it, else the error.

    A batch the layer cannot *encode* (Redis's msgpack refuses integers of 2^64 and more,
    which JSON carries) goes again as JSON text (``items_json``), which every layer takes;
    the consumer reads either."""
    sends = [layer.group_send(session_group(b.session_id), _message(b.items)) for b in batches]
    outcomes = await asyncio.gather(*sends, return_exceptions=True)
    found: list[BaseException | None] = []
    for batch, outcome in zip(batches, outcomes, strict=True):
        if isinstance(outcome, BaseException) and not layer_unreachable(outcome):
            message = {"type": "session.changes", "items_json": json.dumps(batch.items)}
            try:
                await layer.group_send(session_group(batch.session_id), message)
                outcome = None
            except Exception as exc:
                outcome = exc
        found.append(outcome if isinstance(outcome, BaseException) else None)
    return found


def changes_items(event: dict[str, Any]) -> list[Item]:
    """The change items of a ``session.changes`` message, as sent either way."""
    if "items_json" in event:
        items: list[Item] = json.loads(event["items_json"])
        return items
    return list(event.get("items", []))


def layer_unreachable(error: BaseException) -> bool:
    """Whether ``error``, or what it was raised from, is a connection to the channel layer
    (Redis) that failed — refused, reset, timed out — rather than a message it refused."""
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError

    failed = (OSError, RedisConnectionError, RedisTimeoutError)
    return any(isinstance(found, failed) for found in error_chain(error))


def _message(items: list[Item]) -> dict[str, Any]:
    return {"type": "session.changes", "items": items}
