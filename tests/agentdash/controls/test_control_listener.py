"""The control listener on the scale mode's channel layer (``RedisPubSubChannelLayer`` on a
real Redis): it never stops hearing the ``controls`` group — after long silences, after its
subscription is lost, after Redis itself went away and came back — and the database heals
what the layer lost.

The listener runs in this process here, with its periods shortened through its parameters
(the code paths are the production ones); tests/agentdash/runs/test_worker_recovery.py
checks the same in real worker processes. Without Redis a developer's run skips; in CI it
fails.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from channels.layers import get_channel_layer

from agentdash.controls.models import CallbackSetting
from agentdash.controls.switch_broadcast import (
    CONTROLS_GROUP,
    callback_change_publish,
    run_control_listener,
)
from agentdash.controls.switchboard import CallbackSettingChange, DatabaseSwitchboard
from agentdash.runs.supervisor import RUNNING, Backoff, ServiceState, supervise
from tests.agentdash.redis_servers import OwnRedis, shared_redis, use_redis_layer

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

AGENT = "listened_agent"
# How long a switch's message may take before a test gives up: a bound on the wait, not a
# measure (tests assert no timings; the goal, heard within a second, is what the times the
# tests print show: ~1–5 ms here).
PATIENCE = 10.0


class RecordingSwitchboard(DatabaseSwitchboard):
    """The database switchboard, keeping what reached it and how: through a message
    (``applied``) or a reload (``reloads``)."""

    def __init__(self) -> None:
        super().__init__()
        self.applied: list[CallbackSettingChange] = []
        self.reloads = 0

    def apply(self, change: Any) -> None:
        super().apply(change)
        self.applied.append(CallbackSettingChange.from_message(change))

    async def arefresh(self) -> None:
        await super().arefresh()
        self.reloads += 1


@pytest.fixture
def shared_layer(settings: Any) -> None:
    use_redis_layer(settings, shared_redis(db=13))


@pytest.fixture
def own_redis(settings: Any, tmp_path: Path) -> Iterator[OwnRedis]:
    server = OwnRedis(tmp_path / "redis")
    use_redis_layer(settings, server.start())
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def listening() -> AsyncIterator[Callable[..., Awaitable[Any]]]:
    """``await listen(switchboard, **options)``: a listener task, once it is ready."""
    tasks: list[asyncio.Task[None]] = []

    async def listen(switchboard: DatabaseSwitchboard, **options: Any) -> asyncio.Task[None]:
        ready = asyncio.Event()
        task = asyncio.create_task(run_control_listener(switchboard, ready=ready, **options))
        tasks.append(task)
        await asyncio.wait_for(ready.wait(), 30)
        return task

    yield listen
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def until(check: Callable[[], bool], what: str, within: float) -> float:
    """Seconds until ``check()`` holds; fails after ``within``."""
    began = time.monotonic()
    while not check():
        if time.monotonic() - began > within:
            raise AssertionError(f"{what}: not within {within:g} s")
        await asyncio.sleep(0.005)
    return time.monotonic() - began


async def switch_off(callback: str, *, publish: bool = True) -> CallbackSettingChange:
    """What an operator's toggle does: store the switch, then publish it."""
    setting = await CallbackSetting.objects.acreate(
        agent_name=AGENT, callback_name=callback, session=None, enabled=False
    )
    change = CallbackSettingChange.for_setting(setting)
    if publish:
        await callback_change_publish(change)
    return change


def is_off(switchboard: DatabaseSwitchboard, callback: str) -> Callable[[], bool]:
    return lambda: (
        not switchboard.is_enabled(agent_name=AGENT, callback_name=callback, session_id="any")
    )


async def test_after_a_long_silence_a_switch_still_arrives(
    shared_layer: None, listening: Callable[..., Awaitable[asyncio.Task[None]]]
) -> None:
    """Silence used to end the listener: a receive timeout cancelled its pending receive,
    the layer deleted its channel, and re-joining the group raised. Here the silence lasts
    many reload periods (each re-joins the group) and probe periods."""
    switchboard = RecordingSwitchboard()
    task = await listening(switchboard, reload_every=0.1, probe_every=0.1)
    await asyncio.sleep(1.0)
    assert not task.done() and switchboard.reloads >= 5

    change = await switch_off("note_checked")
    took = await until(lambda: change in switchboard.applied, "the switch's message", PATIENCE)
    assert is_off(switchboard, "note_checked")()
    print(f"switch heard {took * 1000:.1f} ms after it was published")


async def test_a_switch_whose_message_was_lost_is_applied_by_the_next_reload(
    shared_layer: None, listening: Callable[..., Awaitable[asyncio.Task[None]]]
) -> None:
    switchboard = RecordingSwitchboard()
    await listening(switchboard, reload_every=0.3, probe_every=60.0)
    await switch_off("lost_in_transit", publish=False)
    await until(is_off(switchboard, "lost_in_transit"), "the reload", 3.0)
    assert switchboard.applied == []


