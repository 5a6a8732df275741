"""The live socket on the scale mode's channel layer (Redis pub/sub on the project's Redis):
what JSON carries reaches the client even where Redis's encoding cannot (msgpack refuses
integers of 2^64 and more: such a change used to be stored and acknowledged, but never sent
live)."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User

from tests.agentdash.live.conftest import Connect, hello, receive
from tests.agentdash.redis_servers import shared_redis, use_redis_layer
from tests.agentdash.stored import session_of

pytestmark = pytest.mark.django_db(transaction=True)

HUGE = 10**30


@pytest.fixture
def redis_layer(settings: Any) -> None:
    use_redis_layer(settings, shared_redis(db=12))


async def test_a_change_with_a_huge_integer_reaches_the_socket(
    redis_layer: None, connect: Connect, operator_user: User
) -> None:
    session = await sync_to_async(session_of)(None, "s-huge")
    socket = await connect(operator_user, session.id)
    assert await hello(socket) == ([], 0)
    edit = {"type": "state.edit", "delta": {"big": HUGE}, "expected_version": 0, "reason": "x"}
    await socket.send_json_to(edit)
    seen: list[dict[str, Any]] = []
    while not any(m["type"] == "changes" for m in seen):
        seen.append(await receive(socket))  # the ack and the change, in either order
    assert "ack" in {m["type"] for m in seen}
    (event,) = [i["data"] for m in seen if m["type"] == "changes" for i in m["items"]]
    assert event["state_delta"] == {"big": HUGE}
