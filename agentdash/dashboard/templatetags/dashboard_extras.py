"""Template filters of the dashboard's server-rendered pages."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django import template
from django.utils import timezone

register = template.Library()


@register.filter
def nanos_time(value: Any) -> str:
    """A span's Unix time in nanoseconds as local ``YYYY-MM-DD HH:MM:SS`` ('' if not one)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return ""
    try:
        moment = datetime.fromtimestamp(value / 1e9, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return ""
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M:%S")
