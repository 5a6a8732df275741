"""Writes of the price table that costs model calls: each change audited with the figures
before and after, in the same transaction."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone

from agentdash.core.services import Actor, audit_record
from agentdash.spans.models import MODEL_PRICE_TARGET, ModelPrice

PRICE_FIELDS = (
    "match",
    "input_per_mtok",
    "output_per_mtok",
    "cached_input_per_mtok",
    "thinking_per_mtok",
    "as_of",
    "source",
)
"""A price row's fields besides its model: what the audit trail keeps and the admin edits."""

AMOUNT_FIELDS = ("input_per_mtok", "output_per_mtok", "cached_input_per_mtok", "thinking_per_mtok")


def model_price_snapshot(price: ModelPrice) -> dict[str, Any]:
    """A price row as the audit trail keeps it (amounts as text, exactly, without trailing
    zeros)."""
    snapshot: dict[str, Any] = {"model": price.model}
    for name in PRICE_FIELDS:
        value = getattr(price, name)
        if isinstance(value, Decimal):
            value = format(value.normalize(), "f")  # 0.30 and 0.300000 are one price
        elif isinstance(value, date):
            value = value.isoformat()
        snapshot[name] = value
    return snapshot


def model_price_set(
    *,
    model: str,
    match: str = ModelPrice.Match.PREFIX,
    input_per_mtok: Decimal,
    output_per_mtok: Decimal,
    cached_input_per_mtok: Decimal | None = None,
    thinking_per_mtok: Decimal | None = None,
    as_of: date,
    source: str,
    actor: Actor,
    reason: str = "",
) -> ModelPrice:
    """Create the price row of ``model``, or replace its figures, audited
    (``model_price.set``, before and after) in the same transaction; a change takes effect
    for every span's cost at once (costs are computed when read). An edit that changes
    nothing writes nothing.

    An edit that changes an amount but leaves ``as_of`` as it was records today as the row's
    ``edited_on``: the figures in use are then of today, not of ``as_of`` (what "prices of
    <date>" says, :func:`agentdash.spans.usage.price_date`). A new ``as_of`` dates the
    figures itself and clears ``edited_on``.

    Raises ``ValidationError`` before writing anything: a negative or malformed amount, a
    blank model or source, an unknown ``match``."""
    with transaction.atomic():
        price = ModelPrice.objects.select_for_update().filter(model=model).first()
        before = model_price_snapshot(price) if price is not None else None
        price = price or ModelPrice(model=model)
        for name, value in (
            ("match", match),
            ("input_per_mtok", input_per_mtok),
            ("output_per_mtok", output_per_mtok),
            ("cached_input_per_mtok", cached_input_per_mtok),
            ("thinking_per_mtok", thinking_per_mtok),
            ("as_of", as_of),
            ("source", source),
        ):
            setattr(price, name, value)
        price.full_clean()
        after = model_price_snapshot(price)
        if after == before:
            return price
        if before is None or after["as_of"] != before["as_of"]:
            price.edited_on = None
        elif any(after[name] != before[name] for name in AMOUNT_FIELDS):
            price.edited_on = timezone.localdate()
        price.save()
        audit_record(
            actor=actor,
            action="model_price.set",
            target_type=MODEL_PRICE_TARGET,
            target_id=price.model,
            before=before,
            after=after,
            reason=reason,
        )
    return price


def model_price_delete(*, price: ModelPrice, actor: Actor, reason: str = "") -> None:
    """Remove a price row, audited (``model_price.delete``): its model's calls show tokens
    without a cost from then on."""
    with transaction.atomic():
        before = model_price_snapshot(price)
        ModelPrice.objects.filter(pk=price.pk).delete()
        audit_record(
            actor=actor,
            action="model_price.delete",
            target_type=MODEL_PRICE_TARGET,
            target_id=price.model,
            before=before,
            reason=reason,
        )
