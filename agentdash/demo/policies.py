"""The data agent's ``query`` policy: which tables and statements its query tool may run,
read from the database (``controls.Policy`` of kind ``query``) at every call through the
public binding :mod:`agentdash.controls.agent_policies`, so an operator's edit governs the
agent's next query.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from agentdash.controls.agent_policies import stored_config
from runtime.guardrails import PolicyUnavailableError, config_problems
from runtime.safety import QueryPolicy

QUERY_KIND = "query"
DEFAULT_QUERY_POLICY: dict[str, Any] = {"select_only": True, "tables": ["customers", "orders"]}
"""Used when no enabled ``query`` policy names the agent: read-only, two tables."""


def query_policy_for(agent_name: str) -> QueryPolicy:
    """The ``query`` policy governing ``agent_name``: the config of the first enabled
    ``controls.Policy`` of kind ``query`` (by name) whose ``agents`` lists it, else
    :data:`DEFAULT_QUERY_POLICY`. Reads the database on every call (call it from sync code).

    Raises ``PolicyUnavailableError`` when the database cannot be read or the stored config
    is not a valid ``QueryPolicy``: never a wider policy than the one stored.
    """
    config = stored_config(agent_name=agent_name, kind=QUERY_KIND)
    try:
        return QueryPolicy.model_validate(DEFAULT_QUERY_POLICY if config is None else config)
    except ValidationError as exc:
        raise PolicyUnavailableError(
            f"the query policy of {agent_name!r} is invalid: {config_problems(exc)}"
        ) from exc
