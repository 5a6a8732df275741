"""Aligning two sequences for the Compare page: pairs of steps, a word-level text diff, a
key-by-key mapping diff. Pure functions over plain values; no Django, no database.

A pair is ``same`` (keys equal, fields equal), ``changed`` (``fields`` names what differs;
``step`` when two different steps stand in the same place), ``left`` (only on the left) or
``right`` (only on the right).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, Generic, TypeVar

T = TypeVar("T")

SAME = "same"
CHANGED = "changed"
LEFT = "left"
RIGHT = "right"
STATUSES = (SAME, CHANGED, LEFT, RIGHT)

STEP_FIELD = "step"
"""The field a ``changed`` pair names when its two sides are different steps."""

WORDS_DIFF_MAX_CHARS = 20_000
"""Texts longer than this (either side) are not diffed word by word: shown whole, marked."""

VALUE_CHARS = 4_000
"""A value shown in a cell is cut here (the whole value is in the session's own page)."""


@dataclass(frozen=True)
class Pair(Generic[T]):
    """Two aligned items (either may be ``None``) and how they differ."""

    left: T | None
    right: T | None
    status: str
    fields: tuple[str, ...] = ()


def _fields_changed(a: Mapping[str, Any], b: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(name for name in dict.fromkeys([*a, *b]) if a.get(name) != b.get(name))


def align(
    left: Sequence[T],
    right: Sequence[T],
    *,
    key: Callable[[T], Hashable],
    fields: Callable[[T], Mapping[str, Any]],
) -> list[Pair[T]]:
    """``left`` and ``right`` aligned on ``key`` (a longest-matching-blocks alignment,
    :class:`difflib.SequenceMatcher` without its junk heuristic), in order.

    Items with equal keys pair up: ``same`` when ``fields`` of both are equal, else
    ``changed`` naming the fields that differ. Where the two sides have different items in
    the same place, they pair up in order as ``changed`` with :data:`STEP_FIELD` (plus the
    differing fields) and what is left over of the longer side is ``left`` or ``right``."""
    keys_left = [key(item) for item in left]
    keys_right = [key(item) for item in right]
    matcher = SequenceMatcher(a=keys_left, b=keys_right, autojunk=False)
    out: list[Pair[T]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for a, b in zip(left[i1:i2], right[j1:j2], strict=True):
                changed = _fields_changed(fields(a), fields(b))
                out.append(Pair(a, b, CHANGED if changed else SAME, changed))
            continue
        olds, news = list(left[i1:i2]), list(right[j1:j2])
        common = min(len(olds), len(news))
        for a, b in zip(olds[:common], news[:common], strict=True):
            out.append(Pair(a, b, CHANGED, (STEP_FIELD, *_fields_changed(fields(a), fields(b)))))
        out.extend(Pair(a, None, LEFT) for a in olds[common:])
        out.extend(Pair(None, b, RIGHT) for b in news[common:])
    return out


def pairs_count(pairs: Sequence[Pair[Any]]) -> dict[str, int]:
    """How many pairs of each status (every status present, 0 when none)."""
    counts = dict.fromkeys(STATUSES, 0)
    for pair in pairs:
        counts[pair.status] += 1
    return counts


@dataclass(frozen=True)
class Segment:
    """A piece of text and whether it is in both texts (``same``), only in the left one
    (``del``) or only in the right one (``ins``)."""

    text: str
    op: str


_WORDS = re.compile(r"\s+|\w+|[^\w\s]")


def words_diff(a: str, b: str) -> tuple[list[Segment], list[Segment]]:
    """The left and right texts as segments: words the other side lacks marked ``del`` (on
    the left) and ``ins`` (on the right). Texts over :data:`WORDS_DIFF_MAX_CHARS` are not
    diffed: each is one segment, ``same`` when equal, else ``del``/``ins`` whole."""
    if a == b:
        return [Segment(a, "same")] if a else [], [Segment(b, "same")] if b else []
    if len(a) > WORDS_DIFF_MAX_CHARS or len(b) > WORDS_DIFF_MAX_CHARS:
        return [Segment(a, "del")] if a else [], [Segment(b, "ins")] if b else []
    words_a, words_b = _WORDS.findall(a), _WORDS.findall(b)
    matcher = SequenceMatcher(a=words_a, b=words_b, autojunk=False)
    left: list[Segment] = []
    right: list[Segment] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            _add(left, "".join(words_a[i1:i2]), "same")
            _add(right, "".join(words_b[j1:j2]), "same")
        else:
            _add(left, "".join(words_a[i1:i2]), "del")
            _add(right, "".join(words_b[j1:j2]), "ins")
    return left, right


def _add(segments: list[Segment], text: str, op: str) -> None:
    if not text:
        return
    if segments and segments[-1].op == op:
        segments[-1] = Segment(segments[-1].text + text, op)
    else:
        segments.append(Segment(text, op))


@dataclass(frozen=True)
class KeyDiff:
    """One key of two mappings: its values as text (``None`` where the key is missing) and
    its status."""

    key: str
    left: str | None
    right: str | None
    status: str


_MISSING = object()


def mapping_diff(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[KeyDiff]:
    """``a`` and ``b`` key by key, in sorted key order, values shown as :func:`value_text`."""
    out = []
    for name in sorted({*a, *b}, key=str):
        old, new = a.get(name, _MISSING), b.get(name, _MISSING)
        if old is _MISSING:
            status = RIGHT
        elif new is _MISSING:
            status = LEFT
        else:
            status = SAME if old == new else CHANGED
        out.append(
            KeyDiff(
                key=str(name),
                left=None if old is _MISSING else value_text(old),
                right=None if new is _MISSING else value_text(new),
                status=status,
            )
        )
    return out


def value_text(value: Any, *, limit: int = VALUE_CHARS) -> str:
    """``value`` as compact JSON (keys sorted, non-ASCII kept), cut at ``limit`` characters
    with an ellipsis; a value JSON cannot carry is shown as its ``repr``."""
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def delta(left: float | None, right: float | None) -> float | None:
    """``right − left``, or ``None`` when either is unknown."""
    if left is None or right is None:
        return None
    return right - left
