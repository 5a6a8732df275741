"""``agentdash_sockets_open`` (``/metrics``): a socket allowed to see its session counts while
open, one refused does not, and each counts down once when it closes."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from prometheus_client import REGISTRY

from tests.agentdash.live.conftest import Connect, closed_with, hello
from tests.agentdash.stored import session_of

pytestmark = pytest.mark.django_db(transaction=True)


def open_now() -> float:
    found = REGISTRY.get_sample_value("agentdash_sockets_open")  # this process's value
    assert found is not None
    return found


async def test_open_sockets_are_counted_while_open(
    connect: Connect, alice: User, bob: User
) -> None:
    session = await sync_to_async(session_of)(alice, "s-metrics", "capital_agent")
    before = open_now()
    first = await connect(alice, session.id)
    await hello(first)
    second = await connect(alice, session.id)
    await hello(second)
    assert open_now() == before + 2
    refused = await connect(bob, session.id)  # not bob's: accepted, then closed
    assert await closed_with(refused) is not None
    assert open_now() == before + 2
    await first.disconnect()
    assert open_now() == before + 1
    await second.disconnect()
    await refused.disconnect()
    assert open_now() == before
