"""AgentDash's own settings: every key of the ``AGENTDASH`` dict, its default and the
environment variable that sets it, in one table (:data:`SETTINGS`); read through
:func:`agentdash_setting` (cached, cleared when a test overrides ``AGENTDASH``).

``agentdash.settings`` builds ``AGENTDASH`` with :func:`agentdash_from_environment`; a
settings module of one's own may set the dict directly, keys it leaves out take their
defaults. docs/CONFIGURATION.md documents each variable (a test keeps it in step with the
table). A key in ``AGENTDASH`` that is not in the table is a system-check warning
(``agentdash.W001``): nothing would read it; an ``AGENTDASH`` that is not a dict is an error
(``agentdash.E007``). The variables' parsers are ``env_values``'.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver

from agentdash.core.env_values import (
    cpus,
    parse_bool,
    parse_int,
    parse_list,
    parse_nice,
    parse_rate,
    parse_seconds,
    parse_secret,
    parse_str,
)

EXECUTORS = ("inline", "celery")

DEMO_AGENTS = [
    "agentdash.demo.capital:root_agent",
    "agentdash.demo.support_desk:root_agent",
    "agentdash.demo.data_agent:root_agent",
    "agentdash.demo.analyst:root_agent",
]


_DECODE_PROCESSES = 1 if cpus() > 1 else 0


@dataclass(frozen=True)
class Setting:
    """One key of ``AGENTDASH``: its default, the environment variable that sets it and how
    that variable's text is read (``parse(text, variable name)``, ``ValueError`` if bad)."""

    key: str
    default: Any
    env: str
    parse: Callable[[str, str], Any]
    help: str


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "AGENTS",
        DEMO_AGENTS,
        "AGENTDASH_AGENTS",
        parse_list,
        "The agents offered, as ``module:attribute`` references to agent objects.",
    ),
    Setting(
        "EXECUTOR",
        "inline",
        "AGENTDASH_EXECUTOR",
        parse_str,
        f"Where runs execute: one of {', '.join(EXECUTORS)}.",
    ),
    Setting(
        "INLINE_CONCURRENCY",
        8,
        "AGENTDASH_INLINE_CONCURRENCY",
        parse_int,
        "Runs at once on the inline executor's event loop.",
    ),
    Setting(
        "RUN_HEARTBEAT_S",
        2.0,
        "AGENTDASH_RUN_HEARTBEAT_S",
        parse_seconds,
        "How often a running run writes its heartbeat and checks for a cancel.",
    ),
    Setting(
        "RUN_STALE_AFTER_S",
        10.0,
        "AGENTDASH_RUN_STALE_AFTER_S",
        parse_seconds,
        "A running run whose heartbeat is older has lost its worker.",
    ),
    Setting(
        "RUN_MAX_ATTEMPTS",
        3,
        "AGENTDASH_RUN_MAX_ATTEMPTS",
        parse_int,
        "Attempts before the reaper fails a run instead of queueing it again.",
    ),
    Setting(
        "RUN_REQUEUE_AFTER_S",
        60.0,
        "AGENTDASH_RUN_REQUEUE_AFTER_S",
        parse_seconds,
        "A queued run nobody took for this long is submitted again.",
    ),
    Setting(
        "REAPER_INTERVAL_S",
        2.0,
        "AGENTDASH_REAPER_INTERVAL_S",
        parse_seconds,
        "How often each process that serves or executes runs runs the reaper.",
    ),
    Setting(
        "CONFIRMATION_TIMEOUT_S",
        0.0,
        "AGENTDASH_CONFIRMATION_TIMEOUT_S",
        parse_seconds,
        "A tool confirmation nobody answered for this long is denied (0: never).",
    ),
    Setting(
        "INGEST_MAX_BODY_BYTES",
        16 * 1024 * 1024,
        "AGENTDASH_INGEST_MAX_BODY_BYTES",
        parse_int,
        "The largest OTLP request body taken at /v1/traces, before and after gunzip (413).",
    ),
    Setting(
        "OTLP_GRPC",
        "localhost:4317",
        "AGENTDASH_OTLP_GRPC",
        parse_str,
        "Where the server process serves OTLP/gRPC (host:port; 'off': nowhere). At scale serve "
        "it from its own process instead: manage.py otlp_grpc (docs/INGEST.md).",
    ),
    Setting(
        "OTLP_GRPC_WORKERS",
        4,
        "AGENTDASH_OTLP_GRPC_WORKERS",
        parse_int,
        "Threads handling OTLP/gRPC exports at once (16 times as many may wait).",
    ),
    Setting(
        "OTLP_OUT_INGESTED",
        False,
        "AGENTDASH_OTLP_OUT_INGESTED",
        parse_bool,
        "Pass the exports OTLP ingest takes on, as sent, to the collector the standard "
        "OTEL_EXPORTER_OTLP_* variables name (as AgentDash's own spans are copied there).",
    ),
    Setting(
        "METRICS_TOKEN",
        "",
        "AGENTDASH_METRICS_TOKEN",
        parse_secret,
        "A bearer token that lets a Prometheus scraper read /metrics from any address "
        "('': only the addresses of AGENTDASH_METRICS_ALLOW may).",
    ),
    Setting(
        "METRICS_ALLOW",
        "127.0.0.1/32,::1/128",
        "AGENTDASH_METRICS_ALLOW",
        parse_str,
        "The networks (comma-separated CIDRs) whose clients read /metrics without a token "
        "('': none).",
    ),
    Setting(
        "ALERT_WEBHOOK_SECRET",
        "",
        "AGENTDASH_ALERT_WEBHOOK_SECRET",
        parse_secret,
        "The shared secret that signs alert webhooks (HMAC-SHA256).",
    ),
    Setting(
        "ALERT_CHECK_S",
        15.0,
        "AGENTDASH_ALERT_CHECK_S",
        parse_seconds,
        "How often the alert rules are checked.",
    ),
    Setting(
        "ALERT_DELIVERY_ATTEMPTS",
        8,
        "AGENTDASH_ALERT_DELIVERY_ATTEMPTS",
        parse_int,
        "How many times a webhook is tried before its delivery is given up.",
    ),
    Setting(
        "ALERT_RETRY_BASE_S",
        10.0,
        "AGENTDASH_ALERT_RETRY_BASE_S",
        parse_seconds,
        "The wait after a webhook's first failed attempt (doubled after each, to an hour).",
    ),
    Setting(
        "ALERT_WEBHOOK_TIMEOUT_S",
        5.0,
        "AGENTDASH_ALERT_WEBHOOK_TIMEOUT_S",
        parse_seconds,
        "How long one webhook attempt may take before it counts as failed.",
    ),
    Setting(
        "HTTP_MAX_BODY_BYTES",
        4 * 1024 * 1024,
        "AGENTDASH_HTTP_MAX_BODY_BYTES",
        parse_int,
        "The largest request body any other route takes (forms, uploads, JSON): larger is "
        "refused with 413 before it is read.",
    ),
    Setting(
        "INGEST_RATE_PER_S",
        100.0,
        "AGENTDASH_INGEST_RATE_PER_S",
        parse_rate,
        "OTLP requests per second one ingest key may send, on average, per server process "
        "(429 with Retry-After past it; 0: no limit).",
    ),
    Setting(
        "INGEST_BURST",
        200,
        "AGENTDASH_INGEST_BURST",
        parse_int,
        "OTLP requests one ingest key may send at once before the rate applies.",
    ),
    Setting(
        "INGEST_SESSIONS_PER_MIN",
        120,
        "AGENTDASH_INGEST_SESSIONS_PER_MIN",
        parse_int,
        "New sessions one ingest key may make per minute, per server process, as many at once "
        "(the spans of a conversation past it are rejected, saying so; 0: no limit).",
    ),
    Setting(
        "INGEST_MAX_VALUE_CHARS",
        65_536,
        "AGENTDASH_INGEST_MAX_VALUE_CHARS",
        parse_int,
        "An ingested attribute value longer than this is cut and the span says so "
        "(agentdash.ingest.truncated).",
    ),
    Setting(
        "INGEST_DECODE_PROCESSES",
        _DECODE_PROCESSES,
        "AGENTDASH_INGEST_DECODE_PROCESSES",
        parse_int,
        "Processes of their own that read OTLP trace exports beside each serving process "
        "(parse, unpack, make storable), so ingest uses a second core; 0: read them in the "
        "serving process. Default: 1 on a machine of two CPUs or more, else 0.",
    ),
    Setting(
        "CONTROLS_PROBE_S",
        5.0,
        "AGENTDASH_CONTROLS_PROBE_S",
        parse_seconds,
        "How often each worker's control listener checks that it still hears the controls "
        "group (a message to itself through the group).",
    ),
    Setting(
        "CONTROLS_RELOAD_S",
        30.0,
        "AGENTDASH_CONTROLS_RELOAD_S",
        parse_seconds,
        "How often each worker reloads the callback switches and has runs reread breakpoints.",
    ),
    Setting(
        "GC_THRESHOLD",
        10_000,
        "AGENTDASH_GC_THRESHOLD",
        parse_int,
        "The garbage collector's first threshold in serving and worker processes, which "
        "also freeze what they hold once started (0: Python's defaults).",
    ),
    Setting(
        "WORKER_NICE",
        10,
        "AGENTDASH_WORKER_NICE",
        parse_nice,
        "The CPU priority (nice, 0–19) Celery workers lower themselves to, so that web "
        "processes on the same host go first (0: as started).",
    ),
    Setting(
        "HEALTH_INTERVAL_S",
        5.0,
        "AGENTDASH_HEALTH_INTERVAL_S",
        parse_seconds,
        "How often each process records the state of its background services.",
    ),
    Setting(
        "SERVICE_IDENTITY",
        "agentdash-agent",
        "AGENTDASH_SERVICE_IDENTITY",
        parse_str,
        "The agent's own identity: the principal of tools that act as the agent (a user "
        "tool acts as the user who owns the session).",
    ),
    Setting(
        "BASE_URL",
        "",
        "AGENTDASH_BASE_URL",
        parse_str,
        "Where the dashboard is, for links printed outside a request (manage.py eval); "
        "empty: where make run serves (agentdash.core.site_url).",
    ),
    Setting(
        "DEMO_PASSWORD",
        "",
        "AGENTDASH_DEMO_PASSWORD",
        parse_secret,
        "The demo accounts' password (empty: the documented default).",
    ),
)

