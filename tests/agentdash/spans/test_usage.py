"""What model calls used and cost: the usage columns the store reads out of a span's
attributes, which price row prices a model, the cost formula, and totals per run, per session
and per list of sessions — each equal to the sum over the spans."""

from __future__ import annotations

import math
from datetime import date
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import pytest

from agentdash.runs.models import Run
from agentdash.spans.models import ModelPrice, Span
from agentdash.spans.prices import model_price_set
from agentdash.spans.services import span_upsert, spans_store
from agentdash.spans.span_version import SpanVersion
from agentdash.spans.totals import price_book, runs_usage, session_usage, sessions_usage
from agentdash.spans.usage import (
    MAX_TOKENS,
    USAGE_COLUMNS,
    PriceBook,
    cost_of,
    span_usage,
    token_count,
    usage_columns,
)
from tests.agentdash.stored import session_make

IN, OUT = "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"
CACHED, THINKING = "gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.reasoning.output_tokens"
TAKEN = date(2026, 11, 24)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, 0),
        (12, 12),
        (12.0, 12),
        ("12", 12),
        (MAX_TOKENS, MAX_TOKENS),
        (MAX_TOKENS + 1, None),
        (-1, None),
        (12.5, None),
        (math.nan, None),
        (math.inf, None),
        (True, None),
        ("-3", None),
        ("1e3", None),
        ("١٢", None),  # Arabic-Indic digits: isdigit() says yes, a count says no
        ("9" * 17, None),
        (None, None),
        ([12], None),
        ({"n": 12}, None),
    ],
)
def test_token_count(value: Any, expected: int | None) -> None:
    assert token_count(value) == expected


def test_usage_columns_of_a_model_call() -> None:
    columns = usage_columns(
        {
            IN: 900,
            OUT: 52,
            CACHED: 800,
            THINKING: 40,
            "gen_ai.request.model": "gemini-2.5-flash",
            "gen_ai.response.model": "gemini-2.5-flash-001",
        }
    )
    assert columns == {
        "usage_model": "gemini-2.5-flash-001",  # the model that answered
        "tokens_in": 900,
        "tokens_out": 52,
        "tokens_cached": 800,
        "tokens_thinking": 40,
    }
    assert set(columns) == set(USAGE_COLUMNS)


@pytest.mark.parametrize(
    "attributes",
    [
        {},
        {"gen_ai.request.model": "gemini-2.5-flash"},
        {CACHED: 5, THINKING: 5},  # without input or output, no model call
        {IN: -1, OUT: "many"},
        {IN: True},
    ],
)
def test_spans_that_are_no_model_call_have_empty_columns(attributes: dict[str, Any]) -> None:
    assert usage_columns(attributes) == {
        "usage_model": "",
        "tokens_in": None,
        "tokens_out": None,
        "tokens_cached": None,
        "tokens_thinking": None,
    }


def test_a_hostile_model_name_is_kept_as_text_and_cut() -> None:
    columns = usage_columns({IN: 1, "gen_ai.request.model": "<b>" + "x" * 500})
    assert columns["usage_model"] == ("<b>" + "x" * 500)[:128]
    assert usage_columns({IN: 1, "gen_ai.request.model": ["a"]})["usage_model"] == "['a']"


def price(model: str, match: str = "prefix", **figures: str | None) -> SimpleNamespace:
    amounts = {"input": "1", "output": "2", "cached": None, "thinking": None, **figures}
    return SimpleNamespace(
        model=model,
        match=match,
        input_per_mtok=Decimal(amounts["input"] or 0),
        output_per_mtok=Decimal(amounts["output"] or 0),
        cached_input_per_mtok=None if amounts["cached"] is None else Decimal(amounts["cached"]),
        thinking_per_mtok=None if amounts["thinking"] is None else Decimal(amounts["thinking"]),
        as_of=TAKEN,
        edited_on=None,
    )


def test_which_row_prices_a_model() -> None:
    flash = price("gemini-2.5-flash")
    lite = price("gemini-2.5-flash-lite")
    exact = price("gemini-2.5-flash-001", match="exact")
    only = price("offline", match="exact")
    book = PriceBook([flash, lite, exact, only])
    assert book.price_of("gemini-2.5-flash") is flash
    assert book.price_of("gemini-2.5-flash-002") is flash
    assert book.price_of("gemini-2.5-flash-lite-preview") is lite  # the longer prefix
    assert book.price_of("gemini-2.5-flash-001") is exact  # exact before any prefix
    assert book.price_of("Models/GEMINI-2.5-Flash") is flash  # no case, no "models/"
    assert book.price_of("offline") is only
    assert book.price_of("offline-2") is None  # an exact row prices its name only
    assert book.price_of("gemini-2.5") is None
    assert book.price_of("") is None
    assert book.price_of("scripted") is None


def test_a_book_reads_its_rows_only_when_asked() -> None:
    read = []
    book = PriceBook(lambda: read.append(1) or [price("m")])
    assert read == []
    book.price_of("m")
    book.price_of("n")
    assert read == [1]


