"""The signature of AgentDash's alert webhooks, for the receiver that checks it (and for
AgentDash, which makes it): standard library only. ::

    from agentdash.client.webhooks import verify
    if not verify(secret, request.body, request.headers.get(SIGNATURE_HEADER, "")):
        return 401

The header reads ``t=<unix seconds>,v1=<hex>``: ``v1`` is the HMAC-SHA256, keyed with the
shared secret, of the time, a dot and the body's bytes exactly as received. The time is
signed too, so a body captured once cannot be replayed later (:func:`verify` takes it within
``tolerance_s`` of now). Each event also carries its id (``EVENT_HEADER``, and ``event_id`` in
the body): a receiver that saw it already answers 2xx and does nothing — a retry after a
lost answer sends it again.
"""

from __future__ import annotations

import hashlib
import hmac
import time

SIGNATURE_HEADER = "AgentDash-Signature"
EVENT_HEADER = "AgentDash-Event-Id"
TOLERANCE_S = 300


def _mac(secret: str, timestamp: int, body: bytes) -> str:
    message = str(timestamp).encode() + b"." + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def sign(secret: str, body: bytes, *, timestamp: int | None = None) -> str:
    """The signature header's value for ``body`` sent now (or at ``timestamp``)."""
    moment = int(time.time()) if timestamp is None else timestamp
    return f"t={moment},v1={_mac(secret, moment, body)}"


def verify(
    secret: str, body: bytes, header: str, *, tolerance_s: float = TOLERANCE_S,
    now: float | None = None,
) -> bool:  # fmt: skip
    """Whether ``header`` signs ``body`` with ``secret``, at a time within ``tolerance_s`` of
    ``now``. Any malformed header is simply not a valid signature."""
    if not secret:
        return False
    parts: dict[str, list[str]] = {}
    for item in header.split(","):
        name, _, value = item.strip().partition("=")
        parts.setdefault(name, []).append(value)
    try:
        timestamp = int(parts["t"][0])
    except (KeyError, ValueError):
        return False
    if abs((time.time() if now is None else now) - timestamp) > tolerance_s:
        return False
    expected = _mac(secret, timestamp, body)
    return any(hmac.compare_digest(expected, given) for given in parts.get("v1", []))
