"""Debug an agent that runs elsewhere: three lines in the app, and its AgentDash session page
offers the same controls as for a local agent — callback switches, state edits,
breakpoints and tool confirmations answered there. ::

    from agentdash.client import connect
    connect(root_agent, url="http://localhost:8000", key="agd_...")
    # then run the agent as usual (its Runner, its sessions)

``root_agent`` is a google-adk agent, or an any-agent ``AgentConfig`` (connected before
``AnyAgent.create(framework, config)``: its callbacks are the config's).

:func:`connect` streams the app's spans to AgentDash as they start and end
(``agentdash.otel``), registers the agent tree (its agents, callbacks and tools) and keeps its
callbacks under the dashboard's switches (``agentdash.client.adk``). It imports the
OpenTelemetry SDK and exporter and the standard library only: no Django, nothing else of
AgentDash, so an app may install the project or copy ``agentdash/otel.py`` and this package.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider

from agentdash.client import adk, any_agent
from agentdash.client.control import Controls
from agentdash.client.pauses import Pauses
from agentdash.otel import install

URL_ENV = "AGENTDASH_URL"
KEY_ENV = "AGENTDASH_INGEST_KEY"
DEFAULT_URL = "http://localhost:8000"

__all__ = ["Controls", "connect"]


def connect(
    agent: Any,
    *,
    url: str | None = None,
    key: str | None = None,
    live_spans: bool = True,
    poll_s: float = 1.0,
    pause_timeout_s: float | None = 600.0,
    pause_default: str = "deny",
    confirmations: bool = True,
) -> Controls:
    """Put ``agent`` (a google-adk root agent, or an any-agent ``AgentConfig``) under
    AgentDash's controls; the running :class:`Controls` (``controls.connected`` is set once
    AgentDash first answered).

    ``url``/``key``: AgentDash's address and an ingest key (defaults ``$AGENTDASH_URL``,
    ``$AGENTDASH_INGEST_KEY``; ``ValueError`` without a key). ``live_spans``: also stream
    the global tracer provider's spans at start and end (``agentdash.otel.install``).

    A step paused at a breakpoint or an ADK tool confirmation waits for the dashboard's
    answer by the app's rule: at most ``pause_timeout_s`` seconds (``None``: for as long as
    it takes), then it goes on with ``pause_default`` (``"deny"`` or ``"approve"``).
    ``confirmations=False`` leaves ADK's tool confirmations to the app (its own client
    answers them); breakpoints still pause."""
    url = url or os.environ.get(URL_ENV) or DEFAULT_URL
    key = key or os.environ.get(KEY_ENV, "")
    if not key:
        raise ValueError(f"no ingest key: pass key= or set {KEY_ENV}")
    versions = {}
    for package in ("google-adk", "any-agent", "opentelemetry-sdk"):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            versions[package] = importlib.metadata.version(package)
    kind = any_agent if any_agent.is_config(agent) else adk
    root = any_agent.agent_name(agent) if kind is any_agent else str(agent.name)
    controls = Controls(
        url=url,
        key=key,
        agents=kind.describe(agent),
        root_agent=root,
        versions=versions,
        poll_s=poll_s,
        pauses=Pauses(root_agent=root, timeout_s=pause_timeout_s, default=pause_default),
        confirmations=confirmations,
    )
    kind.instrument(agent, controls)
    if live_spans:
        _spans_streamed(url, key, service=root)
    return controls.start()


def _spans_streamed(url: str, key: str, *, service: str) -> None:
    """Stream the global provider's spans (``agentdash.otel``); with no provider set yet, one
    is made whose service is the root agent (unless ``OTEL_SERVICE_NAME`` names another):
    the session's title then names the app, not ``unknown_service``."""
    if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        resource = Resource.create({SERVICE_NAME: service})
        trace.set_tracer_provider(TracerProvider(resource=resource))
    install(endpoint=url, key=key)
