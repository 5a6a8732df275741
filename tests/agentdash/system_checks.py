"""Running Django's system checks as ``manage.py check`` does, for the tests."""

from __future__ import annotations

from django.core import checks


def check_ids(*, deploy: bool = False) -> set[str]:
    """Ids of every agentdash check message, as ``manage.py check`` would run them."""
    messages = checks.run_checks(include_deployment_checks=deploy)
    return {m.id for m in messages if m.id and m.id.startswith("agentdash.")}
