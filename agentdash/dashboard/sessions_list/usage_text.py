"""A session's usage as the sessions list writes it in its cells (text, the way the session
page's scripts write it)."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any


def tokens_text(usage: dict[str, Any]) -> str:
    """Input → output tokens, with thousands separators ("1,234 → 56"; the column's head
    says they are tokens); "—" for a session that made no model call."""
    if not usage.get("calls"):
        return "—"
    return f"{usage['input']:,} → {usage['output']:,}"


def cost_text(usage: dict[str, Any]) -> str:
    """The cost as the session page writes it (dashboard/js/common/format.js ``formatCost``): US
    dollars with 4 to 6 significant digits, "$0" for nothing spent, "—" without a price,
    "≥ " before a cost that leaves out calls of models without one."""
    usd = usage.get("cost_usd")
    if usd is None or not math.isfinite(usd):
        return "—"
    if usd == 0:
        return "$0"
    value = Decimal(repr(abs(usd)))
    top = value.adjusted()  # the place of the first significant digit
    rounded = value.quantize(Decimal(1).scaleb(top - 5))  # 6 significant digits
    exponent = rounded.normalize().as_tuple().exponent
    decimals = max(0, -exponent if isinstance(exponent, int) else 0, 3 - rounded.adjusted())
    text = f"{'−' if usd < 0 else ''}${rounded:,.{decimals}f}"
    return f"≥ {text}" if usage.get("unpriced") else text
