"""core.hygiene: what agents produce is made storable (and counted); what people type is
checked; JSON depth is refused before parsing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentdash.core.hygiene import (
    REPLACEMENT,
    TOO_DEEP,
    JsonTooDeep,
    json_depth,
    json_loads_bounded,
    storable,
    storable_json,
    text_problem,
    text_storable,
    value_problem,
)


def nested(levels: int, leaf: Any = "x") -> Any:
    value = leaf
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("text", "fixed", "count"),
    [
        ("plain", "plain", 0),
        ("ünïcødé ✓ 😀", "ünïcødé ✓ 😀", 0),
        ("a\x00b", f"a{REPLACEMENT}b", 1),
        ("\ud800", REPLACEMENT, 1),
        ("x\udfff\ud83d", f"x{REPLACEMENT}{REPLACEMENT}", 2),
    ],
)
def test_text_storable(text: str, fixed: str, count: int) -> None:
    assert text_storable(text) == (fixed, count)
    fixed.encode("utf-8")  # what a database takes


def test_storable_fixes_keys_values_floats_and_depth_and_counts() -> None:
    value = {
        "k\x00": ["\ud800", {"inner": float("nan")}],
        "inf": float("inf"),
        "deep": nested(100),
        "fine": 1.5,
    }
    fixed, count = storable(value)
    assert fixed["k" + REPLACEMENT] == [REPLACEMENT, {"inner": "NaN"}]
    assert fixed["inf"] == "Infinity" and fixed["fine"] == 1.5
    assert TOO_DEEP in json.dumps(fixed["deep"])
    assert count == 5  # the key, the value, two floats, one cut
    json.dumps(fixed, allow_nan=False).encode("utf-8")
    assert "k\x00" in value  # never mutated


def test_storable_turns_bytes_into_text() -> None:
    fixed, count = storable({"text": b"caf\xc3\xa9", "blob": b"\xff\x00", "nul": b"a\x00"})
    assert fixed == {"text": "café", "blob": "base64:/wA=", "nul": f"a{REPLACEMENT}"}
    assert count == 2  # the blob, the NUL


def test_storable_returns_the_value_itself_when_nothing_changes() -> None:
    value = {"a": [1, "two", {"three": None}]}
    fixed, count = storable(value)
    assert fixed is value and count == 0


def test_storable_survives_any_depth() -> None:
    fixed, count = storable(nested(100_000))
    assert count == 1 and json_depth(json.dumps(fixed)) <= 65


@pytest.mark.parametrize(
    "value",
    [
        {"k\x00": ["\ud800", {"inner": float("nan")}], "inf": float("inf"), "fine": 1.5},
        {"deep": nested(100), "wide": [[1]] * 200},
        {"blob": b"\xff\x00", "text": b"caf\xc3\xa9"},
        nested(100_000),
        {"emoji": "😀", "escaped": "a \\u0000 b", "brackets": "[[[[{{{{" * 40},
        {"a": [1, "two", {"three": None}], "ünï": "cødé"},
        [],
    ],
)
def test_storable_json_is_storable_with_its_text(value: Any) -> None:
    """The value and count are storable's; the text is the JSON of what is returned,
    storable too (no NUL escape, no surrogate, nothing too deep)."""
    fixed, count, text = storable_json(value)
    expected, expected_count = storable(value)
    assert count == expected_count
    assert text is not None and json.loads(text) == json.loads(json.dumps(expected))
    text.encode("utf-8")
    assert "\\u0000" not in text.replace("\\\\", "") and json_depth(text) <= 65
    if not count:
        assert fixed is value


def test_storable_json_has_no_text_for_what_is_not_json() -> None:
    thing = object()
    fixed, count, text = storable_json({"thing": thing})
    assert fixed == {"thing": thing} and count == 0 and text is None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("fine ✓", None),
        ("a\x00", "contains a NUL character"),
        ("\ud800", "contains an unpaired surrogate"),
    ],
)
def test_text_problem(text: str, problem: str | None) -> None:
    assert text_problem(text) == problem


def test_value_problem_names_where() -> None:
    assert value_problem({"a": {"b": "\x00"}}) == "key 'a': key 'b': contains a NUL character"
    assert value_problem({"\ud800": 1}) == "a key contains an unpaired surrogate"
    assert value_problem(nested(65)) == "nested deeper than 64 levels"
    assert value_problem({"ok": [1, "two", 2.5]}) is None
    for bad in (float("nan"), float("inf"), float("-inf")):
        assert value_problem({"a": [1.0, bad]}) == (
            "key 'a': a number that is not finite (NaN, an infinity, or too large)"
        )


def test_json_depth_ignores_brackets_in_strings() -> None:
    assert json_depth('{"a": "[[[[{{{{", "b": [1, [2]]}') == 3
    assert json_depth(r'["\"[[[["]') == 1
    assert json_depth("5") == 0


def test_json_loads_bounded_refuses_deep_json_before_parsing() -> None:
    with pytest.raises(JsonTooDeep):
        json_loads_bounded("[" * 1_000_000 + "]" * 1_000_000)
    assert json_loads_bounded(json.dumps(nested(64))) == nested(64)
    with pytest.raises(json.JSONDecodeError):
        json_loads_bounded("{nope")
