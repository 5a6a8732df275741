"""OpenAI's models have prices (migration 0009): a call of a dated snapshot is priced by its
model's row, and a sibling with other prices is never priced by a shorter name's row."""

from __future__ import annotations

import importlib
from datetime import date
from decimal import Decimal

import pytest
from django.apps import apps as django_apps

from agentdash.spans.models import ModelPrice
from agentdash.spans.services import spans_store
from agentdash.spans.span_version import SpanVersion
from agentdash.spans.totals import price_book, session_usage
from tests.agentdash.stored import session_make

pytestmark = pytest.mark.django_db

SEEDED = importlib.import_module("agentdash.spans.migrations.0009_openai_prices_seeded")
ASKED = ("gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "o3", "o4-mini",
         "gpt-5", "gpt-5-mini", "gpt-5-nano")  # fmt: skip


@pytest.fixture(autouse=True)
def seeded() -> None:
    # Seeded again: a transactional test before this one may have emptied the tables.
    ModelPrice.objects.all().delete()
    SEEDED.seed_prices(django_apps, None)


def test_a_gpt_4o_mini_call_has_a_cost() -> None:
    session = session_make("s-openai")
    attributes = {
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.response.model": "gpt-4o-mini-2024-07-18",  # what OpenAI answers
        "gen_ai.usage.input_tokens": 1_000_000,
        "gen_ai.usage.cache_read.input_tokens": 200_000,
        "gen_ai.usage.output_tokens": 1_000_000,
    }
    spans_store(
        versions=[
            SpanVersion(trace_id="a" * 32, span_id="b" * 16, name="chat gpt-4o-mini",
                        start_time=1, end_time=2, session_id=session.id, attributes=attributes)
        ]
    )  # fmt: skip
    total, _ = session_usage(session_id=session.id)
    # 800k input at $0.15, 200k cached at $0.075, 1M output at $0.60.
    assert total.cost == Decimal("0.12") + Decimal("0.015") + Decimal("0.60")
    assert total.as_json()["cost_usd"] == 0.735
    assert total.as_json()["unpriced"] == []


@pytest.mark.parametrize(
    ("model", "row"),
    [
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4o-2024-05-13", "gpt-4o-2024-05-13"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("gpt-4.1-2025-04-14", "gpt-4.1"),
        ("gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"),
        ("gpt-4.1-nano-2025-04-14", "gpt-4.1-nano"),
        ("o3-2025-04-16", "o3"),
        ("o3-mini-2025-01-31", "o3-mini"),
        ("o3-pro-2025-06-10", "o3-pro"),
        ("o4-mini-2025-04-16", "o4-mini"),
        ("gpt-5-2025-08-07", "gpt-5"),
        ("gpt-5-mini-2025-08-07", "gpt-5-mini"),
        ("gpt-5-nano-2025-08-07", "gpt-5-nano"),
        ("gpt-5-pro", "gpt-5-pro"),
    ],
)
def test_each_snapshot_is_priced_by_its_own_model(model: str, row: str) -> None:
    found = price_book().price_of(model)
    assert found is not None and found.model == row


def test_every_asked_model_has_dated_list_prices_with_a_source() -> None:
    rows = {p.model: p for p in ModelPrice.objects.all()}
    assert set(ASKED) <= set(rows)
    for price in rows.values():
        assert price.as_of == date(2025, 10, 6) and "openai.com" in price.source
        assert price.input_per_mtok > 0 and price.output_per_mtok > price.input_per_mtok
        assert price.thinking_per_mtok is None  # reasoning is billed as output
    four_o, mini = rows["gpt-4o"], rows["gpt-4o-mini"]
    assert (four_o.input_per_mtok, four_o.output_per_mtok) == (Decimal("2.5"), Decimal("10"))
    assert (mini.input_per_mtok, mini.output_per_mtok) == (Decimal("0.15"), Decimal("0.6"))


def test_seeding_never_overwrites_a_row_an_operator_set() -> None:
    ModelPrice.objects.filter(model="gpt-5").update(input_per_mtok=Decimal("9"))
    SEEDED.seed_prices(django_apps, None)
    SEEDED.unseed_prices(django_apps, None)
    assert list(ModelPrice.objects.values_list("model", "input_per_mtok")) == [
        ("gpt-5", Decimal("9"))
    ]
