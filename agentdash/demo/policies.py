"""Where the demo agents' policies come from: the database, read when a tool or a
guardrail runs.

An operator edits the ``query`` policy of ``data_agent`` (a ``controls.Policy`` row) and the
agent's next query obeys it; the same for each guardrail's policy (:func:`stored_policy`).
Django is imported lazily so the demo agents import without Django being set up.
"""

from __future__ import annotations

import logging
from types import ModuleType
from typing import Any

from pydantic import ValidationError

from runtime.agents.readonly_context import ReadonlyContext
from runtime.guardrails import InMemoryRateCounter, PolicySource, PolicyView
from runtime.safety import QueryPolicy

logger = logging.getLogger(__name__)

QUERY_KIND = "query"
DEFAULT_QUERY_POLICY: dict[str, Any] = {"select_only": True, "tables": ["customers", "orders"]}
"""Used when no enabled ``query`` policy names the agent: read-only, two tables."""


class PolicyUnavailableError(RuntimeError):
    """The stored policy could not be read or is invalid; the tool must refuse to run."""


def _stored() -> ModuleType | None:
    """``agentdash.controls.stored_policies`` once Django is set up, else ``None``.

    The one import of another app inside a function, on purpose: the demo agents load
    without Django (``python -m runtime chat agentdash.demo.data_agent``), where importing
    the controls app's models would fail; then each guardrail's default applies, and the
    query tool its default policy. The arrow points down (demo → controls), as the layers
    want.
    """
    from django.apps import apps

    if not (apps.ready and apps.is_installed("agentdash.controls")):
        return None
    from agentdash.controls import stored_policies

    return stored_policies


def _stored_query_config(agent_name: str) -> dict[str, Any] | None:
    stored = _stored()
    if stored is None:
        logger.warning("Django is not set up: %s uses the default query policy", agent_name)
        return None
    try:
        config: dict[str, Any] | None = stored.policy_config(agent_name=agent_name, kind=QUERY_KIND)
    except stored.PolicyReadError as exc:
        raise PolicyUnavailableError(f"the query policy could not be read: {exc}") from exc
    return config


def query_policy_for(agent_name: str) -> QueryPolicy:
    """The ``query`` policy governing ``agent_name``: the config of the first enabled
    ``controls.Policy`` of kind ``query`` (by name) whose ``agents`` lists it, else
    :data:`DEFAULT_QUERY_POLICY`. Reads the database on every call (call it from sync code).

    Raises :class:`PolicyUnavailableError` when the database cannot be read or the stored
    config is not a valid ``QueryPolicy``: never a wider policy than the one stored.
    """
    config = _stored_query_config(agent_name)
    try:
        return QueryPolicy.model_validate(DEFAULT_QUERY_POLICY if config is None else config)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise PolicyUnavailableError(
            f"the query policy of {agent_name!r} is invalid: {problems}"
        ) from exc


def stored_policy(kind: str) -> PolicySource:
    """A guardrail's policy source: the enabled ``kind`` policy attached to the running
    agent, read from the database at every call (``None`` without one, or without Django:
    the guardrail's default applies). A database error propagates: the guardrail fails
    closed."""

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
