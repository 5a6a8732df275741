"""Untrusted strings and JSON made safe to store, and checked where people type them.

Two rules, one module:

- **What agents produce is stored, never refused.** Model text, tool arguments and results,
  span attributes, state deltas: a lone surrogate (``"\\ud800"``, which a JSON escape can
  carry into a Python string) or a NUL character cannot be stored by PostgreSQL (neither in
  ``text`` nor in ``jsonb``) and a lone surrogate not by SQLite either. :func:`storable`
  replaces each with U+FFFD and counts them, so the caller can mark what it stored; values
  nested deeper than :data:`MAX_STORED_DEPTH` are cut there (:data:`TOO_DEEP` in their place);
  ``NaN`` and the infinities, which JSON cannot carry (``jsonb`` refuses them, a browser's
  ``JSON.parse`` fails on them), become the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``;
  bytes (a tool may return a blob) become their text when they are UTF-8, else
  ``"base64:…"``.
- **What people type is checked.** :func:`text_problem` says why a string from a form or a
  client message cannot be taken as given; :func:`json_loads_bounded` refuses JSON nested
  deeper than :data:`MAX_JSON_DEPTH` before parsing it (no ``RecursionError``, ever).
"""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Mapping
from typing import Any

REPLACEMENT = "\ufffd"
MAX_JSON_DEPTH = 64
"""Deepest JSON a person may submit (a client message, a form)."""
MAX_STORED_DEPTH = 64
"""Deepest value stored from an agent: deeper parts are replaced by :data:`TOO_DEEP`."""
TOO_DEEP = "[nested too deep]"

_NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
# One pass over the text's tokens that matter for depth: a string (escapes included; an
# unterminated one runs to the end, so no position is scanned twice: linear time on any
# input) or a bracket. Brackets inside strings are consumed with them and never count.
_DEPTH_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)


class JsonTooDeep(ValueError):
    """JSON nested deeper than allowed."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"JSON nested deeper than {limit} levels")
        self.limit = limit


def text_storable(text: str) -> tuple[str, int]:
    """``text`` with every NUL and surrogate code point replaced by U+FFFD, and how many
    were replaced (0: ``text`` itself is returned)."""
    if _clean(text):
        return text, 0
    return _UNSTORABLE.subn(REPLACEMENT, text)


def storable(value: Any, *, max_depth: int = MAX_STORED_DEPTH) -> tuple[Any, int]:
    """``value`` (JSON-like: dicts, lists, tuples, strings, numbers, ``None``) with every
    string made storable — keys too — non-finite floats and bytes as strings, and containers
    past ``max_depth`` replaced by :data:`TOO_DEEP`; and the number of changes (replaced
    characters, floats, bytes that are not UTF-8 and cut containers).
    Returns ``value`` itself when nothing changed; never mutates it. Other objects are
    returned as they are (their own serializer decides). Any input depth is safe: the walk
    stops at ``max_depth``."""
    changes = 0

    def fix_text(text: str) -> str:
        nonlocal changes
        fixed, count = text_storable(text)
        changes += count
        return fixed

    def fix(item: Any, depth: int) -> Any:
        nonlocal changes
        if isinstance(item, str):
            return fix_text(item)
        if isinstance(item, float) and not math.isfinite(item):
            changes += 1
            return _NON_FINITE[str(item)]
        if isinstance(item, (bytes, bytearray)):
            try:  # bytes are not JSON: their text when they are UTF-8, else base64
                return fix_text(bytes(item).decode("utf-8"))
            except UnicodeDecodeError:
                changes += 1
                return "base64:" + base64.b64encode(item).decode("ascii")
        if not isinstance(item, (dict, list, tuple)):
            return item
        if depth >= max_depth:
            changes += 1
            return TOO_DEEP
        if isinstance(item, dict):
            return {
                fix_text(k) if isinstance(k, str) else k: fix(v, depth + 1) for k, v in item.items()
            }
        return [fix(v, depth + 1) for v in item]

    if not _may_need_fixing(value, max_depth):
        return value, 0
    fixed = fix(value, 0)
    return (fixed, changes) if changes else (value, 0)


def storable_json(value: Any, *, max_depth: int = MAX_STORED_DEPTH) -> tuple[Any, int, str | None]:
    """:func:`storable` of ``value``, with the JSON text of what it returns
    (``ensure_ascii`` off), encoded once: most values are checked on that text alone, in
    C, instead of walking them in Python. The text is ``None`` when the value is not JSON
    (an object of another kind: its own serializer decides, as for :func:`storable`)."""
    try:
        text = _stored_json(value)
    except (TypeError, ValueError, RecursionError):
        text = None  # NaN, bytes, another object, very deep: the walk decides
    if text is not None and _json_clean(text, max_depth):
        return value, 0, text
    fixed, changes = storable(value, max_depth=max_depth)
    try:
        return fixed, changes, _stored_json(fixed)
    except (TypeError, ValueError):
        return fixed, changes, None


# One encoder for every value stored (``json.dumps`` with arguments makes one per call).
_stored_json = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode


def _json_clean(text: str, max_depth: int) -> bool:
    """Whether JSON ``text`` surely holds no NUL (escaped ``\\u0000``), no surrogate and no
    container deeper than ``max_depth`` (when unsure — a backslash before ``u0000``, many
    brackets inside strings — ``False``, and the caller walks the value)."""
    if "\\u0000" in text:
        return False
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return False
    brackets = text.count("[") + text.count("{")
    return brackets <= max_depth or json_depth(text) <= max_depth


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be taken as typed (``"contains a NUL character"``, ``"contains
    an unpaired surrogate"``), or ``None`` when it can."""
    if _clean(text):
        return None
    found = _UNSTORABLE.search(text)
    if found is None:
        return None
    if found.group() == "\x00":
        return "contains a NUL character"
    return "contains an unpaired surrogate"


