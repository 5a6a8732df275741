"""A committed switch change, told to every process's control listener.

``callback_setting_set`` and ``callback_setting_clear`` call :func:`switch_announce_on_commit`,
so every way of changing a switch — the socket's ``callback.toggle``, the admin's forms and
actions, code — reaches running agents within a second, not at the listeners' next reload.

What goes out is the switch **as the database has it when it is sent**, never a snapshot
taken earlier: a send that failed (the channel layer away) is retried in the background for
up to ``ANNOUNCE_RETRY_S`` with the state read afresh each time, so a late retry can never
undo a newer change. What a retry cannot deliver the listeners heal by themselves: each
reloads every switch when it hears the layer again and every ``CONTROLS_RELOAD_S``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import Future

from asgiref.sync import SyncToAsync, async_to_sync
from django.db import transaction

from agentdash.controls.models import CallbackSetting
from agentdash.controls.selectors import SettingKey
from agentdash.controls.switch_broadcast import callback_change_publish
from agentdash.controls.switchboard import CallbackSettingChange
from agentdash.core.threads import in_worker_thread

logger = logging.getLogger(__name__)

ANNOUNCE_RETRY_S = 60.0
FIRST_PAUSE_S = 0.5
MAX_PAUSE_S = 10.0

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
    background. Never raises.

    Called from a thread an event loop handed work to (a socket's ``callback.toggle`` runs
    its write in a pool thread), the send is handed back to that loop and not waited for:
    the loop's channel layer is the one its listener hears, and the write's answer must not
    hang on a publish (a blocking ``async_to_sync`` there left toggles unanswered)."""
    try:
        change = switch_current(key)
        loop = getattr(SyncToAsync.threadlocal, "main_event_loop", None)
        if loop is not None and loop.is_running():
            future = asyncio.run_coroutine_threadsafe(_publish_or_retry(key, change), loop)
            with _pending_lock:
                _pending.add(future)
            future.add_done_callback(_forget)
            return
        async_to_sync(callback_change_publish)(change)
    except Exception as exc:
        logger.warning("switch %s not announced (%s); retrying in the background", key, exc)
        _retry_later(key)


async def _publish_or_retry(key: SettingKey, change: CallbackSettingChange) -> None:
    try:
        await callback_change_publish(change)
    except Exception as exc:
        logger.warning("switch %s not announced (%s); retrying in the background", key, exc)
        await _announce_later(key)


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


async def _announce_later(key: SettingKey) -> None:
    read = in_worker_thread(switch_current)
    pause, waited = FIRST_PAUSE_S, 0.0
    while waited < ANNOUNCE_RETRY_S:
        await asyncio.sleep(pause)
        waited += pause
        try:
            await callback_change_publish(await read(key))
        except Exception:
            pause = min(pause * 2, MAX_PAUSE_S)
            continue
        logger.info("switch %s announced after %.1f s", key, waited)
        return
    logger.error(
        "switch %s still not announced after %.0f s; listeners pick it up at their next "
        "reload from the database",
        key,
        waited,
    )


def _retry_later(key: SettingKey) -> None:
    """Retry on the event loop that called into this thread (the server's: its channel
    layer is the one its listener hears), else on a loop of its own in a daemon thread."""
    loop = getattr(SyncToAsync.threadlocal, "main_event_loop", None)
    future: Future[None]
    if loop is not None and loop.is_running():
        future = asyncio.run_coroutine_threadsafe(_announce_later(key), loop)
    else:
        future = Future()

        def run() -> None:
            try:
                asyncio.run(_announce_later(key))
                future.set_result(None)
            except BaseException as exc:
                future.set_exception(exc)

        threading.Thread(target=run, name="agentdash-switch-announce", daemon=True).start()
    with _pending_lock:
        _pending.add(future)
    future.add_done_callback(_forget)


def _forget(future: Future[None]) -> None:
    with _pending_lock:
        _pending.discard(future)
