"""``/health/``: for load balancers and operators.

Anyone (no login: a load balancer has none) gets the status — 200 when this process can
serve pages (the database answers; ``degraded`` when only the channel layer is away: live
updates pause), else 503 — and which check failed. Staff
and operators also get the error texts, every process's services (state, restarts, last
error) and the problems ``manage.py health`` would report; those name hosts, process ids and
internal errors, so they are not for everyone. Never cached.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_safe

from agentdash.core.permissions import is_operator
from agentdash.runs.health_checks import health_report


def _sees_details(user: Any) -> bool:
    return bool(is_operator(user) or (user.is_active and user.is_staff))


@require_safe
async def health(request: HttpRequest) -> JsonResponse:
    user = await request.auser()
    details = await sync_to_async(_sees_details)(user)
    report = await health_report(processes=details)
    response = JsonResponse(report.as_dict(details=details), status=200 if report.serving else 503)
    response["Cache-Control"] = "no-store"
    return response
