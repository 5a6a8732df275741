"""``firing_alerts`` for the page header: the alert rules firing now, for operators (one
query per page they open; nothing for anyone else)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from agentdash.core.permissions import is_operator
from agentdash.monitor.alerts import firing_rules


def alerts(request: HttpRequest) -> dict[str, Any]:
    if not is_operator(getattr(request, "user", None)):
        return {}
    try:
        return {"firing_alerts": firing_rules()}
    except Exception:  # the database away: the page says so itself; the header stays quiet
        return {}
