"""System checks of the runs app (``agentdash.E02x``)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, register

from agentdash.core.conf import EXECUTORS, agentdash_setting


@register()
def check_executor(app_configs: Any, **kwargs: Any) -> list[Error]:
    name = agentdash_setting("EXECUTOR")
    if name not in EXECUTORS:
        return [
            Error(
                f"AGENTDASH['EXECUTOR'] is {name!r}, which is not an executor.",
                hint=f"Set AGENTDASH_EXECUTOR to one of: {', '.join(EXECUTORS)}.",
                id="agentdash.E020",
            )
        ]
    errors = []
    if name == "celery" and not getattr(settings, "CELERY_BROKER_URL", ""):
        errors.append(
            Error(
                "The celery executor needs a broker, and CELERY_BROKER_URL is empty.",
                hint="Set REDIS_URL (or CELERY_BROKER_URL), e.g. $(scripts/redis.sh start).",
                id="agentdash.E021",
            )
        )
    concurrency = agentdash_setting("INLINE_CONCURRENCY")
    if not isinstance(concurrency, int) or concurrency < 1:
        errors.append(
            Error(
                f"AGENTDASH['INLINE_CONCURRENCY'] is {concurrency!r}; it must be an integer "
                "of at least 1.",
                id="agentdash.E022",
            )
        )
    return errors
