"""Callback switches broadcast to every process over the channel layer (group ``controls``).

Whoever changes a switch publishes it with :func:`callback_change_publish`; each process that
runs agents keeps its ``DatabaseSwitchboard`` current with :func:`run_control_listener` (the
run host starts it, and starts it again whenever it stops), so a toggle reaches a running
agent at its next callback point. The database stays the truth: the listener reloads every
switch when it starts (after subscribing, so nothing falls between), every
``CONTROLS_RELOAD_S`` seconds, and as soon as it hears the group again after losing it —
which heals a message the layer lost (Redis forgets what it published while a subscriber was
disconnected).

Two rules keep it alive whatever the layer does:

- a pending ``receive`` is never cancelled (``RedisPubSubChannelLayer`` takes a cancelled
  receive for the consumer leaving and deletes the channel), so there is no receive timeout:
  one task receives for as long as the listener lives;
- a probe — a message to the ``controls`` group that this listener must hear back within
  ``PROBE_TIMEOUT_S`` — goes out every ``CONTROLS_PROBE_S`` seconds. While the layer cannot
  be reached, it is retried every ``RETRY_S`` (Redis's client subscribes again by itself
  when it reconnects); once heard again, every switch is reloaded. Probes sent but not
  heard back ``DEAF_PROBES`` times in a row end the listener with :class:`ListenerDeaf`, and
  the run host's supervisor starts a new one (a new channel, subscribed afresh).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from typing import Any, Protocol, cast

from channels.layers import BaseChannelLayer, get_channel_layer

from agentdash.controls import breakpoint_watch
from agentdash.controls.switchboard import CallbackSettingChange, DatabaseSwitchboard
from agentdash.core.conf import agentdash_setting
from agentdash.core.tasks import cancellation_kept, tasks_ended

CONTROLS_GROUP = "controls"
MESSAGE_TYPE = "callback.changed"
BREAKPOINTS_TYPE = "breakpoints.changed"
PROBE_TYPE = "controls.probe"
PROBE_TIMEOUT_S = 3.0
RETRY_S = 0.5
DEAF_PROBES = 2
LEAVE_TIMEOUT_S = 2.0
HEARD = "heard"
DEAF = "sent, but not heard back"

logger = logging.getLogger(__name__)


class ListenerDeaf(Exception):
    """Messages to the ``controls`` group no longer reach this listener's channel."""


class _NamingLayer(Protocol):
    """A layer that names a new channel with a prefix of ours: every layer the settings
    configure does (Channels' in-memory one, channels_redis's two); Channels' base class
    declares ``new_channel`` without it."""

    async def new_channel(self, prefix: str = ...) -> str: ...


async def callback_change_publish(
    change: CallbackSettingChange, *, channel_layer_alias: str = "default"
) -> None:
    """Send one switch change to every process's listener."""
    layer = get_channel_layer(channel_layer_alias)
    assert layer is not None  # the settings always configure one
    await layer.group_send(CONTROLS_GROUP, {"type": MESSAGE_TYPE, "change": change.as_message()})


async def breakpoints_change_publish(*, channel_layer_alias: str = "default") -> None:
    """Tell every process's listener that a breakpoint changed (its runs read them again:
    ``breakpoint_watch``)."""
    layer = get_channel_layer(channel_layer_alias)
    assert layer is not None  # the settings always configure one
    await layer.group_send(CONTROLS_GROUP, {"type": BREAKPOINTS_TYPE})


