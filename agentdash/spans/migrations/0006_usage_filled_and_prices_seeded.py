"""Spans stored before their usage had columns get them from their attributes, and the price
table starts with a few Gemini models.

The figures were taken on 2026-11-24 from Google's Gemini Developer API pricing page
(https://ai.google.dev/gemini-api/docs/pricing: paid tier, standard — not batch — text input,
prompts up to 200k tokens; thinking is billed as output there, so it has no price of its own).
Gemini 2.5 Pro charges more for prompts over 200k tokens; the table holds one rate per kind,
the lower. Gemini 3 models' cached-input rates were not among the figures taken: their rows
leave it empty (cached tokens then cost as input, an upper bound). The offline model runs in
the server's own process and costs nothing. Operators correct or add rows in the admin.
"""

from datetime import date
from decimal import Decimal

from django.db import migrations
from django.db.models import Q

TAKEN = date(2026, 11, 24)
GEMINI = (
    "https://ai.google.dev/gemini-api/docs/pricing (paid tier, standard, text, "
    "prompts up to 200k tokens)"
)
PRICES = [
    # model, input, output, cached input ($ per 1M tokens)
    ("gemini-2.5-pro", "1.25", "10.00", "0.125"),
    ("gemini-2.5-flash", "0.30", "2.50", "0.03"),
    ("gemini-2.5-flash-lite", "0.10", "0.40", "0.01"),
    ("gemini-3.1-pro-preview", "2.00", "12.00", None),
    ("gemini-3.5-flash", "1.50", "9.00", None),
]

# A frozen copy of agentdash.spans.usage.usage_columns as it was when this ran.
_KEYS = (
    ("tokens_in", "gen_ai.usage.input_tokens"),
    ("tokens_out", "gen_ai.usage.output_tokens"),
    ("tokens_cached", "gen_ai.usage.cache_read.input_tokens"),
    ("tokens_thinking", "gen_ai.usage.reasoning.output_tokens"),
)
_MAX = 10**12
BATCH = 1_000


def _count(value):
    if isinstance(value, bool):
        return None
    whole_float = isinstance(value, float) and value.is_integer()
    digits = isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 16
    if whole_float or digits:
        value = int(value)
    return value if isinstance(value, int) and 0 <= value <= _MAX else None


def fill_usage(apps, schema_editor):
    Span = apps.get_model("spans", "Span")
    rows = Span.objects.filter(
        Q(attributes__has_key="gen_ai.usage.input_tokens")
        | Q(attributes__has_key="gen_ai.usage.output_tokens")
    ).only("id", "attributes")
    changed = []
    for span in rows.iterator(chunk_size=BATCH):
        attributes = span.attributes if isinstance(span.attributes, dict) else {}
        counts = {column: _count(attributes.get(key)) for column, key in _KEYS}
        if counts["tokens_in"] is None and counts["tokens_out"] is None:
            continue
        model = attributes.get("gen_ai.response.model") or attributes.get("gen_ai.request.model")
        span.usage_model = str(model or "")[:128]
        for column, value in counts.items():
            setattr(span, column, value)
        changed.append(span)
        if len(changed) >= BATCH:
            Span.objects.bulk_update(changed, ["usage_model", *(c for c, _ in _KEYS)])
            changed = []
    if changed:
        Span.objects.bulk_update(changed, ["usage_model", *(c for c, _ in _KEYS)])


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
                "source": GEMINI,
            },
        )
    ModelPrice.objects.get_or_create(
        model="offline",
        defaults={
            "match": "exact",
            "input_per_mtok": Decimal(0),
            "output_per_mtok": Decimal(0),
            "as_of": TAKEN,
            "source": "AgentDash's offline model: it runs in the server's process, no charge",
        },
    )


def unseed_prices(apps, schema_editor):
    ModelPrice = apps.get_model("spans", "ModelPrice")
    seeded = [model for model, *_ in PRICES] + ["offline"]
    ModelPrice.objects.filter(model__in=seeded, as_of=TAKEN).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("spans", "0005_usage_and_prices"),
    ]

    operations = [
        migrations.RunPython(fill_usage, migrations.RunPython.noop, elidable=True),
        migrations.RunPython(seed_prices, unseed_prices),
    ]
