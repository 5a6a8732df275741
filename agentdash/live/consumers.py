"""The session websocket (``ws/sessions/<session_id>/``): replay, live changes, and requests.

The consumer parses, checks permission (on connect and again on every message), calls one
service and answers — the protocol is docs/PROTOCOL.md. It keeps, per connection, the last
seq it sent: live batches are deduplicated against it and any gap is filled from the
database before anything newer is sent, so the client gets every change once, in order. Its
database work runs in pool threads (``in_worker_thread``), not on the one thread Channels
keeps for sync code: no consumer's gap fill or request waits behind another consumer's.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from channels.generic.websocket import AsyncJsonWebsocketConsumer

from agentdash.changes.items import Item, items_after
from agentdash.changes.selectors import session_last_seq
from agentdash.controls.switch_broadcast import CONTROLS_GROUP
from agentdash.core.metrics import SOCKETS_OPEN
from agentdash.core.outages import caused_by_outage
from agentdash.core.threads import in_worker_thread
from agentdash.live.access import Access, access_for
from agentdash.live.actions import parse_fields, perform
from agentdash.live.groups import changes_items, session_group
from agentdash.live.pages import MAX_SENT_BYTES, ChangesPage, changes_pages
from agentdash.live.pipeline import live_pipeline
from agentdash.live.protocol import (
    ClientMessage,
    Hello,
    Ping,
    ProtocolError,
    callback_changed_message,
    error_message,
    pong_message,
    read_frame,
    replay_done_message,
    request_ref,
    unavailable_error,
)
from agentdash.runs.executors import executor_start

logger = logging.getLogger(__name__)

CLOSE_FORBIDDEN = 4403
CLOSE_NOT_FOUND = 4404
CLOSE_UNAVAILABLE = 4503
"""The database or the channel layer is away: try again later (1013 would say so, but a
server's websocket library may send only 1000 and 3000–4999)."""
PAGE = 100
"""Change items per message when replaying or filling a gap."""
RECHECK_SECONDS = 30.0
"""A connection that only listens has its access checked again at most this often."""


class TokenBucket:
    """``rate`` requests a second on average, bursts of up to ``burst``."""

    def __init__(self, *, rate: float, burst: int, clock: Callable[[], float]) -> None:
        self.rate, self.burst, self.clock = rate, burst, clock
        self.tokens = float(burst)
        self.stamp = clock()

    def take(self) -> bool:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


class SessionConsumer(AsyncJsonWebsocketConsumer):
    """One client watching (and acting on) one session."""

    rate = 20.0
    burst = 40
    clock: Callable[[], float] = staticmethod(time.monotonic)

    async def connect(self) -> None:
        self.session_id: str = self.scope["url_route"]["kwargs"]["session_id"]
        self.group = session_group(self.session_id)
        self.joined = False
        self.hears_controls = False
        self.live = False
        self.last_seq = 0
        self.bucket = TokenBucket(rate=self.rate, burst=self.burst, clock=self.clock)
        # The database away here: live.outage_guard answers (unavailable, 4503).
        access = self.access = await self._access()
        await self.accept()  # then close with a code: a refused handshake shows none
        if not access.may_see:
            await self.close(code=CLOSE_FORBIDDEN)
            return
        SOCKETS_OPEN.inc()
        self.counted = True
        # daphne has no lifespan: the first client starts the pipeline and the executor (its
        # reaper and control listener recover runs orphaned by a restart before anyone chats).
        live_pipeline().launch()
        await executor_start()

    async def disconnect(self, code: int) -> None:
        if getattr(self, "counted", False):
            SOCKETS_OPEN.dec()
            self.counted = False
        if getattr(self, "joined", False):
            await self.channel_layer.group_discard(self.group, self.channel_name)
        if getattr(self, "hears_controls", False):
            await self.channel_layer.group_discard(CONTROLS_GROUP, self.channel_name)

    # ── Client → server ────────────────────────────────────────────────────────────────────
    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any
    ) -> None:
        if not self.bucket.take():
            await self.send_json(error_message("rate_limited", "too many messages: slow down"))
            return
        req: str | None = None  # the client's id for this request, echoed on its answer
        answer: dict[str, Any] | None
        try:
            fields = read_frame(text_data if text_data is not None else bytes_data)
            req = request_ref(fields)
            answer = await self._serve(parse_fields(fields))
        except ProtocolError as exc:
            answer = exc.as_message()
        except Exception as exc:
            if caused_by_outage(exc):
                # Nothing was changed; the socket stays and the client may send it again.
                logger.warning("session %s: the database is unreachable", self.session_id)
                answer = unavailable_error()
            else:
                logger.exception("session %s: request failed", self.session_id)
                answer = error_message("internal", "the request failed")
        if answer is not None:
            await self.send_json(answer if req is None else {**answer, "req": req})

    async def _serve(self, request: ClientMessage) -> dict[str, Any] | None:
        """The answer to ``request`` (``None``: a replay, sent as it goes)."""
        access = await self._access()
        if not access.may_see:
            await self.send_json(error_message("forbidden", "you may not see this session"))
            await self.close(code=CLOSE_FORBIDDEN)
            return None
        if isinstance(request, Ping):
            return pong_message()
        if isinstance(request, Hello):
            await self._replay(request.after_seq)
            return None
        return await perform(request, access)

    async def _replay(self, after_seq: int) -> None:
        if not self.joined:  # join first: what is published meanwhile waits, deduplicated later
            await self.channel_layer.group_add(self.group, self.channel_name)
            self.joined = True
        if self.access.operator and not self.hears_controls:  # other tabs' switch changes
            await self.channel_layer.group_add(CONTROLS_GROUP, self.channel_name)
            self.hears_controls = True
        self.live = False
        last = await in_worker_thread(session_last_seq)(session_id=self.session_id)
        self.last_seq = min(after_seq, last)  # a client ahead of the log has another history
        await self._send_from_database(replay=True)
        await self.send_json(replay_done_message(self.last_seq))
        self.live = True

    # ── Channel layer → client ────────────────────────────────────────────────────────────
    async def session_changes(self, event: dict[str, Any]) -> None:
        try:
            await self._deliver(event)
        except Exception:  # the socket stays: the next message finds the gap and fills it
            logger.exception("session %s: delivering changes failed", self.session_id)

    async def session_partial(self, event: dict[str, Any]) -> None:
        try:
            if self.live and await self._still_allowed():
                await self.send_json({**event, "type": "partial"})
        except Exception:
            logger.exception("session %s: delivering partial text failed", self.session_id)

    async def session_spans(self, event: dict[str, Any]) -> None:
        """Span versions not stored yet (``live.previews``): sent as encoded, to a client that
        is live (one replaying gets them stored, with the replay or right after it)."""
        try:
            if self.live and await self._still_allowed():
                for text in event.get("pages") or []:
                    await self.send(text_data=text)
        except Exception:
            logger.exception("session %s: delivering span previews failed", self.session_id)

    async def callback_changed(self, event: dict[str, Any]) -> None:
        """A switch changed anywhere (``controls`` group): an operator's page hears those
        for every session (global) and for this one."""
        try:
            change = event.get("change") or {}
            if change.get("session_id") not in (None, self.session_id):
                return
            if not (self.live and await self._still_allowed() and self.access.operator):
                return
            await self.send_json(
                callback_changed_message(
                    agent_name=str(change["agent_name"]),
                    callback_name=str(change["callback_name"]),
                    session_id=change.get("session_id"),
                    enabled=change.get("enabled"),
                )
            )
        except Exception:
            logger.exception("session %s: delivering a switch change failed", self.session_id)

    async def controls_probe(self, event: dict[str, Any]) -> None:
        """The control listeners' probes of the ``controls`` group: not for clients."""

    async def breakpoints_changed(self, event: dict[str, Any]) -> None:
        """A breakpoint changed (``controls`` group), for the workers' runs: a page reads its
        session's breakpoints when it shows them."""

    async def _deliver(self, event: dict[str, Any]) -> None:
        """A published batch: its encoded pages (the live pipeline's) sent as they are when
        they follow what this client has, else its items deduplicated against the last seq
        sent; a gap is filled from the database first."""
        if not self.live or not await self._still_allowed():
            return
        pages: list[ChangesPage] = event.get("pages") or []
        for number, page in enumerate(pages):
            if page["last"] <= self.last_seq:
                continue
            if not (page["in_line"] and page["first"] == self.last_seq + 1):
                await self._deliver_items(changes_items({"pages": pages[number:]}))
                return
            await self.send(text_data=page["text"])
            self.last_seq = page["last"]
        await self._deliver_items(event.get("items") or [])

    async def _deliver_items(self, items: list[Item]) -> None:
        items = [i for i in items if i["seq"] > self.last_seq]
        if not items:
            return
        if [i["seq"] for i in items] != list(range(self.last_seq + 1, items[-1]["seq"] + 1)):
            await self._send_from_database(replay=False, up_to=items[-1]["seq"])
            return
        await self._send_changes(items, replay=False)
        self.last_seq = items[-1]["seq"]

    # ── Helpers ─────────────────────────────────────────────────────────────────────────────
    async def _send_from_database(self, *, replay: bool, up_to: int | None = None) -> None:
        """Send every stored change after ``last_seq`` (through ``up_to`` when given: later
        ones come live, after the partial text that precedes them), in pages."""
        read: Callable[..., Awaitable[list[Item]]] = in_worker_thread(items_after)
        while up_to is None or self.last_seq < up_to:
            page = await read(session_id=self.session_id, after_seq=self.last_seq, limit=PAGE)
            items = [i for i in page if up_to is None or i["seq"] <= up_to]
            if items:
                await self._send_changes(items, replay=replay)
                self.last_seq = items[-1]["seq"]
            if len(page) < PAGE or len(items) < len(page):
                return

    async def _send_changes(self, items: list[Item], *, replay: bool) -> None:
        """One ``changes`` message, or several in order when it would exceed
        ``MAX_SENT_BYTES`` (a change too large alone goes out trimmed)."""
        for page in changes_pages(items, replay=replay, limit=MAX_SENT_BYTES):
            await self.send(text_data=page["text"])

    async def _access(self) -> Access:
        self.checked_at = self.clock()
        self.access = await in_worker_thread(access_for)(
            user=self.scope.get("user"), session_id=self.session_id
        )
        return self.access

    async def _still_allowed(self) -> bool:
        if self.clock() - self.checked_at < RECHECK_SECONDS:
            return True
        if (await self._access()).may_see:
            return True
        self.live = False
        await self.close(code=CLOSE_FORBIDDEN)
        return False


class NoSuchSocket(AsyncJsonWebsocketConsumer):
    """An address no socket has (one whose session id cannot be an id among them): accepted,
    then closed with 4404 at once, as the HTTP side answers 404 (the router would otherwise
    fail the handshake with a server error)."""

    async def connect(self) -> None:
        await self.accept()
        await self.close(code=CLOSE_NOT_FOUND)
