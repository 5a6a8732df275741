"""``to_json``, the one place payloads become span attribute values: a large value is cut
without being encoded whole, to the very text encoding it whole and cutting gives."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from google.genai import types

from runtime.telemetry.payloads import MAX_ATTRIBUTE_CHARS, TRUNCATION_MARK, to_json


def whole_then_cut(value: Any, limit: int) -> str:
    """What ``to_json`` promises, the plain way: all of it encoded, then cut."""
    text = json.dumps(value, default=_plain, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - len(TRUNCATION_MARK)] + TRUNCATION_MARK


def _plain(value: Any) -> Any:
    if isinstance(value, types.Part):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    return repr(value)


def shapes(seed: int) -> list[Any]:
    found = random.Random(seed)
    sizes = ([0, 3, 30, 300], [0, 1, 5, 30], [0, 1, 2, 5])

    def one(depth: int) -> Any:
        if depth > 4 or found.random() < 0.25:
            leaves = [1, 2.5, "x" * found.randint(0, 60), None, True, "é\u2028\x00", (1, 2)]
            return found.choice(leaves)
        n = found.choice(sizes[min(depth, 2)])
        if found.random() < 0.5:
            return [one(depth + 1) for _ in range(n)]
        keys = ["a", "b", *(f"k{i}" for i in range(n))]
        return {found.choice(keys): one(depth + 1) for _ in range(n)}

    return [one(0) for _ in range(100)]


REQUEST = [
    {
        "role": "user",
        "parts": [
            {"type": "tool_call", "id": f"adk-{i}", "name": "noop", "arguments": {"i": i}}
            for i in range(3000)
        ],
    }
]


@pytest.mark.parametrize("limit", [16, 416, MAX_ATTRIBUTE_CHARS])
def test_the_text_is_the_whole_encoding_cut(limit: int) -> None:
    odd: list[Any] = [
        REQUEST,
        {1: "int keys", 2: "become strings"},
        [types.Part(text="x" * 100)] * 500,
        {str(i): list(range(10)) for i in range(100)},
        [list(range(300))],
        ("a", "tuple"),
    ]
    for value in [*shapes(7), *odd]:
        assert to_json(value, limit=limit) == whole_then_cut(value, limit)


def test_a_large_value_is_not_encoded_past_what_is_kept() -> None:
    encoded = []

    class Counted:
        def __repr__(self) -> str:
            encoded.append(1)
            return "item"

    value = {"parts": [Counted() for _ in range(100_000)]}
    text = to_json(value)
    assert len(text) == MAX_ATTRIBUTE_CHARS and text.endswith(TRUNCATION_MARK)
    assert text.startswith('{"parts":["item","item",')
    assert len(encoded) < 5_000  # ~2,300 fit in 16 KB: the rest were never encoded


def test_values_too_deep_or_circular_still_come_out() -> None:
    circular: list[Any] = [1, 2]
    circular.append(circular)
    circular.extend(range(300))
    deep: list[Any] = []
    level = deep
    for _ in range(5_000):
        level.append([])
        level = level[0]
    for value in (circular, deep):
        text = to_json(value)
        assert "…[nested too deep]" in text and len(text) <= MAX_ATTRIBUTE_CHARS
