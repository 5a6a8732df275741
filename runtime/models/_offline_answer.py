"""The offline model's answers: what a tool returned, in Markdown, said to be offline once.

Every text answer starts with :data:`PREFIX`. Values are passed on as they are (the renderer
that shows an answer is the one to make them safe), except in a Markdown table, where a cell
must not break the table, and in the code span that shows the call.
"""

from __future__ import annotations

import json
import re
from typing import Any

from google.genai import types

PREFIX = "Offline model: "
"""How every text answer of the offline model begins: the one place it says it is offline."""

MAX_TABLE_ROWS = 20
_MAX_VALUE = 300


def table_cell(value: str) -> str:
    """``value`` as one cell of a Markdown table: on one line, ``|`` and ``\\`` escaped."""
    return re.sub(r"([\\|])", r"\\\1", " ".join(value.split()))


def code(value: str) -> str:
    """``value`` as an inline code span (a fence longer than any backtick run inside)."""
    flat = " ".join(value.split())
    fence = "`" * (max((len(r) for r in re.findall(r"`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def shown(value: Any) -> str:
    """A value as short plain text: strings as they are, anything else as JSON."""
    if isinstance(value, str):
        text = value
    elif value is None:
        text = "nothing"
    else:
        text = json.dumps(value, default=str, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _MAX_VALUE else text[:_MAX_VALUE] + "…"


def call_text(call: types.FunctionCall | None, name: str) -> str:
    """``name(arg="value", …)`` in a code span: the call as the model made it."""
    args = (call.args or {}) if call is not None else {}
    inner = ", ".join(
        f"{k}={shown(json.dumps(v, default=str, ensure_ascii=False))}" for k, v in args.items()
    )
    return code(f"{name}({inner})")


def _table(columns: list[Any], rows: list[Any]) -> str:
    def cell(value: Any) -> str:
        return table_cell(shown(value)) or " "

    lines = [
        "| " + " | ".join(cell(c) for c in columns) + " |",
        "| " + " | ".join("---" for _ in columns) + " |",
    ]
    for row in rows[:MAX_TABLE_ROWS]:
        values = list(row) if isinstance(row, (list, tuple)) else [row]
        values += [""] * (len(columns) - len(values))
        lines.append("| " + " | ".join(cell(v) for v in values[: len(columns)]) + " |")
    if len(rows) > MAX_TABLE_ROWS:
        lines.append(f"\n… and {len(rows) - MAX_TABLE_ROWS} more rows.")
    return "\n".join(lines)


def _tabular(data: dict[str, Any]) -> str | None:
    """``{"columns": [...], "rows": [[...], ...]}`` said as a value or a table, else None."""
    columns, rows = data.get("columns"), data.get("rows")
    if not isinstance(columns, list) or not isinstance(rows, list) or not columns:
        return None
    if not rows:
        return "no rows."
    first = rows[0]
    if len(rows) == 1 and len(columns) == 1 and isinstance(first, (list, tuple)) and first:
        return f"{shown(columns[0])} = {shown(first[0])}."
    count = "1 row" if len(rows) == 1 else f"{len(rows)} rows"
    return f"{count}:\n\n{_table(columns, rows)}"


def result_sentence(response: types.FunctionResponse, call: types.FunctionCall | None) -> str:
    """What one tool returned, as one sentence (or a sentence and a table)."""
    name = response.name or "the tool"
    data = response.response or {}
    made = call_text(call, name)
    if "error" in data:
        said = shown(data["error"]).strip()
        return f"{made} reported an error: {said}{'' if said[-1:] in '.!?' else '.'}"
    tabular = _tabular(data)
    if tabular is not None:
        return f"{made} returned {tabular}"
    if set(data) == {"result"}:
        said = shown(data["result"])
        if len(said.split()) > 3:  # a sentence of its own, kept as it is
            return f"{made} returned: {said}{'' if said[-1:] in '.!?' else '.'}"
    else:
        # Keys as words ("known issue: …"); values as they are.
        said = ", ".join(f"{k.replace('_', ' ')}: {shown(v)}" for k, v in data.items())
    return f"{made} returned {(said or 'nothing').rstrip('.')}."


def answer_from(responses: list[types.FunctionResponse], calls: list[types.FunctionCall]) -> str:
    """The answer to a turn of tool results: one sentence per result, each with its call."""
    sentences = []
    for response in responses:
        call = next(
            (
                c
                for c in calls
                if c.name == response.name and (c.id or None) == (response.id or None)
            ),
            next((c for c in calls if c.name == response.name), None),
        )
        sentences.append(result_sentence(response, call))
    joint = "\n\n" if any("\n" in s for s in sentences) else " "
    return PREFIX + joint.join(sentences)
