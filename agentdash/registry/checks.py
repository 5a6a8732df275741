"""System check ``agentdash.E010``: every path in ``AGENTDASH["AGENTS"]`` loads."""

from __future__ import annotations

from typing import Any

from django.core.checks import Error, register
from django.core.exceptions import ImproperlyConfigured

from agentdash.registry.loader import agent_import, agents_load, configured_paths


@register("agentdash")
def check_agents_load(app_configs: Any, **kwargs: Any) -> list[Error]:
    """One error per path that does not load, and one for duplicate root names."""
    hint = "Fix AGENTDASH['AGENTS'] (environment variable AGENTDASH_AGENTS)."
    errors = []
    for path in configured_paths():
        try:
            agent_import(dotted_path=path)
        except ImproperlyConfigured as exc:
            errors.append(Error(str(exc), hint=hint, id="agentdash.E010"))
    if not errors:
        try:
            agents_load()
        except ImproperlyConfigured as exc:
            errors.append(Error(str(exc), hint=hint, id="agentdash.E010"))
    return errors
