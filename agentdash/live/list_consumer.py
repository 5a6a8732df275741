"""The sessions list's websocket (``ws/sessions/``): which of its user's sessions changed.

Every flush of the live pipeline tells the list group which sessions it published changes
of (``groups.touched_message``). A list page's consumer gathers those ids for
:data:`SessionsListConsumer.window` seconds, keeps the ones its user may see (read fresh:
an operator whose role was taken away hears only their own sessions from then on) and
sends them in one ``sessions.changed`` message; the page then asks the list's rows again
over HTTP (``dashboard:session_rows``), through the same filters as the page. Nothing else
goes over this socket: it names sessions, and the page reads what they show.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.contrib.auth import get_user_model

from agentdash.agent_sessions.selectors import session_list_for_user
from agentdash.core.threads import in_worker_thread
from agentdash.live.consumers import CLOSE_FORBIDDEN
from agentdash.live.groups import SESSIONS_LIST_GROUP, TOUCHED_IDS_MAX
from agentdash.live.protocol import error_message, pong_message

logger = logging.getLogger(__name__)


def sessions_visible(*, user_id: int, session_ids: list[str]) -> tuple[bool, list[str]]:
    """Whether the user is still active, and which of ``session_ids`` they may see."""
    user = get_user_model().objects.filter(pk=user_id, is_active=True).first()
    if user is None:
        return False, []
    found = session_list_for_user(user=user).filter(pk__in=session_ids).values_list("pk", flat=True)
    return True, sorted(found.order_by())


class SessionsListConsumer(AsyncJsonWebsocketConsumer):
    """One sessions list page, told (at most once a ``window``) which sessions changed."""

    window = 1.0

    async def connect(self) -> None:
        self.pending: set[str] = set()
        self.many = False
        self.timer: asyncio.Task[None] | None = None
        self.joined = False
        user = self.scope.get("user")
        await self.accept()  # then close with a code: a refused handshake shows none
        if user is None or not getattr(user, "is_authenticated", False):
            await self.close(code=CLOSE_FORBIDDEN)
            return
        self.user_id = user.pk
        await self.channel_layer.group_add(SESSIONS_LIST_GROUP, self.channel_name)
        self.joined = True
        await self.send_json({"type": "listening"})

    async def disconnect(self, code: int) -> None:
        if self.timer is not None:
            self.timer.cancel()
        if self.joined:
            await self.channel_layer.group_discard(SESSIONS_LIST_GROUP, self.channel_name)
            self.joined = False

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        """A client says nothing here but ``ping`` (answered ``pong``)."""
        if isinstance(content, dict) and content.get("type") == "ping":
            await self.send_json(pong_message())
            return
        await self.send_json(error_message("bad_request", "this socket only listens"))

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any
    ) -> None:
        try:
            await super().receive(text_data=text_data, bytes_data=bytes_data, **kwargs)
        except ValueError:  # not JSON (json.JSONDecodeError is one)
            await self.send_json(error_message("bad_request", "messages are JSON"))

    async def sessions_touched(self, event: dict[str, Any]) -> None:
        if not self.joined:
            return
        if event.get("many"):
            self.many = True
        else:
            ids = event.get("ids") or []
            self.pending.update(i for i in ids if isinstance(i, str))
            if len(self.pending) > TOUCHED_IDS_MAX:
                self.pending.clear()
                self.many = True
        if self.timer is None:
            self.timer = asyncio.create_task(self._tell_later())

    async def _tell_later(self) -> None:
        try:
            await asyncio.sleep(self.window)
            ids, many = sorted(self.pending), self.many
            self.pending, self.many = set(), False
            self.timer = None
            active, visible = await in_worker_thread(sessions_visible)(
                user_id=self.user_id, session_ids=ids
            )
            if not active:
                self.joined = False
                with contextlib.suppress(Exception):
                    await self.channel_layer.group_discard(SESSIONS_LIST_GROUP, self.channel_name)
                await self.close(code=CLOSE_FORBIDDEN)
                return
            if visible or many:
                await self.send_json({"type": "sessions.changed", "ids": visible, "many": many})
        except asyncio.CancelledError:
            raise
        except Exception:  # the database away: the next notice tries again
            self.timer = None
            logger.warning("sessions list: telling a page what changed failed", exc_info=True)
