"""Many group messages sent to the channel layer at once: one round trip, not one each.

``channels_redis``'s pub/sub layer publishes a group message under a lock of its shard's
connection, so messages sent "at once" (``asyncio.gather`` of ``group_send``) still go one
after another, each a round trip to Redis that waits its turn for the interpreter in a busy
process: a flush touching 20 sessions spent 20 of them before the last one left. Here the
messages of one call go to each shard in one pipeline of ``PUBLISH`` commands, named and
encoded as the layer itself does (group channel, serializer, encryption). Any other layer,
or a pub/sub layer of a version this does not know, gets its ``group_send`` per message,
all at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

logger = logging.getLogger(__name__)

GroupMessage = tuple[str, dict[str, Any]]
"""A group's name and the message for it."""

_KNOWN_INTERNALS = ("_get_group_channel_name", "_get_shard")
_SHARD_INTERNALS = ("_ensure_redis", "host")


async def groups_send(layer: Any, messages: Sequence[GroupMessage]) -> list[BaseException | None]:
    """Send each ``(group, message)`` of ``messages``; the outcome of each, in order:
    ``None`` when the layer took it, else the error (a message the layer cannot encode
    fails alone; a connection that fails, every message sent over it)."""
    if not messages:
        return []
    loop_layer = _pubsub_loop_layer(layer)
    if loop_layer is None:
        outcomes = await asyncio.gather(
            *(layer.group_send(group, message) for group, message in messages),
            return_exceptions=True,
        )
        return [outcome if isinstance(outcome, BaseException) else None for outcome in outcomes]
    results: list[BaseException | None] = [None] * len(messages)
    by_shard: dict[int, tuple[Any, list[tuple[int, str, bytes]]]] = {}
    for at, (group, message) in enumerate(messages):
        channel = loop_layer._get_group_channel_name(group)
        try:
            data = layer.serialize(message)
        except Exception as exc:  # e.g. msgpack refuses an integer of 2^64 or more
            results[at] = exc
            continue
        shard = loop_layer._get_shard(channel)
        by_shard.setdefault(id(shard), (shard, []))[1].append((at, channel, data))
    sent = await asyncio.gather(
        *(_publish(shard, items) for shard, items in by_shard.values()), return_exceptions=True
    )
    for (_, items), outcome in zip(by_shard.values(), sent, strict=True):
        outcomes = outcome if isinstance(outcome, list) else [outcome] * len(items)
        for (at, _, _), found in zip(items, outcomes, strict=True):
            results[at] = found if isinstance(found, BaseException) else None
    return results


async def _publish(shard: Any, items: list[tuple[int, str, bytes]]) -> list[Any]:
    """``PUBLISH`` each of ``items`` over the shard's client, in one pipeline (not a
    transaction: each message stands alone); a command's error is its outcome."""
    shard._ensure_redis()
    pipe = shard._redis.pipeline(transaction=False)
    for _, channel, data in items:
        pipe.publish(channel, data)
    return list(await pipe.execute(raise_on_error=False))


def _pubsub_loop_layer(layer: Any) -> Any:
    """The running loop's part of a ``channels_redis`` pub/sub layer whose internals are
    the ones this module uses; ``None`` for any other layer."""
    if not any(c.__module__.startswith("channels_redis.") for c in type(layer).__mro__):
        return None  # (not imported for another layer: its first import takes ~0.2 s)
    try:
        from channels_redis.pubsub import RedisPubSubChannelLayer
    except ImportError:  # the embedded default runs without it
        return None
    if not isinstance(layer, RedisPubSubChannelLayer):
        return None
    loop_layer = layer._get_layer()
    shards = getattr(loop_layer, "_shards", None)
    if not all(hasattr(loop_layer, name) for name in _KNOWN_INTERNALS) or not shards:
        _unknown_once()
        return None
    if not all(hasattr(shard, name) for shard in shards for name in _SHARD_INTERNALS):
        _unknown_once()
        return None
    return loop_layer


_warned = False


def _unknown_once() -> None:
    global _warned
    if not _warned:
        _warned = True
        logger.warning(
            "live pipeline: this channels_redis pub/sub layer is not the one known here; "
            "group messages go one group_send at a time"
        )