def value_problem(value: Any, *, max_depth: int = MAX_JSON_DEPTH) -> str | None:
    """:func:`text_problem` for every string (keys too) of a JSON-like value, every number
    finite (JSON has no NaN or infinity; ``1e400`` parses to one), and its depth against
    ``max_depth``; the first problem found, naming where (``"key 'a': contains …"``)."""
    stack: list[tuple[Any, int, str]] = [(value, 0, "")]
    while stack:
        item, depth, where = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return f"{where}a number that is not finite (NaN, an infinity, or too large)"
        if isinstance(item, str):
            problem = text_problem(item)
            if problem:
                return f"{where}{problem}"
        elif isinstance(item, (dict, list, tuple)):
            if depth >= max_depth:
                return f"nested deeper than {max_depth} levels"
            if isinstance(item, Mapping):
                for key, inner in item.items():
                    if isinstance(key, str) and (problem := text_problem(key)):
                        return f"a key {problem}"
                    stack.append((inner, depth + 1, f"{where}key {_shown(key)}: "))
            else:
                stack.extend((inner, depth + 1, where) for inner in item)
    return None


def json_depth(text: str) -> int:
    """How deeply the JSON in ``text`` nests (``1`` for ``[]``), without parsing it."""
    depth = deepest = 0
    for token in _DEPTH_TOKENS.findall(text):
        if token in ("[", "{"):
            depth += 1
            deepest = max(deepest, depth)
        elif token in ("]", "}"):
            depth -= 1
    return deepest


def json_loads_bounded(
    text: str | bytes, *, max_depth: int = MAX_JSON_DEPTH, **options: Any
) -> Any:
    """``json.loads(text, **options)`` that first refuses (:class:`JsonTooDeep`, a
    ``ValueError``) JSON nested deeper than ``max_depth``; other bad JSON raises
    ``json.JSONDecodeError`` as usual. Text with fewer brackets than that is not scanned."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    if text.count("[") + text.count("{") > max_depth and json_depth(text) > max_depth:
        raise JsonTooDeep(max_depth)
    return json.loads(text, **options)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON: JSON has no such number")


def json_loads_strict(text: str | bytes, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """:func:`json_loads_bounded` that also refuses ``NaN``, ``Infinity`` and ``-Infinity``
    (Python's ``json`` takes them; JSON, PostgreSQL's ``jsonb`` and browsers do not)."""
    return json_loads_bounded(text, max_depth=max_depth, parse_constant=_no_constant)


def _may_need_fixing(value: Any, max_depth: int) -> bool:
    """Cheap pre-check: is any string unstorable or any container too deep?"""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if not _clean(item):
                return True
        elif isinstance(item, float):
            if not math.isfinite(item):
                return True
        elif isinstance(item, (bytes, bytearray)):
            return True
        elif isinstance(item, (dict, list, tuple)):
            if depth >= max_depth:
                return True
            if isinstance(item, dict):
                for key in item:
                    if isinstance(key, str) and not _clean(key):
                        return True
                stack.extend((v, depth + 1) for v in item.values())
            else:
                stack.extend((v, depth + 1) for v in item)
    return False


def _clean(text: str) -> bool:
    """Whether ``text`` has no NUL and no surrogate code point (fast paths: ASCII, then
    UTF-8 encoding, which fails exactly on surrogates — several times faster than a regex
    search over non-ASCII text)."""
    if "\x00" in text:
        return False
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(key: Any) -> str:
    text = key if isinstance(key, str) else repr(key)
    return repr(text[:40] + ("…" if len(text) > 40 else ""))