DEFAULTS: Mapping[str, Any] = MappingProxyType({s.key: s.default for s in SETTINGS})


def agentdash_from_environment(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``AGENTDASH`` as the environment sets it: every key, from its variable when that is
    set and not blank, else its default. Raises ``ImproperlyConfigured`` naming the
    variable when one cannot be read."""
    environ = os.environ if environ is None else environ
    found: dict[str, Any] = {}
    for setting in SETTINGS:
        raw = environ.get(setting.env)
        if raw is None or raw.strip() == "":
            default = setting.default
            found[setting.key] = list(default) if isinstance(default, list) else default
            continue
        try:
            found[setting.key] = setting.parse(raw, setting.env)
        except ValueError as exc:
            raise ImproperlyConfigured(f"{exc} ({setting.help})") from None
    return found


@cache
def agentdash_settings() -> Mapping[str, Any]:
    """``settings.AGENTDASH`` over the defaults (read-only; computed once, again after a
    test changes ``AGENTDASH``). An ``AGENTDASH`` that is not a dict counts as empty: the
    system check ``agentdash.E007`` reports it."""
    from django.conf import settings

    configured = getattr(settings, "AGENTDASH", {})
    if not isinstance(configured, Mapping):
        configured = {}
    return MappingProxyType({**DEFAULTS, **configured})


def agentdash_setting(key: str) -> Any:
    """One key of ``AGENTDASH``: its configured value, else its default. ``KeyError`` for a
    key that is not in :data:`SETTINGS` (a typo in the code, not in the configuration)."""
    if key not in DEFAULTS:
        raise KeyError(f"{key!r} is not an AGENTDASH setting (agentdash.core.conf.SETTINGS)")
    return agentdash_settings()[key]


@receiver(setting_changed)
def _settings_changed(*, setting: str, **kwargs: Any) -> None:
    if setting == "AGENTDASH":
        agentdash_settings.cache_clear()
