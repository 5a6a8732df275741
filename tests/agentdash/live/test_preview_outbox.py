"""The previews' sender (``live.previews.Outbox``): one publish at a time, in the order put;
what is put while one is in flight goes with the next, one message per group, its pages in
order; ``drained`` returns once everything put is out; a failed publish loses only itself."""

from __future__ import annotations

import asyncio
from typing import Any

from agentdash.live.layer_send import GroupMessage
from agentdash.live.previews import Outbox


class Layer:
    """Records what each publish carried; holds a publish open until the test lets it go."""

    def __init__(self) -> None:
        self.published: list[list[GroupMessage]] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.gate = asyncio.Event()
        self.fail_next = False

    async def publish(self, messages: list[GroupMessage]) -> None:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await self.gate.wait()
            if self.fail_next:
                self.fail_next = False
                raise ConnectionError("the layer went away")
            self.published.append(messages)
        finally:
            self.in_flight -= 1


def spans(group: str, *pages: str) -> GroupMessage:
    message: dict[str, Any] = {"type": "session.spans", "pages": list(pages)}
    return (group, message)


async def test_what_comes_during_a_publish_goes_next_joined_by_group_in_order() -> None:
    layer = Layer()
    outbox = Outbox(layer.publish)
    outbox.put([spans("a", "a1")])
    await asyncio.sleep(0)  # the first publish is in flight
    outbox.put([spans("b", "b1"), spans("a", "a2")])
    outbox.put([spans("a", "a3", "a4")])
    layer.gate.set()
    await outbox.drained()
    assert layer.published == [
        [spans("a", "a1")],
        [spans("b", "b1"), spans("a", "a2", "a3", "a4")],
    ]
    assert layer.most_in_flight == 1


async def test_drained_waits_for_the_publish_in_flight_and_what_waits_behind_it() -> None:
    layer = Layer()
    outbox = Outbox(layer.publish)
    outbox.put([spans("a", "a1")])
    await asyncio.sleep(0)
    outbox.put([spans("a", "a2")])
    draining = asyncio.create_task(outbox.drained())
    for _ in range(10):  # every task runs as far as it can: the publish is held
        await asyncio.sleep(0)
    assert not draining.done() and layer.published == []
    layer.gate.set()
    await draining
    assert [m[0][1]["pages"] for m in layer.published] == [["a1"], ["a2"]]


async def test_a_failed_publish_loses_only_its_own_messages() -> None:
    layer = Layer()
    layer.fail_next = True
    outbox = Outbox(layer.publish)
    outbox.put([spans("a", "lost")])
    await asyncio.sleep(0)
    outbox.put([spans("a", "kept")])
    layer.gate.set()
    await outbox.drained()
    assert layer.published == [[spans("a", "kept")]]
    outbox.put([spans("b", "later")])  # a new sender takes what comes after
    await outbox.drained()
    assert layer.published[-1] == [spans("b", "later")]


async def test_nothing_put_is_nothing_published() -> None:
    layer = Layer()
    layer.gate.set()
    outbox = Outbox(layer.publish)
    outbox.put([])
    await outbox.drained()
    assert layer.published == []
