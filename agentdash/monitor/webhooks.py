"""Alert webhooks delivered: each pending event's body posted to its rule's URL as JSON,
signed with ``ALERT_WEBHOOK_SECRET`` (``agentdash.client.webhooks``), until a 2xx answers.

A failed attempt (no connection, a timeout, any other status, a redirect: not followed) is
tried again after ``ALERT_RETRY_BASE_S``, doubling each time up to an hour; after
``ALERT_DELIVERY_ATTEMPTS`` the delivery is ``failed`` and the rule's page says why. A
process takes an attempt by a conditional update that also moves the event's next attempt
past the attempt's timeout, so two processes do not post it at once, and one killed
mid-post leaves it to be tried again. Every attempt sends the same body and event id: a
receiver that saw the id already answers 2xx and ignores it.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from datetime import datetime, timedelta
from typing import Any

from django.db.models import F
from django.utils import timezone

from agentdash.client.webhooks import EVENT_HEADER, SIGNATURE_HEADER, sign
from agentdash.core.conf import agentdash_setting
from agentdash.monitor.models import AlertEvent

logger = logging.getLogger(__name__)

BATCH = 20
RETRY_MAX_S = 3600.0
USER_AGENT = "AgentDash-Alerts/1"


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a 3xx is an answer like any other that is no 2xx


_OPENER = urllib.request.build_opener(_NoRedirects)


def retry_delay_s(attempts: int) -> float:
    """The wait after the ``attempts``-th failed attempt."""
    base = float(agentdash_setting("ALERT_RETRY_BASE_S"))
    return float(min(RETRY_MAX_S, base * 2 ** max(0, attempts - 1)))


def body_bytes(event: AlertEvent) -> bytes:
    return json.dumps(event.body, separators=(",", ":"), ensure_ascii=False).encode()


def post(url: str, body: bytes, *, event_id: str, kind: str) -> None:
    """POST ``body`` to ``url``, signed; raises with what went wrong unless a 2xx answers."""
    secret = str(agentdash_setting("ALERT_WEBHOOK_SECRET"))
    if not secret:
        raise RuntimeError("AGENTDASH_ALERT_WEBHOOK_SECRET is not set: nothing signs the post")
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            SIGNATURE_HEADER: sign(secret, body),
            EVENT_HEADER: event_id,
            "AgentDash-Event": f"alert.{kind}",
        },
    )
    timeout = float(agentdash_setting("ALERT_WEBHOOK_TIMEOUT_S"))
    try:
        with _OPENER.open(request, timeout=timeout) as answer:
            status = answer.status
    except urllib.error.HTTPError as exc:
        raise RuntimeError(f"the receiver answered {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        raise RuntimeError(f"could not reach the receiver: {exc.reason}") from None
    except (TimeoutError, OSError) as exc:
        raise RuntimeError(f"could not reach the receiver: {exc}") from None
    if not 200 <= status < 300:
        raise RuntimeError(f"the receiver answered {status}")


def _take(event: AlertEvent, now: datetime) -> bool:
    lease = timedelta(seconds=float(agentdash_setting("ALERT_WEBHOOK_TIMEOUT_S")) + 30)
    taken = AlertEvent.objects.filter(
        pk=event.pk, delivery=AlertEvent.Delivery.PENDING, attempts=event.attempts
    ).update(attempts=F("attempts") + 1, next_attempt_at=now + lease)
    return bool(taken)


def delivery_attempt(event: AlertEvent, *, now: datetime | None = None) -> bool:
    """One attempt at ``event``'s delivery, if no other process took it; whether it was
    delivered."""
    now = now or timezone.now()
    if not _take(event, now):
        return False
    attempts = event.attempts + 1
    rows = AlertEvent.objects.filter(pk=event.pk, delivery=AlertEvent.Delivery.PENDING)
    try:
        post(event.webhook_url, body_bytes(event), event_id=str(event.event_id),
             kind=event.kind)  # fmt: skip
    except Exception as exc:
        error = str(exc)[:500] or repr(exc)
        given_up = attempts >= int(agentdash_setting("ALERT_DELIVERY_ATTEMPTS"))
        logger.warning("alert webhook %s, attempt %d: %s", event.event_id, attempts, error)
        if given_up:
            rows.update(delivery=AlertEvent.Delivery.FAILED, next_attempt_at=None,
                        last_error=f"{error} (after {attempts} attempts)")  # fmt: skip
        else:
            wait = timedelta(seconds=retry_delay_s(attempts))
            rows.update(next_attempt_at=timezone.now() + wait, last_error=error)
        return False
    rows.update(delivery=AlertEvent.Delivery.DELIVERED, delivered_at=timezone.now(),
                next_attempt_at=None, last_error="")  # fmt: skip
    return True


def deliveries_send(*, now: datetime | None = None) -> int:
    """Attempt every delivery that is due (oldest first, ``BATCH`` at most); how many were
    delivered."""
    now = now or timezone.now()
    due = AlertEvent.objects.filter(delivery=AlertEvent.Delivery.PENDING, next_attempt_at__lte=now)
    return sum(delivery_attempt(e, now=now) for e in due.order_by("next_attempt_at")[:BATCH])
