"""System check of the change log (``agentdash.E030``): every kind it records has an app
that says how its rows become change items."""

from __future__ import annotations

from typing import Any

from django.core.checks import Error, register

from agentdash.changes.items import item_kinds
from agentdash.changes.models import SessionChange


@register()
def check_item_kinds(app_configs: Any, **kwargs: Any) -> list[Error]:
    missing = sorted(set(SessionChange.Kind.values) - set(item_kinds()))
    if not missing:
        return []
    return [
        Error(
            f"No app says how changes of kind {', '.join(map(repr, missing))} become change "
            "items: clients would get them without data.",
            hint="Install the app that records them (agent_sessions: event, spans: span, "
            "runs: run); its AppConfig.ready calls agentdash.changes.items.item_kind_register.",
            id="agentdash.E030",
        )
    ]
