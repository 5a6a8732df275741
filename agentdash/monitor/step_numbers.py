"""The model and tool calls' numbers of a range, from the step rollups
(``spans.step_reads``): per bucket and in total — calls, errors, latency percentiles
(read from the duration bins: within 12.3 % of exact), tokens, and their cost priced by the
price table as it is now — and per model and tool."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from agentdash.spans.rollups import FIRST_TOKEN, bin_seconds
from agentdash.spans.step_reads import StepRead
from agentdash.spans.totals import price_book
from agentdash.spans.usage import PriceBook, cost_of

QUANTILES = (("p50", 0.50), ("p95", 0.95), ("p99", 0.99))


@dataclass
class KindNumbers:
    """One kind's calls (model or tool) in a bucket or a range."""

    calls: int = 0
    errors: int = 0
    tokens: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    bins: dict[int, int] = field(default_factory=dict)

    def add(self, values: Iterable[int], bins: Iterable[int]) -> None:
        n, errors, *tokens = values
        self.calls += n
        self.errors += errors
        for index, count in enumerate(bins):
            if count:
                self.bins[index] = self.bins.get(index, 0) + count
        for i, value in enumerate(tokens):
            self.tokens[i] += value or 0

    def percentiles(self) -> dict[str, float | None]:
        """p50, p95, p99 by nearest rank over the bins (``None`` with no call)."""
        total = sum(self.bins.values())
        found: dict[str, float | None] = {}
        ordered = sorted(self.bins.items())
        for name, q in QUANTILES:
            if not total:
                found[name] = None
                continue
            rank, seen = max(1, math.ceil(q * total)), 0
            for index, count in ordered:
                seen += count
                if seen >= rank:
                    found[name] = round(bin_seconds(index), 6)
                    break
        return found


@dataclass
class BucketSteps:
    model: KindNumbers = field(default_factory=KindNumbers)
    tool: KindNumbers = field(default_factory=KindNumbers)
    first_token: KindNumbers = field(default_factory=KindNumbers)
    """Streamed model calls: their count, and the bins of their time to the first token."""
    cost_usd: float = 0.0
    unpriced_calls: int = 0


def steps_by_bucket(read: StepRead) -> dict[int, BucketSteps]:
    """The read's numbers per bucket (its start, unix seconds); only buckets with calls."""
    buckets: dict[int, BucketSteps] = {}
    for (at, kind), values in read.by_bucket.items():
        found = buckets.setdefault(at, BucketSteps())
        kinds = {"model": found.model, "tool": found.tool, FIRST_TOKEN: found.first_token}
        kinds[kind].add(values, read.bins[(at, kind)])
    prices = price_book()
    for (at, model), (calls, *tokens) in read.model_tokens.items():
        cost = _cost(prices, model, tokens)
        found = buckets.setdefault(at, BucketSteps())
        if cost is None:
            found.unpriced_calls += calls
        else:
            found.cost_usd += cost
    return buckets


def steps_total(buckets: Iterable[BucketSteps]) -> BucketSteps:
    """The buckets' numbers added up."""
    total = BucketSteps()
    for bucket in buckets:
        for mine, theirs in (
            (total.model, bucket.model),
            (total.tool, bucket.tool),
            (total.first_token, bucket.first_token),
        ):
            mine.calls += theirs.calls
            mine.errors += theirs.errors
            mine.tokens = [a + b for a, b in zip(mine.tokens, theirs.tokens, strict=True)]
            for index, count in theirs.bins.items():
                mine.bins[index] = mine.bins.get(index, 0) + count
        total.cost_usd += bucket.cost_usd
        total.unpriced_calls += bucket.unpriced_calls
    return total


def step_numbers(steps: BucketSteps) -> dict[str, Any]:
    """The JSON numbers of a bucket's (or a range's) calls."""
    tokens = steps.model.tokens
    return {
        "model_calls": steps.model.calls,
        "model_errors": steps.model.errors,
        "model_seconds": steps.model.percentiles(),
        "streamed_calls": steps.first_token.calls,
        "first_token_seconds": steps.first_token.percentiles(),
        "tokens_in": tokens[0],
        "tokens_out": tokens[1],
        "tokens_cached": tokens[2],
        "tokens_thinking": tokens[3],
        "cost_usd": round(steps.cost_usd, 8),
        "unpriced_calls": steps.unpriced_calls,
        "tool_calls": steps.tool.calls,
        "tool_errors": steps.tool.errors,
        "tool_seconds": steps.tool.percentiles(),
    }


def by_name(read: StepRead, kind: str) -> list[dict[str, Any]]:
    """Calls, errors and tokens per model or tool (models: and their cost), the most called
    first."""
    prices = price_book() if kind == "model" else None
    rows = []
    for (row_kind, name), (calls, errors, *tokens) in read.by_name.items():
        if row_kind != kind:
            continue
        row: dict[str, Any] = {
            "name": name or "(unnamed)", "calls": calls, "errors": errors,
            "tokens_in": tokens[0] or 0, "tokens_out": tokens[1] or 0,
        }  # fmt: skip
        if prices is not None:
            cost = _cost(prices, name, tokens)
            row["cost_usd"] = None if cost is None else round(cost, 8)
        rows.append(row)
    return sorted(rows, key=lambda r: (-r["calls"], r["name"]))


def _cost(prices: PriceBook, model: str, tokens: Iterable[int | None]) -> float | None:
    price = prices.price_of(model)
    if price is None:
        return None
    t_in, t_out, cached, thinking = (int(t or 0) for t in tokens)
    return float(cost_of(price, tokens_in=t_in, tokens_out=t_out, cached=cached,
                         thinking=thinking))  # fmt: skip