async def test_a_listener_that_stops_hearing_the_group_is_replaced_by_a_new_subscription(
    shared_layer: None,
) -> None:
    switchboard = RecordingSwitchboard()
    state = ServiceState("agentdash.control-listener")
    ready = asyncio.Event()
    service = asyncio.create_task(
        supervise(
            lambda: run_control_listener(
                switchboard, ready=ready, reload_every=600.0, probe_every=0.1, probe_timeout=0.3
            ),
            state,
            backoff=Backoff(first=0.05),
        )
    )
    try:
        await asyncio.wait_for(ready.wait(), 30)
        # The subscription lost behind the listener's back (as a dropped connection whose
        # client did not subscribe again would leave it): it no longer hears the group.
        layer = get_channel_layer()._get_layer()
        group = layer._get_group_channel_name(CONTROLS_GROUP)
        (first,) = layer.groups[group]
        await get_channel_layer().group_discard(CONTROLS_GROUP, first)

        await until(lambda: state.restarts == 1 and state.state == RUNNING, "a restart", 10.0)
        assert state.last_error.startswith("ListenerDeaf: 2 probes")
        await until(lambda: bool(layer.groups.get(group)), "a new subscription", 10.0)
        assert layer.groups[group] != {first}
        change = await switch_off("after_rebuild")
        await until(lambda: change in switchboard.applied, "the switch's message", PATIENCE)
    finally:
        service.cancel()
        await asyncio.gather(service, return_exceptions=True)


async def test_after_a_redis_outage_the_listener_hears_again_and_heals_what_it_missed(
    own_redis: OwnRedis, listening: Callable[..., Awaitable[asyncio.Task[None]]]
) -> None:
    switchboard = RecordingSwitchboard()
    task = await listening(switchboard, reload_every=600.0, probe_every=0.2)
    reloads = switchboard.reloads

    own_redis.stop()
    with pytest.raises(Exception, match=r"(?i)connect"):  # an operator's toggle meanwhile
        await switch_off("during_the_outage")
    await asyncio.sleep(1.0)
    own_redis.start()

    # Heard again (Redis's client subscribes again by itself, within about a second), the
    # listener reloads every switch: the one made during the outage is applied.
    took = await until(is_off(switchboard, "during_the_outage"), "the healing reload", 10.0)
    assert switchboard.reloads == reloads + 1 and not task.done()
    print(f"healed {took:.2f} s after Redis was back")
    change = await switch_off("after_the_outage")
    took = await until(lambda: change in switchboard.applied, "the switch's message", PATIENCE)
    print(f"switch heard {took * 1000:.1f} ms after it was published")


async def test_a_listener_idle_past_the_layers_group_expiry_still_hears_switches(
    settings: Any, listening: Callable[..., Awaitable[asyncio.Task[None]]]
) -> None:
    """Layers forget group members after ``group_expiry`` (a day by default): a listener
    that only waited would stop hearing the group after it. Here the expiry is 0.5 s and the
    listener idles for six of them (its reloads join the group again)."""
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels.layers.InMemoryChannelLayer",
            "CONFIG": {"group_expiry": 0.5, "expiry": 60},
        }
    }
    switchboard = RecordingSwitchboard()
    task = await listening(switchboard, reload_every=0.2, probe_every=0.3)
    await asyncio.sleep(3.0)
    assert not task.done()
    change = await switch_off("expiry_checked")
    took = await until(is_off(switchboard, "expiry_checked"), "the switch", PATIENCE)
    assert change in switchboard.applied  # by the message, not only by a reload
    print(f"switch heard {took * 1000:.1f} ms after it was published")


async def test_a_listener_cancelled_while_it_probes_always_ends(shared_layer: None) -> None:
    """On Python 3.11 redis-py's socket writes (``asyncio.wait_for``) can swallow a
    cancellation that arrives as a write ends; the probe loop then went on probing, and the
    run host's stop (and this module's teardown) waited for it forever. Cancelled at random
    moments while it probes every 10 ms, the listener ends every time."""
    rng = random.Random(30)
    for attempt in range(40):
        ready = asyncio.Event()
        task = asyncio.create_task(
            run_control_listener(
                DatabaseSwitchboard(), ready=ready, reload_every=0.05, probe_every=0.01
            )
        )
        await asyncio.wait_for(ready.wait(), 30)
        await asyncio.sleep(rng.uniform(0.0, 0.05))
        task.cancel()
        done, _ = await asyncio.wait([task], timeout=30)  # bounds the wait, measures nothing
        assert done, f"cancellation {attempt + 1}: the listener went on"
        assert task.cancelled()
