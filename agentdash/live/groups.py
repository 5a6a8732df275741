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
    """Send each batch to its session's group as one ``session.changes`` message of its
    encoded pages, all at once (over a network layer each would otherwise wait for the one
    before); the outcome of each, in order: ``None`` when the layer took it, else the error.
    Pages are text, which every layer carries (Redis's msgpack refuses integers of 2^64 and
    more, which JSON carries)."""
    sends = [
        layer.group_send(session_group(b.session_id), {"type": "session.changes", "pages": b.pages})
        for b in batches
    ]
    outcomes = await asyncio.gather(*sends, return_exceptions=True)
    return [outcome if isinstance(outcome, BaseException) else None for outcome in outcomes]


def changes_items(message: dict[str, Any]) -> list[Item]:
    """The change items a ``session.changes`` message carries: its pages' (decoded), else
    its ``items``."""
    pages = message.get("pages")
    if pages:
        return [item for page in pages for item in json.loads(page["text"])["items"]]
    return list(message.get("items") or [])


def layer_unreachable(error: BaseException) -> bool:
    """Whether ``error``, or what it was raised from, is a connection to the channel layer
    (Redis) that failed — refused, reset, timed out — rather than a message it refused."""
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError

    failed = (OSError, RedisConnectionError, RedisTimeoutError)
    return any(isinstance(found, failed) for found in error_chain(error))