def test_cost() -> None:
    plain = price("m", input="0.30", output="2.50")
    assert cost_of(plain, tokens_in=1000, tokens_out=100, cached=0, thinking=0) == Decimal(
        "0.00055"
    )
    # Cached tokens are part of the input; thinking part of the output; each at its price.
    own = price("m", input="0.30", output="2.50", cached="0.03", thinking="3.50")
    cost = cost_of(own, tokens_in=1000, tokens_out=100, cached=800, thinking=60)
    assert (
        cost
        == (
            200 * Decimal("0.30")
            + 800 * Decimal("0.03")
            + 40 * Decimal("2.50")
            + 60 * Decimal("3.50")
        )
        / 10**6
    )
    # Without their own prices, cached costs as input and thinking as output.
    assert cost_of(plain, tokens_in=1000, tokens_out=100, cached=800, thinking=60) == Decimal(
        "0.00055"
    )


def test_a_span_usage_says_what_is_unknown() -> None:
    book = PriceBook([price("gemini-2.5-flash", input="0.30", output="2.50")])
    known = span_usage(
        {"usage_model": "gemini-2.5-flash-001", "tokens_in": 1000, "tokens_out": 100}, book
    )
    assert known == {
        "input": 1000,
        "output": 100,
        "cached": None,
        "thinking": None,
        "cost_usd": 0.00055,
        "model": "gemini-2.5-flash-001",
        "price_as_of": "2026-11-24",
    }
    unknown = span_usage({"usage_model": "scripted", "tokens_in": 7, "tokens_out": None}, book)
    assert unknown is not None
    assert (unknown["input"], unknown["output"]) == (7, None)
    assert (unknown["cost_usd"], unknown["price_as_of"]) == (None, None)
    assert span_usage({"usage_model": "", "tokens_in": None, "tokens_out": None}, book) is None


# ── stored ──────────────────────────────────────────────────────────────────────────────────


def _span(n: int, session: str, run: int | None, attributes: dict[str, Any]) -> SpanVersion:
    return SpanVersion(
        trace_id=f"{n:032x}",
        span_id=f"{n:016x}",
        name="generate_content",
        start_time=n,
        end_time=n + 1,
        session_id=session,
        run_id=run,
        attributes=attributes,
    )


@pytest.mark.django_db
def test_the_store_fills_the_columns_and_a_reduced_span_has_none() -> None:
    session = session_make("s-cols")
    version = _span(1, session.id, None, {IN: 10, OUT: 2, "gen_ai.request.model": "m"})
    spans_store(versions=[version, version.reduced("too big")])  # the last version wins
    row = Span.objects.get()
    assert (row.usage_model, row.tokens_in, row.tokens_out) == ("", None, None)
    span_upsert(
        trace_id="f" * 32,
        span_id="f" * 16,
        name="g",
        start_time=5,
        attributes={IN: 3, OUT: 4, CACHED: 1, "gen_ai.request.model": "m\x00"},
        session_id=session.id,
    )
    row = Span.objects.get(trace_id="f" * 32)
    assert (row.usage_model, row.tokens_in, row.tokens_out, row.tokens_cached) == (
        "m\ufffd",  # made storable first, like every string the store keeps
        3,
        4,
        1,
    )


def _prices() -> None:
    """This test's price table, whatever the migrations seeded."""
    ModelPrice.objects.all().delete()
    for model, figures in {
        "gemini-2.5-flash": ("0.30", "2.50", "0.03", None),
        "gemini-2.5-flash-lite": ("0.10", "0.40", None, None),
        "thinker": ("1.00", "2.00", None, "5.00"),
    }.items():
        model_price_set(
            model=model,
            input_per_mtok=Decimal(figures[0]),
            output_per_mtok=Decimal(figures[1]),
            cached_input_per_mtok=None if figures[2] is None else Decimal(figures[2]),
            thinking_per_mtok=None if figures[3] is None else Decimal(figures[3]),
            as_of=TAKEN,
            source="test",
            actor=None,
        )


MODELS = ["gemini-2.5-flash-001", "gemini-2.5-flash-lite", "thinker", "scripted", "offline"]


