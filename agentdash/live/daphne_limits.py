"""The websocket server's own limits, and how it enforces them: with a close frame.

daphne (through autobahn) refuses a message over ``--websocket-max-message-size`` (1 MB by
default) before the application sees it, which keeps memory bounded. But autobahn's servers
*fail by drop*: on that or any other protocol violation they cut the TCP connection without a
close frame, so the client sees 1006 ("abnormal closure") and cannot tell why — and daphne
offers no option to change it. :func:`daphne_limits_apply` makes every daphne websocket
factory of this process close properly instead (1009 "message too big" for an oversized
message, 1002 for a protocol error) and holds both size limits at :data:`MAX_MESSAGE_BYTES`
whatever the command line says (a larger or unlimited setting is lowered to it). ``asgi.py``
calls it, so it holds however daphne is started.

The protocol's own cap (``protocol.MAX_FRAME_BYTES``, 64 KB) sits far below: a frame between
the two gets an ``error`` ``too_large`` and the socket stays open (docs/PROTOCOL.md).
"""

from __future__ import annotations

from typing import Any

from daphne.ws_protocol import WebSocketFactory

MAX_MESSAGE_BYTES = 1024 * 1024
_LIMITS = ("maxMessagePayloadSize", "maxFramePayloadSize")
_MARK = "agentdash_limits"  # on the factory's method once it is ours


def daphne_limits_apply() -> None:
    """Make daphne's websocket factories close with a frame and keep the size limits (see the
    module docstring). Idempotent; affects factories configured after the call (daphne
    configures its factory when its server starts, after importing the application)."""
    original = WebSocketFactory.setProtocolOptions
    if getattr(original, _MARK, False):
        return

    def set_protocol_options(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self.failByDrop = False
        for name in _LIMITS:
            if not 0 < getattr(self, name) <= MAX_MESSAGE_BYTES:
                setattr(self, name, MAX_MESSAGE_BYTES)

    setattr(set_protocol_options, _MARK, True)
    WebSocketFactory.setProtocolOptions = set_protocol_options
