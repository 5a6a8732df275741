"""Group messages sent together (``live.layer_send``): on the scale mode's Redis pub/sub
layer, in one pipeline each (not one locked round trip after another), named and encoded as
the layer's own ``group_send`` does, so its subscribers get them; on any other layer, by its
``group_send``."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.layers import InMemoryChannelLayer
from channels_redis.pubsub import RedisPubSubChannelLayer

from agentdash.live.groups import layer_unreachable
from agentdash.live.layer_send import groups_send
from tests.agentdash.live_harness import free_port
from tests.agentdash.redis_servers import shared_redis


def pubsub_layer(url: str) -> RedisPubSubChannelLayer:
    return RedisPubSubChannelLayer(hosts=[{"address": url}], prefix=f"test{uuid.uuid4().hex[:8]}")


@pytest.fixture
async def layer() -> AsyncIterator[RedisPubSubChannelLayer]:
    found = pubsub_layer(shared_redis(db=12))
    yield found
    await found.flush()


async def member(layer: Any, *groups: str) -> str:
    channel: str = await layer.new_channel()
    for group in groups:
        await layer.group_add(group, channel)
    return channel


async def received(layer: Any, channel: str) -> dict[str, Any]:
    async with asyncio.timeout(5):
        message: dict[str, Any] = await layer.receive(channel)
    return message


async def test_each_group_hears_its_messages_in_the_order_sent(
    layer: RedisPubSubChannelLayer,
) -> None:
    one, two = await member(layer, "g.one"), await member(layer, "g.two")
    both = await member(layer, "g.one", "g.two")
    sent = [
        ("g.one", {"type": "t.a", "n": 1}),
        ("g.two", {"type": "t.b", "n": 2}),
        ("g.one", {"type": "t.a", "n": 3}),
    ]
    assert await groups_send(layer, sent) == [None, None, None]
    assert [(await received(layer, one))["n"] for _ in range(2)] == [1, 3]
    assert (await received(layer, two))["n"] == 2
    assert [(await received(layer, both))["n"] for _ in range(3)] == [1, 2, 3]


async def test_a_message_the_layer_cannot_encode_fails_alone(
    layer: RedisPubSubChannelLayer,
) -> None:
    channel = await member(layer, "g.one")
    sent = [
        ("g.one", {"type": "t.a", "n": 2**70}),  # msgpack refuses integers of 2^64 and more
        ("g.one", {"type": "t.a", "n": "\x00\ud800" * 3}),  # a lone surrogate: refused too
        ("g.one", {"type": "t.a", "n": 1}),
    ]
    outcomes = await groups_send(layer, sent)
    assert [type(o) for o in outcomes] == [OverflowError, UnicodeEncodeError, type(None)]
    assert (await received(layer, channel))["n"] == 1


async def test_messages_go_while_the_layers_own_publishing_waits_on_its_lock(
    layer: RedisPubSubChannelLayer,
) -> None:
    """The layer's ``group_send`` publishes under its shard connection's lock, which a
    subscription under way (a socket joining its group) also holds: behind it, each message
    waited its turn. Sent together, they do not queue behind it."""
    channel = await member(layer, "g.one")
    shard = layer._get_layer()._shards[0]
    async with shard._lock:
        with pytest.raises(TimeoutError):  # what the flusher did before
            async with asyncio.timeout(0.3):
                await layer.group_send("g.one", {"type": "t.a", "n": 0})
        async with asyncio.timeout(5):
            assert await groups_send(layer, [("g.one", {"type": "t.a", "n": 1})]) == [None]
        assert (await received(layer, channel))["n"] == 1


async def test_an_unreachable_redis_fails_every_message_as_unreachable() -> None:
    layer = pubsub_layer(f"redis://127.0.0.1:{free_port()}/0")  # nothing listens there
    try:
        outcomes = await groups_send(layer, [("g.one", {"type": "t.a"}), ("g.two", {"type": "t"})])
    finally:
        await layer.flush()
    assert len(outcomes) == 2
    assert all(isinstance(o, BaseException) and layer_unreachable(o) for o in outcomes)


async def test_another_layer_gets_each_message_by_its_group_send() -> None:
    layer = InMemoryChannelLayer()
    one = await member(layer, "g.one")
    sent = [("g.one", {"type": "t.a", "n": 2**70}), ("g.one", {"type": "t.a", "n": 1})]
    assert await groups_send(layer, sent) == [None, None]
    assert [(await received(layer, one))["n"] for _ in range(2)] == [2**70, 1]
    assert await groups_send(layer, []) == []


@pytest.mark.slow  # a fresh interpreter, Django set up in it
def test_the_embedded_default_sends_without_importing_the_redis_layer() -> None:
    """On the in-memory layer nothing of ``channels_redis`` is imported: its first import
    took ~0.2 s, inside the first flush of an embedded server (its first chat's spans)."""
    code = (
        "import asyncio, sys, django\n"
        "django.setup()\n"
        "from channels.layers import get_channel_layer\n"
        "from agentdash.live.layer_send import groups_send\n"
        "layer = get_channel_layer()\n"
        "sent = asyncio.run(groups_send(layer, [('g.one', {'type': 't.a'})]))\n"
        "print(type(layer).__name__, sent, 'channels_redis' in sys.modules)\n"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "agentdash.settings",
        "DATABASE_URL": "",
        "REDIS_URL": "",
    }
    found = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert found.stdout.split() == ["InMemoryChannelLayer", "[None]", "False"], found.stderr
