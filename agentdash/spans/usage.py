"""What model calls used and cost: a span's tokens as the store keeps them (read out of its
``gen_ai.usage.*`` attributes when it is written), the price of a model, and the sums over a
run or a session.

A cost is linear in the tokens — ``input × input price + cached × (cached price − input
price) + output × output price + thinking × (thinking price − output price)``, per million —
so the cost of a sum of spans of one model is exactly the sum of their costs: totals are
computed from per-model sums, never span by span, and still equal the sum over the spans
(in :class:`~decimal.Decimal`, to the last digit). Input counts cached tokens and output
counts thinking, as the OTel GenAI conventions count them (docs/RUNTIME.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any, Protocol

from runtime.telemetry.attributes import GenAI

MAX_TOKENS = 10**12
"""The largest count kept; anything above is no count. A trillion tokens in one call is far
beyond any model, and the bound keeps sums exact: 9 million such spans before a 64-bit sum
(SQLite's) would overflow, and a browser reads them as doubles without loss."""

MODEL_CHARS = 128
MILLION = Decimal(1_000_000)

_COLUMNS = (
    ("tokens_in", GenAI.USAGE_INPUT_TOKENS),
    ("tokens_out", GenAI.USAGE_OUTPUT_TOKENS),
    ("tokens_cached", GenAI.USAGE_CACHE_READ_INPUT_TOKENS),
    ("tokens_thinking", GenAI.USAGE_REASONING_OUTPUT_TOKENS),
)
USAGE_COLUMNS = ("usage_model", *(column for column, _ in _COLUMNS))
"""The span's columns the store fills from its attributes."""


def token_count(value: Any) -> int | None:
    """A token count as an attribute may carry it: a whole number from 0 to
    :data:`MAX_TOKENS` (an int, a float without fraction, or digits), else ``None``."""
    if isinstance(value, bool):
        return None
    whole_float = isinstance(value, float) and value.is_integer()
    digits = isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 16
    if whole_float or digits:
        value = int(value)
    if isinstance(value, int) and 0 <= value <= MAX_TOKENS:
        return value
    return None


def usage_columns(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """The usage columns of a span with these attributes. A span is a model call's when it
    has input or output tokens; any other span gets empty columns (its cached or thinking
    counts alone mean nothing to a total). The model is the one that answered
    (``gen_ai.response.model``), else the one asked."""
    if not isinstance(attributes, Mapping):
        attributes = {}
    counts = {column: token_count(attributes.get(key)) for column, key in _COLUMNS}
    if counts["tokens_in"] is None and counts["tokens_out"] is None:
        return {"usage_model": "", **dict.fromkeys(counts)}
    model = attributes.get(GenAI.RESPONSE_MODEL) or attributes.get(GenAI.REQUEST_MODEL) or ""
    return {"usage_model": str(model)[:MODEL_CHARS], **counts}


class Price(Protocol):
    """A row of the price table (``ModelPrice``), as far as costs go."""

    model: str
    match: str
    input_per_mtok: Decimal
    output_per_mtok: Decimal
    cached_input_per_mtok: Decimal | None
    thinking_per_mtok: Decimal | None
    as_of: date
    edited_on: date | None


def price_date(price: Price) -> date:
    """The day the figures in use are of: the row's ``as_of``, or the day an amount was
    last edited when that edit left ``as_of`` as it was (``edited_on``), whichever is later."""
    edited = price.edited_on
    return edited if edited is not None and edited > price.as_of else price.as_of


def _key(model: str) -> str:
    model = model.strip().lower()
    return model.removeprefix("models/")


class PriceBook:
    """The price table, read once, answering which row prices a model: the row of its exact
    name, else the prefix row with the longest name it starts with, else none. Names compare
    without case and without a leading ``models/``."""

    def __init__(self, prices: Iterable[Price] | Callable[[], Iterable[Price]]) -> None:
        """``prices``: the rows, or a function that reads them — called at the first
        question, so that a book nobody asks costs nothing."""
        self._source = prices
        self._exact: dict[str, Price] = {}
        self._prefixes: list[tuple[str, Price]] = []
        self._found: dict[str, Price | None] = {}
        self._read = False

    def _load(self) -> None:
        self._read = True
        source = self._source
        for price in source() if callable(source) else source:
            key = _key(price.model)
            if price.match == "exact":
                self._exact[key] = price
            else:
                self._prefixes.append((key, price))
                self._exact.setdefault(key, price)  # a prefix row prices its own name too
        self._prefixes.sort(key=lambda pair: len(pair[0]), reverse=True)

    def read(self) -> PriceBook:
        """Read the table now, if it was not read yet (then no question asks the database)."""
        if not self._read:
            self._load()
        return self

    def price_of(self, model: str) -> Price | None:
        """The row that prices ``model``, or ``None``."""
        if not self._read:
            self._load()
        key = _key(model)
        if key not in self._found:
            found = self._exact.get(key)
            if found is None and key:
                found = next((p for prefix, p in self._prefixes if key.startswith(prefix)), None)
            self._found[key] = found
        return self._found[key]


def cost_of(
    price: Price, *, tokens_in: int, tokens_out: int, cached: int, thinking: int
) -> Decimal:
    """US dollars for these tokens at ``price`` (cached tokens are part of ``tokens_in``,
    thinking tokens part of ``tokens_out``; either without its own price costs as the rest)."""
    cached_price = price.cached_input_per_mtok
    thinking_price = price.thinking_per_mtok
    if cached_price is None:
        cached_price = price.input_per_mtok
    if thinking_price is None:
        thinking_price = price.output_per_mtok
    total = (
        tokens_in * price.input_per_mtok
        + cached * (cached_price - price.input_per_mtok)
        + tokens_out * price.output_per_mtok
        + thinking * (thinking_price - price.output_per_mtok)
    )
    return total / MILLION


def money(value: Decimal | None) -> float | None:
    """A cost for JSON: dollars as a number (``None`` stays ``None``)."""
    return None if value is None else float(value)


def span_usage(columns: Mapping[str, Any], prices: PriceBook) -> dict[str, Any] | None:
    """A span's ``usage`` as the pages send it — ``input``, ``output``, ``cached``,
    ``thinking`` (``None`` when the model did not report it), ``cost_usd`` (``None`` when
    its model has no price), ``model``, ``price_as_of`` (:func:`price_date` of the price row,
    ISO) — from
    its usage columns; ``None`` for a span that is no model call."""
    tokens_in, tokens_out = columns.get("tokens_in"), columns.get("tokens_out")
    if tokens_in is None and tokens_out is None:
        return None
    model = str(columns.get("usage_model") or "")
    cached, thinking = columns.get("tokens_cached"), columns.get("tokens_thinking")
    price = prices.price_of(model)
    cost = None
    if price is not None:
        cost = cost_of(
            price,
            tokens_in=tokens_in or 0,
            tokens_out=tokens_out or 0,
            cached=cached or 0,
            thinking=thinking or 0,
        )
    return {
        "input": tokens_in,
        "output": tokens_out,
        "cached": cached,
        "thinking": thinking,
        "cost_usd": money(cost),
        "model": model,
        "price_as_of": price_date(price).isoformat() if price is not None else None,
    }


@dataclass
class Totals:
    """Sums over model calls (a run's, a session's): tokens, the number of ``calls``, the
    ``cost`` of those whose model has a price and the models that have none."""

    input: int = 0
    output: int = 0
    cached: int | None = None
    thinking: int | None = None
    calls: int = 0
    cost: Decimal = Decimal(0)
    priced_calls: int = 0
    unpriced: set[str] = field(default_factory=set)

    def add_group(self, group: Mapping[str, Any], prices: PriceBook) -> None:
        """Add one model's sums (``usage_model``, ``tokens_*`` sums, ``calls``)."""
        tokens_in, tokens_out = group["tokens_in"] or 0, group["tokens_out"] or 0
        cached, thinking = group["tokens_cached"], group["tokens_thinking"]
        self.input += tokens_in
        self.output += tokens_out
        if cached is not None:
            self.cached = (self.cached or 0) + cached
        if thinking is not None:
            self.thinking = (self.thinking or 0) + thinking
        self.calls += group["calls"]
        price = prices.price_of(group["usage_model"] or "")
        if price is None:
            self.unpriced.add(group["usage_model"] or "")
            return
        self.priced_calls += group["calls"]
        self.cost += cost_of(
            price,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            cached=cached or 0,
            thinking=thinking or 0,
        )

    def as_json(self) -> dict[str, Any]:
        """``input``, ``output``, ``cached``, ``thinking`` (``None``: no call reported any),
        ``calls``, ``priced_calls`` (those whose model has a price), ``cost_usd`` (of the
        priced calls; ``None`` when calls were made and none has a price, 0 with no calls),
        ``unpriced`` (the models without a price, sorted)."""
        unknown = self.calls > 0 and self.priced_calls == 0
        return {
            "input": self.input,
            "output": self.output,
            "cached": self.cached,
            "thinking": self.thinking,
            "calls": self.calls,
            "priced_calls": self.priced_calls,
            "cost_usd": None if unknown else money(self.cost),
            "unpriced": sorted(self.unpriced),
        }
