"""The value objects of the Compare page (what :mod:`agentdash.dashboard.compare.reads` reads and
compares): a side's turns, steps and spans, the aligned turns, the totals — and how their
numbers are shown (durations, deltas with their sign). No database here; every string is
raw, agents' output included, for the template to escape."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentdash.dashboard.compare.align import (
    SAME,
    KeyDiff,
    Pair,
    Segment,
    delta,
    value_text,
)

if TYPE_CHECKING:
    from agentdash.agent_sessions.models import AgentSession
    from agentdash.runs.models import Run

MAX_DEPTH_SHOWN = 12
"""Deeper spans are drawn at this indentation."""


def ms_text(ms: float | None) -> str:
    """A duration in milliseconds as people read it: ``"840 ms"``, ``"2.4 s"``, ``""`` when
    unknown."""
    if ms is None:
        return ""
    if abs(ms) < 10:
        return f"{ms:.1f} ms"
    if abs(ms) < 1000:
        return f"{ms:.0f} ms"
    return f"{ms / 1000:.2f} s"


def _ms(ns: int | None) -> float | None:
    return None if ns is None else ns / 1e6


def amount_text(value: float | None, unit: str) -> str:
    """A total as shown: a duration (``unit`` ``"ms"``) or a whole count."""
    if value is None:
        return "—"
    return ms_text(value) if unit == "ms" else f"{int(value):,}"


MS_NOISE = 0.05
"""Durations closer than this (ms) count as equal: they would show as ``+0.0 ms``."""


def _negligible(value: float, unit: str) -> bool:
    return value == 0 or (unit == "ms" and abs(value) < MS_NOISE)


def delta_text(value: float | None, unit: str) -> str:
    """A difference with its sign (``+1,204``, ``−35 ms``, ``±0``); ``""`` when unknown."""
    if value is None:
        return ""
    if _negligible(value, unit):
        return "±0"
    sign = "+" if value > 0 else "−"
    return sign + amount_text(abs(value), unit)


def delta_class(value: float | None, unit: str = "") -> str:
    if value is None or _negligible(value, unit):
        return "delta-zero"
    return "delta-up" if value > 0 else "delta-down"


@dataclass
class Step:
    """One thing a turn did, as its stored events show it."""

    kind: str  # tool | text | state | error
    name: str  # the tool's name; the author of a text, state change or error
    seq: int  # the position of the event that made it
    args: Any = None
    result: Any = None
    text: str = ""
    html: str = ""
    state: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    call_id: str = ""
    answered: bool = False

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.name}"

    def compared(self) -> dict[str, Any]:
        """The fields two steps of the same key are compared on."""
        return {
            "args": self.args,
            "result": self.result,
            "text": self.text,
            "state": self.state,
            "error": self.error,
        }

    @property
    def args_text(self) -> str:
        return "" if self.args is None else value_text(self.args)

    @property
    def result_text(self) -> str:
        return "" if self.result is None else value_text(self.result)

    @property
    def state_text(self) -> str:
        return value_text(self.state) if self.state else ""


@dataclass
class SpanNode:
    """A span of a turn's tree, in depth-first order."""

    kind: str
    label: str
    depth: int
    status: str
    duration_ns: int | None
    tokens_in: int | None
    tokens_out: int | None

    @property
    def key(self) -> str:
        return f"{self.kind or 'span'}:{self.label}"

    @property
    def indent(self) -> int:
        return min(self.depth, MAX_DEPTH_SHOWN)

    def compared(self) -> dict[str, Any]:
        return {"status": self.status, "tokens_in": self.tokens_in, "tokens_out": self.tokens_out}

    @property
    def duration_text(self) -> str:
        return ms_text(_ms(self.duration_ns))

    @property
    def tokens_text(self) -> str:
        if self.tokens_in is None and self.tokens_out is None:
            return ""
        return f"{self.tokens_in or 0:,} in · {self.tokens_out or 0:,} out"


