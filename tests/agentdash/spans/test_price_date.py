""" "prices of <date>" (a model call's ``usage.price_as_of``) says the day the figures in use
are of: an edit of an amount that keeps the row's date makes it the day of the edit; an edit
that dates the figures anew makes it that date."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from agentdash.spans.models import ModelPrice
from agentdash.spans.prices import model_price_set
from agentdash.spans.services import spans_store
from agentdash.spans.span_version import SpanVersion
from tests.agentdash.stored import session_of

pytestmark = pytest.mark.django_db

READ_ON = date(2020, 1, 6)  # long before any test runs: an edit is always later
TRACE, SPAN = "c" * 32, "d" * 16


def figures(**changes: Any) -> dict[str, Any]:
    return {
        "model": "gpt-test",
        "input_per_mtok": Decimal("1"),
        "output_per_mtok": Decimal("2"),
        "as_of": READ_ON,
        "source": "https://example.com/pricing",
        "actor": None,
        **changes,
    }


@dataclass
class Page:
    client: Client
    span_url: str


@pytest.fixture
def page(client: Client, alice: User) -> Page:
    session = session_of(alice, "s-price-date", app_name="capital_agent")
    attributes = {
        "gen_ai.request.model": "gpt-test",
        "gen_ai.usage.input_tokens": 1_000_000,
        "gen_ai.usage.output_tokens": 0,
    }
    spans_store(
        versions=[
            SpanVersion(trace_id=TRACE, span_id=SPAN, name="chat", start_time=1, end_time=2,
                        session_id=session.id, attributes=attributes)
        ]
    )  # fmt: skip
    client.force_login(alice)
    return Page(client, reverse("dashboard:session_span", args=[session.id, TRACE, SPAN]))


def label(page: Page) -> tuple[str, float]:
    """What the span's details are given: the price date and the cost."""
    usage = page.client.get(page.span_url).json()["usage"]
    return usage["price_as_of"], usage["cost_usd"]


def test_an_edited_amount_dates_the_prices_of_the_edit(page: Page) -> None:
    model_price_set(**figures())
    assert label(page) == ("2020-01-06", 1.0)
    model_price_set(**figures(input_per_mtok=Decimal("3")))  # the date left as it was
    today = timezone.localdate()
    assert ModelPrice.objects.get(model="gpt-test").edited_on == today
    assert label(page) == (today.isoformat(), 3.0)


def test_an_edit_that_dates_the_figures_says_that_date(page: Page) -> None:
    model_price_set(**figures())
    model_price_set(**figures(input_per_mtok=Decimal("3")))
    model_price_set(**figures(input_per_mtok=Decimal("4"), as_of=date(2020, 2, 3)))
    assert ModelPrice.objects.get(model="gpt-test").edited_on is None
    assert label(page) == ("2020-02-03", 4.0)


def test_an_edit_of_no_amount_leaves_the_date(page: Page) -> None:
    model_price_set(**figures())
    model_price_set(**figures(source="the invoice of January"))
    assert ModelPrice.objects.get(model="gpt-test").edited_on is None
    assert label(page) == ("2020-01-06", 1.0)


def test_an_edit_in_the_admin_dates_the_prices_of_the_edit(
    page: Page, staff_operator: User
) -> None:
    price = model_price_set(**figures())
    admin = Client()
    admin.force_login(staff_operator)
    form = {"model": "gpt-test", "match": "prefix", "input_per_mtok": "5",
            "output_per_mtok": "2", "cached_input_per_mtok": "", "thinking_per_mtok": "",
            "as_of": "2020-01-06", "source": "https://example.com/pricing",
            "reason": "price rise", "_save": "Save"}  # fmt: skip
    answer = admin.post(reverse("admin:spans_modelprice_change", args=[price.pk]), form)
    assert answer.status_code == 302
    assert label(page) == (timezone.localdate().isoformat(), 5.0)
    listing = admin.get(reverse("admin:spans_modelprice_changelist")).content.decode()
    assert "Edited on" in listing
