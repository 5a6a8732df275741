"""The live pipeline's channel-layer groups: their names, and sending changes to them."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any

from agentdash.changes.items import Item
from agentdash.core.outages import error_chain
from agentdash.live.flush_writer import Batch
from agentdash.live.layer_send import GroupMessage, groups_send

_SAFE_GROUP = re.compile(r"[A-Za-z0-9_.-]{1,90}")

SESSIONS_LIST_GROUP = "sessions.list"
"""The sessions list pages' group: told which sessions changed with each flush
(``sessions.touched``); each page's consumer keeps the ones its user may see."""


def session_group(session_id: str) -> str:
    """The channel-layer group of a session's live clients. Group names allow only ASCII
    letters, digits, ``-_.`` and under 100 characters; other ids are hashed."""
    if _SAFE_GROUP.fullmatch(session_id):
        return f"session.{session_id}"
    return "session-sha." + hashlib.sha256(session_id.encode()).hexdigest()[:40]


async def changes_send(layer: Any, batches: Sequence[Batch]) -> list[BaseException | None]:
    """Send each batch to its session's group as one ``session.changes`` message of its
    encoded pages, all at once (``layer_send``: over Redis, one round trip); the outcome of
    each, in order: ``None`` when the layer took it, else the error. Pages are text, which
    every layer carries (Redis's msgpack refuses integers of 2^64 and more, which JSON
    carries)."""
    messages: list[GroupMessage] = [
        (session_group(b.session_id), {"type": "session.changes", "pages": b.pages})
        for b in batches
    ]
    touched = sorted({b.session_id for b in batches})
    if touched:  # the lists' notice: its outcome is nobody's loss (a list reloads to catch up)
        messages.append((SESSIONS_LIST_GROUP, touched_message(touched)))
    return (await groups_send(layer, messages))[: len(batches)]


TOUCHED_IDS_MAX = 200
"""Ids one ``sessions.touched`` message names; past it, it says ``many`` (and names none)."""


def touched_message(session_ids: Sequence[str]) -> dict[str, Any]:
    """The ``sessions.touched`` message of the sessions list group: the ids, or ``many``."""
    if len(session_ids) > TOUCHED_IDS_MAX:
        return {"type": "sessions.touched", "ids": [], "many": True}
    return {"type": "sessions.touched", "ids": list(session_ids), "many": False}


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