@dataclass
class Turn:
    """One invocation of a side: the user's message and what followed."""

    invocation_id: str
    user_text: str = ""
    user_html: str = ""
    steps: list[Step] = field(default_factory=list)
    spans: list[SpanNode] = field(default_factory=list)
    run_id: int | None = None
    run_status: str = ""
    duration_ns: int | None = None

    @property
    def answer(self) -> str:
        """The last text an agent wrote in the turn (``""``: none)."""
        texts = [s.text for s in self.steps if s.kind == "text" and s.name != "user" and s.text]
        return texts[-1] if texts else ""

    @property
    def tool_calls(self) -> int:
        return sum(1 for s in self.steps if s.kind == "tool")

    @property
    def tokens_in(self) -> int:
        return sum(s.tokens_in or 0 for s in self.spans)

    @property
    def tokens_out(self) -> int:
        return sum(s.tokens_out or 0 for s in self.spans)

    @property
    def duration_text(self) -> str:
        return ms_text(_ms(self.duration_ns))


@dataclass
class Totals:
    tokens_in: int
    tokens_out: int
    duration_ns: int | None
    tool_calls: int
    model_calls: int
    turns: int


@dataclass
class Side:
    """One session (or one run of it), read for comparing."""

    session: AgentSession
    run: Run | None
    turns: list[Turn]
    state: dict[str, Any]
    totals: Totals
    truncated: bool
    instructions: list[str] = field(default_factory=list)  # versions its model calls used


@dataclass
class TotalRow:
    label: str
    left: float | None
    right: float | None
    unit: str  # "tokens" | "ms" | "" (a count)

    @property
    def delta(self) -> float | None:
        return delta(self.left, self.right)

    @property
    def left_text(self) -> str:
        return amount_text(self.left, self.unit)

    @property
    def right_text(self) -> str:
        return amount_text(self.right, self.unit)

    @property
    def delta_text(self) -> str:
        return delta_text(self.delta, self.unit)

    @property
    def delta_class(self) -> str:
        return delta_class(self.delta, self.unit)


@dataclass
class TurnView:
    """Two aligned turns: their status and, where both exist, their aligned steps and spans,
    their answers word by word and their deltas."""

    pair: Pair[Turn]
    status: str
    fields: tuple[str, ...]
    steps: list[Pair[Step]]
    spans: list[Pair[SpanNode]]
    answer_left: list[Segment]
    answer_right: list[Segment]
    number: int

    @property
    def left(self) -> Turn | None:
        return self.pair.left

    @property
    def right(self) -> Turn | None:
        return self.pair.right

    @property
    def duration_delta(self) -> float | None:
        """Milliseconds, right minus left."""
        left, right = self.pair.left, self.pair.right
        if left is None or right is None:
            return None
        return delta(_ms(left.duration_ns), _ms(right.duration_ns))

    @property
    def tokens_delta(self) -> int | None:
        left, right = self.pair.left, self.pair.right
        if left is None or right is None:
            return None
        return (right.tokens_in + right.tokens_out) - (left.tokens_in + left.tokens_out)

    @property
    def duration_delta_text(self) -> str:
        return delta_text(self.duration_delta, "ms")

    @property
    def tokens_delta_text(self) -> str:
        return delta_text(self.tokens_delta, "tokens")

    @property
    def duration_delta_class(self) -> str:
        return delta_class(self.duration_delta, "ms")

    @property
    def tokens_delta_class(self) -> str:
        return delta_class(self.tokens_delta)

    @property
    def span_rows(self) -> list[dict[str, Any]]:
        """The aligned spans, each with its duration delta (text and class)."""
        rows = []
        for pair in self.spans:
            ms = None
            if pair.left is not None and pair.right is not None:
                ms = delta(_ms(pair.left.duration_ns), _ms(pair.right.duration_ns))
            shown = "" if ms is None or _negligible(ms, "ms") else delta_text(ms, "ms")
            rows.append({"pair": pair, "delta": shown, "class": delta_class(ms, "ms")})
        return rows

    @property
    def runs_both(self) -> bool:
        """Both turns are runs (so the pair can be compared run to run)."""
        return bool(
            self.pair.left and self.pair.left.run_id and self.pair.right and self.pair.right.run_id
        )


@dataclass
class Comparison:
    left: Side
    right: Side
    turns: list[TurnView]
    state: list[KeyDiff]
    totals: list[TotalRow]
    counts: dict[str, int]
    """Steps by status, over every aligned turn."""

    @property
    def identical(self) -> bool:
        return all(t.status == SAME for t in self.turns) and all(
            k.status == SAME for k in self.state
        )

    @property
    def state_changed(self) -> int:
        return sum(1 for k in self.state if k.status != SAME)
