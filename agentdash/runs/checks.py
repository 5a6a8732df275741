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


SECONDS = (
    "RUN_HEARTBEAT_S",
    "RUN_STALE_AFTER_S",
    "RUN_REQUEUE_AFTER_S",
    "REAPER_INTERVAL_S",
    "CONTROLS_PROBE_S",
    "CONTROLS_RELOAD_S",
    "HEALTH_INTERVAL_S",
)
HEARTBEATS_BEFORE_STALE = 3


def _seconds(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and value > 0


@register()
def check_run_timing(app_configs: Any, **kwargs: Any) -> list[Error]:
    """The heartbeat, reaper, listener and health periods are positive numbers and the
    attempts a positive integer (``agentdash.E023``): anything else would stop a loop at its
    first tick. A run is stale only after several missed heartbeats (``agentdash.E024``):
    otherwise a slow write would make a live run look dead, and it would run twice."""
    errors = []
    for key in SECONDS:
        value = agentdash_setting(key)
        if not _seconds(value):
            errors.append(
                Error(
                    f"AGENTDASH[{key!r}] is {value!r}; it must be a number of seconds above 0.",
                    id="agentdash.E023",
                )
            )
    beat, stale = agentdash_setting("RUN_HEARTBEAT_S"), agentdash_setting("RUN_STALE_AFTER_S")
    if _seconds(beat) and _seconds(stale) and stale < HEARTBEATS_BEFORE_STALE * beat:
        errors.append(
            Error(
                f"AGENTDASH['RUN_STALE_AFTER_S'] is {stale!r}, less than "
                f"{HEARTBEATS_BEFORE_STALE} heartbeats (RUN_HEARTBEAT_S is {beat!r}).",
                hint="A live run's heartbeat may be late; keep RUN_STALE_AFTER_S at least "
                f"{HEARTBEATS_BEFORE_STALE} × RUN_HEARTBEAT_S (the defaults: 10 s and 2 s).",
                id="agentdash.E024",
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


@register()
def check_service_identity(app_configs: Any, **kwargs: Any) -> list[Error]:
    """The service identity is a non-empty string (``agentdash.E025``): every run's tools
    that act as the agent act as it, and the runner refuses a run without one."""
    identity = agentdash_setting("SERVICE_IDENTITY")
    if isinstance(identity, str) and identity.strip():
        return []
    return [
        Error(
            f"AGENTDASH['SERVICE_IDENTITY'] is {identity!r}; it must be a non-empty string.",
            hint="Set AGENTDASH_SERVICE_IDENTITY (default: agentdash-agent).",
            id="agentdash.E025",
        )
    ]
