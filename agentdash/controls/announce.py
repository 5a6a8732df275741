"""Committed control changes, told to every process's control listener.

**Switches.** ``callback_setting_set`` and ``callback_setting_clear`` call
:func:`switch_announce_on_commit`, so every way of changing a switch — the socket's
``callback.toggle``, the admin's forms and actions, code — reaches running agents within a
second, not at the listeners' next reload. What goes out is the switch **as the database has
it when it is sent**, never a snapshot taken earlier: a send that failed (the channel layer
away) is retried in the background for up to ``ANNOUNCE_RETRY_S`` with the state read afresh
each time, so a late retry can never undo a newer change.

**Breakpoints.** ``breakpoint_add`` and ``breakpoint_remove`` call
:func:`breakpoints_announce_on_commit`: runs keep the breakpoints they read until one may
have changed (``breakpoint_watch``), and this says so — to this process's runs at once, to
the others through their listeners.

What a retry cannot deliver the listeners heal by themselves: each reloads every switch, and
has its runs read their breakpoints again, when it hears the layer again and every
``CONTROLS_RELOAD_S``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future

from asgiref.sync import SyncToAsync, async_to_sync
from django.db import transaction

from agentdash.controls.breakpoint_watch import breakpoints_changed
from agentdash.controls.models import CallbackSetting
from agentdash.controls.selectors import SettingKey
from agentdash.controls.switch_broadcast import breakpoints_change_publish, callback_change_publish
from agentdash.controls.switchboard import CallbackSettingChange
from agentdash.core.threads import in_worker_thread

logger = logging.getLogger(__name__)

ANNOUNCE_RETRY_S = 60.0
FIRST_PAUSE_S = 0.5
MAX_PAUSE_S = 10.0

Publish = Callable[[], Awaitable[None]]

_pending: set[Future[None]] = set()  # retries under way (kept: nothing else references them)
_pending_lock = threading.Lock()


def switch_announce_on_commit(
    *, agent_name: str, callback_name: str, session_id: str | None
) -> None:
    """Announce this switch (see the module docstring) once the current transaction commits
    (at once outside one); never raises."""
    key: SettingKey = (callback_name, agent_name, session_id)
    transaction.on_commit(lambda: switch_announce(key))


def switch_announce(key: SettingKey) -> None:
    """Send the switch ``key`` as stored now to every listener, from sync code in any thread
    (not on a running event loop's thread); a failure is logged and retried in the
    background (each retry reads the switch afresh). Never raises."""
    what = f"switch {key}"
    try:
        change = switch_current(key)
    except Exception as exc:
        logger.warning("%s not announced (%s); retrying in the background", what, exc)
        return _retry_later(what, lambda: _publish_current(key))
    announce(what, lambda: callback_change_publish(change), lambda: _publish_current(key))


def breakpoints_announce_on_commit() -> None:
    """Once the current transaction commits (at once outside one): this process's runs read
    their breakpoints again at their next step, and every other process is told to. Never
    raises."""
    transaction.on_commit(_breakpoints_announce)


def _breakpoints_announce() -> None:
    breakpoints_changed()  # this process's runs, before any message could arrive
    announce("a breakpoint change", breakpoints_change_publish, breakpoints_change_publish)


def announce(what: str, publish: Publish, publish_afresh: Publish) -> None:
    """Run ``publish`` (a send to the ``controls`` group) from sync code; when it fails,
    ``publish_afresh`` is retried in the background for up to ``ANNOUNCE_RETRY_S``.

    Called from a thread an event loop handed work to (a socket's ``callback.toggle`` runs
    its write in a pool thread), the send is handed back to that loop and not waited for:
    the loop's channel layer is the one its listener hears, and the write's answer must not
    hang on a publish (a blocking ``async_to_sync`` there left toggles unanswered)."""
    try:
        loop = getattr(SyncToAsync.threadlocal, "main_event_loop", None)
        if loop is not None and loop.is_running():
            future = asyncio.run_coroutine_threadsafe(
                _publish_or_retry(what, publish, publish_afresh), loop
            )
            _keep(future)
            return
        async_to_sync(_awaited)(publish)
    except Exception as exc:
        logger.warning("%s not announced (%s); retrying in the background", what, exc)
        _retry_later(what, publish_afresh)


async def _awaited(publish: Publish) -> None:
    await publish()


async def _publish_or_retry(what: str, publish: Publish, publish_afresh: Publish) -> None:
    try:
        await publish()
    except Exception as exc:
        logger.warning("%s not announced (%s); retrying in the background", what, exc)
        await _announce_later(what, publish_afresh)


async def _publish_current(key: SettingKey) -> None:
    await callback_change_publish(await in_worker_thread(switch_current)(key))


def switch_current(key: SettingKey) -> CallbackSettingChange:
    """The switch ``key`` (callback, agent, session) as stored: set, or cleared."""
    callback_name, agent_name, session_id = key
    enabled = (
        CallbackSetting.objects.filter(
            agent_name=agent_name, callback_name=callback_name, session_id=session_id
        )
        .values_list("enabled", flat=True)
        .first()
    )
    return CallbackSettingChange(
        agent_name=agent_name, callback_name=callback_name, session_id=session_id, enabled=enabled
    )


def announcing() -> bool:
    """Whether a retry is still under way (for tests and shutdown)."""
    with _pending_lock:
        return any(not future.done() for future in _pending)


async def _announce_later(what: str, publish: Publish) -> None:
    pause, waited = FIRST_PAUSE_S, 0.0
    while waited < ANNOUNCE_RETRY_S:
        await asyncio.sleep(pause)
        waited += pause
        try:
            await publish()
        except Exception:
            pause = min(pause * 2, MAX_PAUSE_S)
            continue
        logger.info("%s announced after %.1f s", what, waited)
        return
    logger.error(
        "%s still not announced after %.0f s; listeners pick it up at their next reload "
        "from the database",
        what,
        waited,
    )


def _retry_later(what: str, publish: Publish) -> None:
    """Retry on the event loop that called into this thread (the server's: its channel
    layer is the one its listener hears), else on a loop of its own in a daemon thread."""
    loop = getattr(SyncToAsync.threadlocal, "main_event_loop", None)
    future: Future[None]
    if loop is not None and loop.is_running():
        future = asyncio.run_coroutine_threadsafe(_announce_later(what, publish), loop)
    else:
        future = Future()

        def run() -> None:
            try:
                asyncio.run(_announce_later(what, publish))
                future.set_result(None)
            except BaseException as exc:
                future.set_exception(exc)

        threading.Thread(target=run, name="agentdash-controls-announce", daemon=True).start()
    _keep(future)


def _keep(future: Future[None]) -> None:
    with _pending_lock:
        _pending.add(future)
    future.add_done_callback(_forget)


def _forget(future: Future[None]) -> None:
    with _pending_lock:
        _pending.discard(future)
