"""The live pipeline's channel-layer groups: their names, and sending changes to them."""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Sequence
from typing import Any

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
    of each, in order: ``None`` when the layer took it, else the error."""
    sends = [
        layer.group_send(
            session_group(batch.session_id), {"type": "session.changes", "items": batch.items}
        )
        for batch in batches
    ]
    outcomes = await asyncio.gather(*sends, return_exceptions=True)
    return [outcome if isinstance(outcome, BaseException) else None for outcome in outcomes]
