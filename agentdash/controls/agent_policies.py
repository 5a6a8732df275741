"""The policies an agent reads while it runs, from the database an operator edits: the public
binding of ``runtime.guardrails`` to the ``controls`` app, for any agent served here.

    from agentdash.controls.agent_policies import DatabaseRateCounter, stored_policy
    rate_limit = RateLimit(stored_policy("rate_limit"), counter=DatabaseRateCounter())

A guardrail given ``stored_policy(kind)`` reads the enabled ``kind`` policy attached to its
agent at every call, so the agent's next step obeys an edit; a tool reads a policy of its own
kind with :func:`stored_config`. This module imports without Django: an agent file loads in
``python -m runtime chat``, where each guardrail's default (and the rate limit's in-memory
count) applies. An unreadable policy raises ``runtime.guardrails.PolicyUnavailableError``,
the one error for it, and the caller refuses (never a wider policy than the one stored).
"""

from __future__ import annotations

import logging
from types import ModuleType
from typing import Any

from runtime.contexts.readonly_context import ReadonlyContext
from runtime.guardrails import InMemoryRateCounter, PolicySource, PolicyView

logger = logging.getLogger(__name__)


def _stored() -> ModuleType | None:
    """:mod:`agentdash.controls.stored_policies` once Django is set up, else ``None``.

    Imported inside the function on purpose: it reads the app's models, which cannot be
    imported before Django is set up, and this module must load without it.
    """
    from django.apps import apps

    if not (apps.ready and apps.is_installed("agentdash.controls")):
        return None
    from agentdash.controls import stored_policies

    return stored_policies


def stored_config(*, agent_name: str, kind: str) -> dict[str, Any] | None:
    """The config of the enabled ``kind`` policy attached to ``agent_name``; ``None`` when
    there is none or Django is not set up (the caller's default applies). Reads the database
    on every call: call it from sync code (a tool's function).

    Raises ``PolicyUnavailableError`` when the database cannot be read.
    """
    stored = _stored()
    if stored is None:
        logger.warning("Django is not set up: %s uses its default %s policy", agent_name, kind)
        return None
    config: dict[str, Any] | None = stored.policy_config(agent_name=agent_name, kind=kind)
    return config


def stored_policy(kind: str) -> PolicySource:
    """A guardrail's policy source: the enabled ``kind`` policy attached to the running agent,
    read at every call (``None`` without one, or without Django: the guardrail's default
    applies). A database error propagates: the guardrail fails closed."""

    async def source(ctx: ReadonlyContext) -> PolicyView | None:
        stored = _stored()
        if stored is None:
            return None
        view: PolicyView | None = await stored.policy_view(agent_name=ctx.agent_name, kind=kind)
        return view

    return source


class DatabaseRateCounter:
    """Rate-limit counts in the database (``controls.RateWindow``), shared by every worker;
    in this process's memory when Django is not set up."""

    def __init__(self) -> None:
        self._fallback = InMemoryRateCounter()

    async def hit(self, key: str, *, limit: int, window_s: float) -> float | None:
        stored = _stored()
        if stored is None:
            return await self._fallback.hit(key, limit=limit, window_s=window_s)
        wait: float | None = await stored.rate_hit(key, limit=limit, window_s=window_s)
        return wait
