"""The policies as agents read them while they run: a kind's stored config for an agent, as
a guardrail's policy source, and the rate limit's shared counter — each one database read
or write in a worker thread, for async callers (the runtime's callbacks)."""

from __future__ import annotations

import time
from typing import Any

from django.db import DatabaseError

from agentdash.controls.selectors import policy_for
from agentdash.controls.services import rate_window_hit
from agentdash.core.threads import in_worker_thread
from runtime.guardrails import PolicyUnavailableError, PolicyView


def policy_config(*, agent_name: str, kind: str) -> dict[str, Any] | None:
    """The config of the enabled ``kind`` policy attached to ``agent_name``, or ``None``.
    Raises ``PolicyUnavailableError`` (the runtime's: its callers need not import Django to
    catch it) when the database cannot be read; the caller refuses."""
    try:
        policy = policy_for(agent_name=agent_name, kind=kind)
    except DatabaseError as exc:
        raise PolicyUnavailableError(f"the {kind} policy could not be read: {exc}") from exc
    return None if policy is None else dict(policy.config)


async def policy_view(*, agent_name: str, kind: str) -> PolicyView | None:
    """The enabled ``kind`` policy attached to ``agent_name`` as a guardrail reads it (config,
    name, version), or ``None``."""
    policy = await in_worker_thread(policy_for)(agent_name=agent_name, kind=kind)
    if policy is None:
        return None
    return PolicyView(config=policy.config, name=policy.name, version=policy.version)


async def rate_hit(key: str, *, limit: int, window_s: float) -> float | None:
    """``runtime.guardrails.RateCounter.hit`` on the database's windows (every worker's)."""
    hit = in_worker_thread(rate_window_hit)
    wait: float | None = await hit(key=key, limit=limit, window_s=int(window_s), now=time.time())
    return wait