@pytest.mark.django_db
def test_totals_equal_the_sum_of_the_spans() -> None:
    _prices()
    sessions = [session_make("s-a"), session_make("s-b")]
    runs = [
        Run.objects.create(session=s, agent_name="a", invocation_id=f"inv-{s.id}-{i}", message={})
        for s in sessions
        for i in range(3)
    ]
    versions = []
    for n in range(1, 400):
        run = runs[n % len(runs)]
        attributes: dict[str, Any] = {
            IN: 100 + n * 7,
            OUT: 5 + n % 13,
            "gen_ai.response.model": MODELS[n % len(MODELS)],
        }
        if n % 3 == 0:
            attributes[CACHED] = n
        if n % 4 == 0:
            attributes[THINKING] = n % 5
        if n % 17 == 0:  # a span of no run
            versions.append(_span(n, run.session_id, None, attributes))
        elif n % 11 == 0:  # no model call: counts for nothing
            versions.append(_span(n, run.session_id, run.pk, {"gen_ai.tool.name": "t"}))
        else:
            versions.append(_span(n, run.session_id, run.pk, attributes))
    spans_store(versions=versions)

    book = price_book()
    rows = list(Span.objects.values("session_id", "run_id", *USAGE_COLUMNS))
    per_span = [(row, span_usage(row, book)) for row in rows]

    def exact_cost(row: dict[str, Any]) -> Decimal:
        found = book.price_of(row["usage_model"])
        assert found is not None
        return cost_of(
            found,
            tokens_in=row["tokens_in"] or 0,
            tokens_out=row["tokens_out"] or 0,
            cached=row["tokens_cached"] or 0,
            thinking=row["tokens_thinking"] or 0,
        )

    for session in sessions:
        mine = [(row, usage) for row, usage in per_span if row["session_id"] == session.id]
        calls = [(row, usage) for row, usage in mine if usage is not None]
        priced = [row for row, usage in calls if usage["cost_usd"] is not None]
        total, by_run = session_usage(session_id=session.id)
        assert total.calls == len(calls) > 0
        assert total.input == sum(usage["input"] for _, usage in calls)
        assert total.output == sum(usage["output"] for _, usage in calls)
        assert total.cached == sum(usage["cached"] or 0 for _, usage in calls)
        assert total.thinking == sum(usage["thinking"] or 0 for _, usage in calls)
        assert total.cost == sum(exact_cost(row) for row in priced)  # to the last digit
        assert total.as_json()["cost_usd"] == float(total.cost)
        assert total.as_json()["unpriced"] == ["offline", "scripted"]
        assert sessions_usage(session_ids=[session.id])[session.id].as_json() == total.as_json()
        # The runs' totals and those of spans of no run make up the session's.
        runless = [row for row in priced if row["run_id"] is None]
        assert sum(t.cost for t in by_run.values()) + sum(map(exact_cost, runless)) == total.cost
        for run_id, run_total in by_run.items():
            of_run = [row for row in priced if row["run_id"] == run_id]
            assert run_total.cost == sum(exact_cost(row) for row in of_run)
            alone = runs_usage(session_ids=[session.id], run_ids=[run_id])[run_id]
            assert alone.as_json() == run_total.as_json()


@pytest.mark.django_db
def test_a_session_of_unknown_models_has_tokens_and_no_cost() -> None:
    _prices()
    session = session_make("s-unknown")
    spans_store(
        versions=[
            _span(1, session.id, None, {IN: 10, OUT: 2, "gen_ai.request.model": "my-own"}),
            _span(2, session.id, None, {IN: 5, OUT: 1}),  # no model named at all
        ]
    )
    total, _ = session_usage(session_id=session.id)
    assert total.as_json() == {
        "input": 15,
        "output": 3,
        "cached": None,
        "thinking": None,
        "calls": 2,
        "priced_calls": 0,
        "cost_usd": None,
        "unpriced": ["", "my-own"],
    }
    empty, runs = session_usage(session_id=session_make("s-empty").id)
    assert empty.as_json()["cost_usd"] == 0 and empty.calls == 0 and runs == {}


@pytest.mark.django_db
def test_an_edited_price_applies_to_every_span_at_once() -> None:
    session = session_make("s-edit")
    spans_store(
        versions=[_span(1, session.id, None, {IN: 1_000_000, OUT: 0, "gen_ai.request.model": "m"})]
    )
    figures = {"as_of": TAKEN, "source": "test", "actor": None, "output_per_mtok": Decimal(1)}
    model_price_set(model="m", input_per_mtok=Decimal("2"), **figures)
    assert session_usage(session_id=session.id)[0].as_json()["cost_usd"] == 2.0
    model_price_set(model="m", input_per_mtok=Decimal("3"), **figures)
    assert session_usage(session_id=session.id)[0].as_json()["cost_usd"] == 3.0
    ModelPrice.objects.filter(model="m").delete()
    assert session_usage(session_id=session.id)[0].as_json()["cost_usd"] is None


@pytest.mark.django_db
def test_hostile_counts_never_break_a_total() -> None:
    """A model endpoint may report anything: counts past the bound are no counts, so that
    no sum overflows (SQLite's SUM raises past 2**63: 1,100 spans of 2**53 tokens would) and
    the page still opens."""
    _prices()
    session = session_make("s-huge")
    versions = [
        _span(n, session.id, None, {IN: 2**53 - 1, OUT: 5, "gen_ai.request.model": "m"})
        for n in range(1, 1_101)
    ] + [_span(2_000, session.id, None, {IN: MAX_TOKENS, OUT: 1, "gen_ai.request.model": "m"})]
    spans_store(versions=versions)
    total, _ = session_usage(session_id=session.id)
    assert (total.calls, total.input, total.output) == (1_101, MAX_TOKENS, 5_501)
