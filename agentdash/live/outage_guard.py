"""New sockets while the database or the channel layer is away: refused with a reason.

Before a socket's consumer runs, Channels' ``AuthMiddleware`` reads the signed-in user from
the database and the consumer subscribes its channel on the channel layer; either failing
made the handshake fail with a server error. :class:`SocketOutageGuard` answers instead the
way the consumer itself answers an outage: the socket is accepted, told ``error``
``unavailable`` (naming what is away) and closed with **4503** (unavailable: try again
later; a server may not send the standard 1013, only 1000 and 3000–4999); the browser's
socket tries again by itself. Any other error, or one after the application has
answered, goes on as before.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from agentdash.core.outages import caused_by_outage
from agentdash.live.consumers import CLOSE_UNAVAILABLE
from agentdash.live.groups import layer_unreachable
from agentdash.live.protocol import unavailable_error

logger = logging.getLogger(__name__)


class SocketOutageGuard:
    """ASGI middleware for the websocket stack (see the module docstring)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        answered = connected = False

        async def tracked_receive() -> dict[str, Any]:
            nonlocal connected
            message: dict[str, Any] = await receive()
            connected = connected or message.get("type") == "websocket.connect"
            return message

        async def tracked_send(message: dict[str, Any]) -> None:
            nonlocal answered
            answered = True
            await send(message)

        try:
            await self.app(scope, tracked_receive, tracked_send)
        except Exception as exc:
            if answered:
                raise
            if caused_by_outage(exc):
                what = "the database"
            elif layer_unreachable(exc):
                what = "the live channel"
            else:
                raise
            logger.warning(
                "socket %s refused: %s is unavailable (%s)", scope.get("path"), what, exc
            )
            if not connected:
                await receive()  # the handshake's websocket.connect
            await send({"type": "websocket.accept"})
            await send({"type": "websocket.send", "text": json.dumps(unavailable_error(what))})
            await send({"type": "websocket.close", "code": CLOSE_UNAVAILABLE})
