"""Where the demo agents' policies come from: the database, read when a tool runs.

An operator edits the ``query`` policy of ``data_agent`` (a ``controls.Policy`` row) and the
agent's next query obeys it. ``Policy`` is imported lazily so the demo agents import without
Django being set up.
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import ValidationError

from runtime.safety import QueryPolicy

logger = logging.getLogger(__name__)

QUERY_KIND = "query"
DEFAULT_QUERY_POLICY: dict[str, Any] = {"select_only": True, "tables": ["customers", "orders"]}
"""Used when no enabled ``query`` policy names the agent: read-only, two tables."""


class PolicyUnavailableError(RuntimeError):
    """The stored policy could not be read or is invalid; the tool must refuse to run."""


def _stored_query_config(agent_name: str) -> dict[str, Any] | None:
    from django.apps import apps

    if not apps.ready:
        logger.warning("Django is not set up: %s uses the default query policy", agent_name)
        return None
    if not apps.is_installed("agentdash.controls"):
        return None
    from django.db import DatabaseError

    from agentdash.controls.selectors import policy_for

    try:
        policy = policy_for(agent_name=agent_name, kind=QUERY_KIND)
    except DatabaseError as exc:
        raise PolicyUnavailableError(f"the query policy could not be read: {exc}") from exc
    return None if policy is None else dict(policy.config)


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
