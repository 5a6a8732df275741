"""The price table: seeded with dated Gemini figures, validated (no negative amount, a clear
error), every change audited, edited by operators in the admin (never deleted by them)."""

from __future__ import annotations

import importlib
from datetime import date
from decimal import Decimal
from typing import Any

import pytest
from django.apps import apps as django_apps
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.test import Client
from django.urls import reverse

from agentdash.core.models import AuditEntry
from agentdash.spans.models import MODEL_PRICE_TARGET, ModelPrice
from agentdash.spans.prices import model_price_delete, model_price_set
from agentdash.spans.totals import _PRICE_FIELDS, _price_table, price_book

pytestmark = pytest.mark.django_db

TAKEN = date(2026, 11, 24)
SEEDED = importlib.import_module("agentdash.spans.migrations.0006_usage_filled_and_prices_seeded")


def figures(**changes: Any) -> dict[str, Any]:
    return {
        "model": "gemini-9-flash",
        "input_per_mtok": Decimal("0.30"),
        "output_per_mtok": Decimal("2.50"),
        "as_of": TAKEN,
        "source": "https://example.com/pricing",
        "actor": None,
        **changes,
    }


def test_the_seeded_rows_say_when_and_where_from() -> None:
    # What the migration seeds (seeded again: a transactional test before this one may have
    # emptied the tables).
    ModelPrice.objects.all().delete()
    SEEDED.seed_prices(django_apps, None)
    seeded = {p.model: p for p in ModelPrice.objects.all()}
    assert {"gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-2.5-pro", "offline"} <= set(seeded)
    flash = seeded["gemini-2.5-flash"]
    assert (flash.input_per_mtok, flash.output_per_mtok) == (Decimal("0.3"), Decimal("2.5"))
    assert flash.cached_input_per_mtok == Decimal("0.03")
    for row in seeded.values():
        assert row.as_of == TAKEN and row.source
    assert seeded["offline"].output_per_mtok == 0


