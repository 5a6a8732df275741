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


SECONDS = ("RUN_HEARTBEAT_S", "RUN_STALE_AFTER_S", "RUN_REQUEUE_AFTER_S", "REAPER_INTERVAL_S")


@register()
def check_run_timing(app_configs: Any, **kwargs: Any) -> list[Error]:
    """The heartbeat, reaper and attempt settings are positive numbers (``agentdash.E023``):
    anything else would stop the heartbeat or the reaper at its first tick."""
    errors = []
    for key in SECONDS:
        value = agentdash_setting(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            errors.append(
                Error(
                    f"AGENTDASH[{key!r}] is {value!r}; it must be a number of seconds above 0.",
                    id="agentdash.E023",
                )
            )
    attempts = agentdash_setting("RUN_MAX_ATTEMPTS")
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        errors.append(
            Error(
                f"AGENTDASH['RUN_MAX_ATTEMPTS'] is {attempts!r}; it must be an integer of at "
                "least 1.",
                id="agentdash.E023",
            )
        )
    return errors
