"""Callback switches broadcast to every process over the channel layer (group ``controls``).

Whoever changes a switch publishes it with :func:`callback_change_publish`; each process that
runs agents keeps its ``DatabaseSwitchboard`` current with :func:`run_control_listener` (the
run host starts it), so a toggle reaches a running agent at its next callback point. The
database stays the truth: the listener reloads every switch when it starts (after
subscribing, so nothing falls between) and every ``refresh_every`` seconds, which also heals a
message the layer lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from channels.layers import get_channel_layer

from agentdash.controls.switchboard import CallbackSettingChange, DatabaseSwitchboard

CONTROLS_GROUP = "controls"
MESSAGE_TYPE = "callback.changed"
REFRESH_SECONDS = 300.0

logger = logging.getLogger(__name__)


async def callback_change_publish(
    change: CallbackSettingChange, *, channel_layer_alias: str = "default"
) -> None:
    """Send one switch change to every process's listener."""
    layer = get_channel_layer(channel_layer_alias)
    await layer.group_send(CONTROLS_GROUP, {"type": MESSAGE_TYPE, "change": change.as_message()})


async def run_control_listener(
    switchboard: DatabaseSwitchboard,
    *,
    ready: asyncio.Event | None = None,
    refresh_every: float = REFRESH_SECONDS,
    channel_layer_alias: str = "default",
) -> None:
    """Apply every published switch change to ``switchboard`` until cancelled.

    Subscribes a channel to ``controls``, reloads the switchboard from the database, then sets
    ``ready`` (if given) and applies changes as they come; every ``refresh_every`` seconds it
    re-subscribes (group memberships expire) and reloads. Run it as a task in each worker
    process: ``asyncio.create_task(run_control_listener(switchboard))``. A malformed message
    is logged and skipped; a failed reload is retried at the next period.
    """
    layer = get_channel_layer(channel_layer_alias)
    channel = await layer.new_channel("controls.")
    try:
        await layer.group_add(CONTROLS_GROUP, channel)
        await _refresh(switchboard)
        if ready is not None:
            ready.set()
        while True:
            try:
                message = await asyncio.wait_for(layer.receive(channel), refresh_every)
            except TimeoutError:
                await layer.group_add(CONTROLS_GROUP, channel)
                await _refresh(switchboard)
                continue
            _apply(switchboard, message)
    finally:
        with contextlib.suppress(Exception):
            await asyncio.shield(layer.group_discard(CONTROLS_GROUP, channel))


def _apply(switchboard: DatabaseSwitchboard, message: dict[str, Any]) -> None:
    if message.get("type") != MESSAGE_TYPE:
        return
    try:
        switchboard.apply(message.get("change") or {})
    except ValueError:
        logger.warning("control listener: ignored a malformed change: %r", message)


async def _refresh(switchboard: DatabaseSwitchboard) -> None:
    try:
        await switchboard.arefresh()
    except Exception:
        logger.exception("control listener: reloading the callback switches failed")