async def run_control_listener(
    switchboard: DatabaseSwitchboard,
    *,
    ready: asyncio.Event | None = None,
    reload_every: float | None = None,
    probe_every: float | None = None,
    probe_timeout: float = PROBE_TIMEOUT_S,
    channel_layer_alias: str = "default",
) -> None:
    """Apply every published switch change to ``switchboard`` until cancelled.

    Subscribes a new channel to ``controls``, reloads the switchboard from the database,
    sets ``ready`` (if given), then applies changes as they come while reloading every
    ``reload_every`` seconds (default ``CONTROLS_RELOAD_S``) and probing every
    ``probe_every`` (default ``CONTROLS_PROBE_S``), as the module says. A malformed message
    is logged and skipped; a failed reload is logged and retried at the next period. Raises
    :class:`ListenerDeaf` when it stopped hearing the group while the layer answers, and
    any error of the channel layer while subscribing: run it supervised (the run host
    does), so that a new listener takes over.
    """
    reload_every = reload_every or float(agentdash_setting("CONTROLS_RELOAD_S"))
    probe_every = probe_every or float(agentdash_setting("CONTROLS_PROBE_S"))
    layer = get_channel_layer(channel_layer_alias)
    assert layer is not None  # the settings always configure one
    channel = await cast(_NamingLayer, layer).new_channel("controls.")
    listener = _Listener(layer, channel, switchboard)
    receiver: asyncio.Task[None] | None = None
    others: list[asyncio.Task[None]] = []
    try:
        await layer.group_add(CONTROLS_GROUP, channel)
        await _refresh(switchboard)
        cancellation_kept()  # a stop the layer's calls swallowed: no tasks started for it
        receiver = asyncio.create_task(listener.receive_forever(), name="controls-receive")
        others = [
            asyncio.create_task(listener.reload_forever(reload_every), name="controls-reload"),
            asyncio.create_task(
                listener.probe_forever(probe_every, probe_timeout), name="controls-probe"
            ),
        ]
        breakpoint_watch.listener_hearing(listener, True)
        if ready is not None:
            ready.set()
        done, _ = await asyncio.wait([receiver, *others], return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            task.result()  # its error is ours
        raise RuntimeError("a task of the control listener returned")
    finally:
        breakpoint_watch.listener_hearing(listener, False)
        await tasks_ended(others)
        with contextlib.suppress(Exception):
            async with asyncio.timeout(LEAVE_TIMEOUT_S):
                await asyncio.shield(layer.group_discard(CONTROLS_GROUP, channel))
        if receiver is not None:
            await tasks_ended([receiver])  # the one cancelled receive: we leave this channel


class _Listener:
    """One subscription's tasks: receive, reload, probe."""

    def __init__(
        self, layer: BaseChannelLayer, channel: str, switchboard: DatabaseSwitchboard
    ) -> None:
        self.layer, self.channel, self.switchboard = layer, channel, switchboard
        self.probes: dict[str, asyncio.Future[None]] = {}

    async def receive_forever(self) -> None:
        while True:
            message = await self.layer.receive(self.channel)
            cancellation_kept()
            if message.get("type") == PROBE_TYPE:
                waiter = self.probes.get(str(message.get("nonce")))
                if waiter is not None and not waiter.done():
                    waiter.set_result(None)
                continue  # another listener's probe, or one heard too late
            if message.get("type") == BREAKPOINTS_TYPE:
                breakpoint_watch.breakpoints_changed()
                continue
            _apply(self.switchboard, message)

    async def reload_forever(self, every: float) -> None:
        while True:
            await asyncio.sleep(every)
            # Group memberships of some layers expire (the in-memory layer's after a day):
            # joining again renews it; with Redis it costs nothing (already subscribed).
            await self.layer.group_add(CONTROLS_GROUP, self.channel)
            await _refresh(self.switchboard)
            cancellation_kept()
            breakpoint_watch.breakpoints_changed()  # an edit that announced nothing

    async def probe_forever(self, every: float, timeout: float) -> None:
        loop = asyncio.get_running_loop()
        lost_at: float | None = None
        deaf = 0
        while True:
            await asyncio.sleep(every if lost_at is None else RETRY_S)
            # While the layer is away, short probes: a send stuck in the client's retries
            # must not keep the listener from noticing that it is back.
            outcome = await self._probe(timeout if lost_at is None else min(timeout, RETRY_S * 2))
            cancellation_kept()  # redis-py's writes can swallow one (core/tasks.py)
            if outcome == HEARD:
                if lost_at is not None:
                    logger.warning(
                        "control listener: hearing the controls group again after %.1f s; "
                        "reloading every switch",
                        loop.time() - lost_at,
                    )
                    await _refresh(self.switchboard)
                    breakpoint_watch.listener_hearing(self, True)
                lost_at, deaf = None, 0
                continue
            if lost_at is None:
                lost_at = loop.time()
                breakpoint_watch.listener_hearing(self, False)  # runs read breakpoints each step
                logger.warning(
                    "control listener: probe %s; switch changes are missed until it is "
                    "heard again (then every switch is reloaded)",
                    outcome,
                )
            deaf = deaf + 1 if outcome == DEAF else 0
            if deaf >= DEAF_PROBES:
                raise ListenerDeaf(
                    f"{deaf} probes sent to the {CONTROLS_GROUP!r} group were not heard back "
                    f"within {timeout:g} s"
                )

    async def _probe(self, timeout: float) -> str:
        # asyncio.timeout, never asyncio.wait_for (tests/test_no_wait_for.py): on Python 3.11,
        # wait_for returns the result when a cancellation arrives as the awaited call ends,
        # and this loop, cancelled so, probed on forever (a test's teardown hung 15 min).
        nonce = uuid.uuid4().hex
        heard = self.probes[nonce] = asyncio.get_running_loop().create_future()
        try:
            try:
                probe = {"type": PROBE_TYPE, "nonce": nonce}
                async with asyncio.timeout(timeout):
                    await self.layer.group_send(CONTROLS_GROUP, probe)
            except Exception as exc:
                return f"failed: the channel layer is unreachable ({type(exc).__name__}: {exc})"
            try:
                async with asyncio.timeout(timeout):
                    await heard  # our own future: safe to cancel
            except TimeoutError:
                return DEAF
            return HEARD
        finally:
            del self.probes[nonce]


def _apply(switchboard: DatabaseSwitchboard, message: dict[str, Any]) -> None:
    if message.get("type") != MESSAGE_TYPE:
        return
    try:
        switchboard.apply(message.get("change") or {})
    except ValueError:
        logger.warning("control listener: ignored a malformed change: %r", message)
        return
    logger.info("control listener: applied %r", message.get("change"))


async def _refresh(switchboard: DatabaseSwitchboard) -> None:
    try:
        await switchboard.arefresh()
    except Exception:
        logger.exception("control listener: reloading the callback switches failed")
