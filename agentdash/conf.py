"""Reading settings: environment variables with defaults, and the ``AGENTDASH`` dict."""

from __future__ import annotations

import os
from typing import Any

DEFAULTS: dict[str, Any] = {
    "AGENTS": [],
    "EXECUTOR": "inline",
    "DEMO_PASSWORD": "",
    "CSP": True,
}


def env_bool(name: str, default: bool) -> bool:
    """``1/true/yes/on`` → True, ``0/false/no/off`` → False; anything else is an error."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no, on/off)")


def env_list(name: str, default: list[str]) -> list[str]:
    """A comma-separated environment variable as a list (blank items dropped)."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def agentdash_setting(key: str) -> Any:
    """``settings.AGENTDASH[key]``, falling back to the documented default."""
    from django.conf import settings

    return {**DEFAULTS, **getattr(settings, "AGENTDASH", {})}.get(key, DEFAULTS.get(key))
