"""``{% demo_login_hint %}``: the demo accounts, shown only with DEBUG on."""

from __future__ import annotations

from typing import Any

from django import template

from agentdash.demo.seed import demo_login_hint as demo_login_hint_data

register = template.Library()


@register.inclusion_tag("dashboard/_demo_hint.html")
def demo_login_hint() -> dict[str, Any]:
    return {"hint": demo_login_hint_data()}
