"""The price table gets OpenAI's models: calls of gpt-4o, gpt-4.1, o3, o4-mini, gpt-5 and their
smaller siblings had tokens and no cost.

The figures are OpenAI's list prices as its pricing page (https://platform.openai.com/docs/
pricing) gave them on 2025-10-06: the Standard tier (not Batch, Flex or Priority), text
tokens, US dollars per million. Reasoning tokens are billed as output there, so thinking has
no price of its own. Rows are prefixes, as OpenAI's answers name a dated snapshot
(``gpt-4o-mini-2024-07-18``); so that a prefix does not price a dearer sibling with its own
figures, the siblings whose names start like a listed model's and whose prices differ have
rows too (``o3-mini``, ``o3-pro``, ``o3-deep-research``, ``o4-mini-deep-research``,
``gpt-5-pro``, and the first ``gpt-4o`` snapshot, ``gpt-4o-2024-05-13``). A row already there —
an operator's — is left as it is. Operators correct the figures in the admin.
"""

from datetime import date
from decimal import Decimal

from django.db import migrations

TAKEN = date(2025, 10, 6)
OPENAI = "https://platform.openai.com/docs/pricing (Standard tier, text tokens)"
PRICES = [
    # model, input, output, cached input ($ per 1M tokens)
    ("gpt-4o", "2.50", "10.00", "1.25"),
    ("gpt-4o-2024-05-13", "5.00", "15.00", None),
    ("gpt-4o-mini", "0.15", "0.60", "0.075"),
    ("gpt-4.1", "2.00", "8.00", "0.50"),
    ("gpt-4.1-mini", "0.40", "1.60", "0.10"),
    ("gpt-4.1-nano", "0.10", "0.40", "0.025"),
    ("o3", "2.00", "8.00", "0.50"),
    ("o3-mini", "1.10", "4.40", "0.55"),
    ("o3-pro", "20.00", "80.00", None),
    ("o3-deep-research", "10.00", "40.00", "2.50"),
    ("o4-mini", "1.10", "4.40", "0.275"),
    ("o4-mini-deep-research", "2.00", "8.00", "0.50"),
    ("gpt-5", "1.25", "10.00", "0.125"),
    ("gpt-5-mini", "0.25", "2.00", "0.025"),
    ("gpt-5-nano", "0.05", "0.40", "0.005"),
    ("gpt-5-pro", "15.00", "120.00", None),
]


def seed_prices(apps, schema_editor):
    ModelPrice = apps.get_model("spans", "ModelPrice")
    for model, input_price, output_price, cached_price in PRICES:
        ModelPrice.objects.get_or_create(
            model=model,
            defaults={
                "match": "prefix",
                "input_per_mtok": Decimal(input_price),
                "output_per_mtok": Decimal(output_price),
                "cached_input_per_mtok": None if cached_price is None else Decimal(cached_price),
                "as_of": TAKEN,
                "source": OPENAI,
            },
        )


def unseed_prices(apps, schema_editor):
    """Removes the rows still as seeded; a row someone changed stays."""
    ModelPrice = apps.get_model("spans", "ModelPrice")
    for model, input_price, output_price, cached_price in PRICES:
        ModelPrice.objects.filter(
            model=model,
            match="prefix",
            input_per_mtok=Decimal(input_price),
            output_per_mtok=Decimal(output_price),
            cached_input_per_mtok=None if cached_price is None else Decimal(cached_price),
            thinking_per_mtok=None,
            as_of=TAKEN,
            source=OPENAI,
        ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("spans", "0008_fk_indexes_covered"),
    ]

    operations = [
        migrations.RunPython(seed_prices, unseed_prices),
    ]