@pytest.mark.parametrize(
    "field", ["input_per_mtok", "output_per_mtok", "cached_input_per_mtok", "thinking_per_mtok"]
)
def test_a_negative_price_is_refused_with_a_clear_error(field: str) -> None:
    with pytest.raises(ValidationError) as refused:
        model_price_set(**figures(**{field: Decimal("-0.01")}))
    assert refused.value.message_dict == {field: ["A price cannot be negative."]}
    assert not ModelPrice.objects.filter(model="gemini-9-flash").exists()
    assert not AuditEntry.objects.filter(target_type=MODEL_PRICE_TARGET).exists()


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"model": ""}, "model"),
        ({"source": ""}, "source"),
        ({"match": "fuzzy"}, "match"),
        ({"input_per_mtok": Decimal("1234567.1234567")}, "input_per_mtok"),
    ],
)
def test_other_bad_figures_are_refused(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as refused:
        model_price_set(**figures(**changes))
    assert field in refused.value.message_dict


def test_the_database_refuses_a_negative_price_too() -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        ModelPrice.objects.create(
            model="x", input_per_mtok=-1, output_per_mtok=1, as_of=TAKEN, source="s"
        )


def test_every_change_is_audited_and_a_change_of_nothing_writes_nothing(alice: User) -> None:
    created = model_price_set(**figures(actor=alice, reason="new model"))
    model_price_set(**figures(actor=alice))  # the same figures again
    model_price_set(**figures(actor=alice, output_per_mtok=Decimal("3"), reason="price rise"))
    model_price_delete(price=ModelPrice.objects.get(pk=created.pk), actor=alice, reason="gone")
    entries = list(AuditEntry.objects.filter(target_type=MODEL_PRICE_TARGET).order_by("id"))
    assert [(e.action, e.reason, e.actor_label) for e in entries] == [
        ("model_price.set", "new model", "alice"),
        ("model_price.set", "price rise", "alice"),
        ("model_price.delete", "gone", "alice"),
    ]
    assert entries[0].before is None and entries[0].after["output_per_mtok"] == "2.5"
    assert (entries[1].before["output_per_mtok"], entries[1].after["output_per_mtok"]) == (
        "2.5",
        "3",
    )
    assert entries[2].before["model"] == "gemini-9-flash" and entries[2].after is None


def _form(**changes: str) -> dict[str, str]:
    return {
        "model": "gemini-9-flash",
        "match": "prefix",
        "input_per_mtok": "0.30",
        "output_per_mtok": "2.50",
        "cached_input_per_mtok": "",
        "thinking_per_mtok": "",
        "as_of": "2026-11-24",
        "source": "https://example.com/pricing",
        "reason": "from the invoice",
        "_save": "Save",
        **changes,
    }


def test_an_operator_adds_and_edits_prices_in_the_admin(staff_operator: User) -> None:
    model_price_set(**figures(model="gemini-8-flash"))
    model_price_set(**figures(model="gemini-8-pro"))
    client = Client()
    client.force_login(staff_operator)
    listing = client.get(reverse("admin:spans_modelprice_changelist"), {"q": "8-fla"})
    assert listing.status_code == 200
    assert [p.model for p in listing.context["cl"].result_list] == ["gemini-8-flash"]

    added = client.post(reverse("admin:spans_modelprice_add"), _form())
    assert added.status_code == 302
    price = ModelPrice.objects.get(model="gemini-9-flash")
    assert price.input_per_mtok == Decimal("0.30") and price.cached_input_per_mtok is None

    change = reverse("admin:spans_modelprice_change", args=[price.pk])
    edited = client.post(change, _form(model="renamed", output_per_mtok="3.00"))
    assert edited.status_code == 302
    price.refresh_from_db()
    assert (price.model, price.output_per_mtok) == ("gemini-9-flash", Decimal("3.00"))
    entries = AuditEntry.objects.filter(target_type=MODEL_PRICE_TARGET, actor=staff_operator)
    assert entries.count() == 2 and {e.reason for e in entries} == {"from the invoice"}

    refused = client.post(change, _form(input_per_mtok="-1"))
    assert refused.status_code == 200
    assert "A price cannot be negative." in refused.content.decode()
    price.refresh_from_db()
    assert price.input_per_mtok == Decimal("0.30")

    delete = reverse("admin:spans_modelprice_delete", args=[price.pk])
    assert client.post(delete, {"post": "yes"}).status_code == 403
    assert ModelPrice.objects.filter(pk=price.pk).exists()


def test_a_user_sees_no_prices_in_the_admin(alice: User) -> None:
    alice.is_staff = True
    alice.save()
    client = Client()
    client.force_login(alice)
    assert client.get(reverse("admin:spans_modelprice_changelist")).status_code == 403


def test_a_superuser_deletes_a_price_audited(superuser: User) -> None:
    client = Client()
    client.force_login(superuser)
    price = model_price_set(**figures())
    delete = reverse("admin:spans_modelprice_delete", args=[price.pk])
    assert client.post(delete, {"post": "yes"}).status_code == 302
    assert not ModelPrice.objects.filter(model="gemini-9-flash").exists()
    (entry,) = AuditEntry.objects.filter(action="model_price.delete")
    assert entry.before["model"] == "gemini-9-flash" and entry.actor == superuser


def test_each_book_reads_the_table_as_it_is_and_makes_its_rows_again_only_when_changed(
    django_assert_num_queries: Any,
) -> None:
    """Every book fetches the rows (an edit applies at the next one, whoever made it, even
    past the ORM); rows that did not change are not made again (a flush reads the table)."""
    model_price_set(**figures())
    with django_assert_num_queries(1):  # changed: fetched once, made from what was fetched
        first = price_book().read().price_of("gemini-9-flash")
    as_the_orm_reads_them = ModelPrice.objects.order_by("model").values_list(*_PRICE_FIELDS)
    assert [tuple(row) for row in _price_table.rows()] == list(as_the_orm_reads_them)
    with django_assert_num_queries(1):  # fetched, not made again
        again = price_book().read().price_of("gemini-9-flash")
    assert again is first and first is not None and first.input_per_mtok == Decimal("0.30")

    model_price_set(**figures(input_per_mtok=Decimal("0.45")))
    assert price_book().price_of("gemini-9-flash").input_per_mtok == Decimal("0.45")
    with connection.cursor() as cursor:  # an edit that leaves no trace the ORM would see
        cursor.execute(
            "UPDATE spans_modelprice SET output_per_mtok = 3 WHERE model = %s", ["gemini-9-flash"]
        )
    assert price_book().price_of("gemini-9-flash").output_per_mtok == Decimal("3")

    model_price_delete(price=ModelPrice.objects.get(model="gemini-9-flash"), actor=None)
    assert price_book().price_of("gemini-9-flash-001") is None
