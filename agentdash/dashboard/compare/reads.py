"""Reads for the Compare page: two sessions, or two runs, side by side.

Each side is read into **turns** — one per invocation (a run): the user's message, then the
**steps** its stored events show (a tool call with its arguments and result, a text, a state
change, an error) and the **span tree** of its trace (kind and name, status, duration,
tokens). The two sides' turns are aligned on their user messages, and within an aligned turn
the steps and the spans are aligned on their keys (``tool:get_weather``, ``text:root``;
``agent:root``, ``model:gemini-2.5-flash``) by :func:`align.align`. Then the final
answers (the last text of each turn, word by word), the state key by key, and totals with
their deltas (tokens, duration, tool and model calls). The values built are those of
:mod:`agentdash.dashboard.compare.comparison`.

What is read is capped (:data:`MAX_EVENTS`, :data:`MAX_SPANS` per side); a side that had
more says ``truncated``. Nothing here renders: every string is raw, agents' output included,
and the template escapes it (the events' ``html`` is the sanitizer's, made when stored).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from agentdash.agent_sessions.event_data import event_text
from agentdash.agent_sessions.selectors import (
    session_event_rows,
    session_find,
    session_state_deltas,
    session_state_view,
)
from agentdash.dashboard.compare.align import (
    CHANGED,
    SAME,
    STEP_FIELD,
    Pair,
    align,
    mapping_diff,
    pairs_count,
    words_diff,
)
from agentdash.dashboard.compare.comparison import (
    Comparison,
    Side,
    SpanNode,
    Step,
    TotalRow,
    Totals,
    Turn,
    TurnView,
)
from agentdash.runs.selectors import session_runs
from agentdash.spans.selectors import trace_invocations
from agentdash.spans.step_reads import instruction_versions
from agentdash.spans.summaries import SUMMARY_FIELDS, span_summaries
from agentdash.spans.totals import runs_usage, session_usage
from agentdash.spans.usage import Totals as UsageTotals

if TYPE_CHECKING:
    from agentdash.agent_sessions.models import AgentSession
    from agentdash.runs.models import Run

MAX_EVENTS = 2_000
"""Events read per side; a longer session is compared over its first ones."""
MAX_SPANS = 5_000
"""Spans read per side (in start order)."""

MAX_FORK_DEPTH = 20
"""Parents a fork's copied turns are looked up in (a fork of a fork of ...)."""

_COL = {name: at for at, name in enumerate(SUMMARY_FIELDS)}


# ── Reading one side ─────────────────────────────────────────────────────────────────────────
def _parts(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = data.get("content") or {}
    parts = content.get("parts") if isinstance(content, Mapping) else None
    return [p for p in parts or [] if isinstance(p, dict)]


def _steps_of_event(turn: Turn, row: Mapping[str, Any]) -> None:
    """Add what one stored event shows to ``turn``: its text (the turn's message when it is
    the first user text), its tool calls, its tool results (joined to their calls), its
    state change and its error."""
    data, seq, author = row["data"], row["seq"], row["author"]
    made: list[Step] = []  # new steps of this event
    touched: list[Step] = []  # and the calls its results answered
    text = event_text(data)
    if text:
        if author == "user" and not turn.user_text:
            turn.user_text, turn.user_html = text, row["html"]
        else:
            made.append(Step(kind="text", name=author, seq=seq, text=text, html=row["html"]))
    for part in _parts(data):
        call, response = part.get("function_call"), part.get("function_response")
        if isinstance(call, Mapping):
            step = Step(
                kind="tool",
                name=str(call.get("name") or ""),
                seq=seq,
                args=call.get("args") or {},
                call_id=str(call.get("id") or ""),
            )
            made.append(step)
        elif isinstance(response, Mapping):
            name, call_id = str(response.get("name") or ""), str(response.get("id") or "")
            asked = _call_of(turn.steps + made, name=name, call_id=call_id)
            if asked is None:
                asked = Step(kind="tool", name=name, seq=seq, call_id=call_id)
                made.append(asked)
            asked.result, asked.answered = response.get("response") or {}, True
            touched.append(asked)
    turn.steps.extend(made)
    delta_ = ((data.get("actions") or {}).get("state_delta")) or {}
    if isinstance(delta_, Mapping) and delta_:
        target = made[-1] if made else touched[-1] if touched else None
        if target is None:
            target = Step(kind="state", name=author, seq=seq)
            turn.steps.append(target)
        target.state = {**target.state, **delta_}
    if data.get("error_code") or data.get("error_message"):
        said = f"{data.get('error_code') or ''} {data.get('error_message') or ''}".strip()
        turn.steps.append(Step(kind="error", name=author, seq=seq, error=said))


def _call_of(steps: list[Step], *, name: str, call_id: str) -> Step | None:
    """The unanswered call a result answers: the one with its id, else the first of its
    name."""
    open_calls = [s for s in steps if s.kind == "tool" and not s.answered]
    if call_id:
        found = next((s for s in open_calls if s.call_id == call_id), None)
        if found is not None:
            return found
    return next((s for s in open_calls if s.name == name), None)


def _turns_of_events(rows: Iterable[Mapping[str, Any]]) -> list[Turn]:
    turns: dict[str, Turn] = {}
    for row in rows:
        if row["data"].get("partial"):
            continue
        invocation = row["invocation_id"]
        turn = turns.get(invocation)
        if turn is None:
            turn = turns[invocation] = Turn(invocation_id=invocation)
        _steps_of_event(turn, row)
    return list(turns.values())


def _span_trees(
    *, session: AgentSession, run: Run | None, runs: dict[int, Run]
) -> tuple[dict[str, list[SpanNode]], dict[str, int], bool]:
    """The spans of each invocation as a depth-first tree, the duration of each invocation
    (its root spans'), and whether the spans were cut at :data:`MAX_SPANS`."""
    page = span_summaries(session_id=session.id, limit=MAX_SPANS)
    rows = page.rows
    if run is not None:
        rows = [
            r for r in rows if r[_COL["run_id"]] == run.pk or r[_COL["trace_id"]] == run.trace_id
        ]
    # Spans of no run (a runner driven by code) find their invocation through their trace's
    # root span, which carries the invocation id.
    invocation_of_trace = trace_invocations(session_id=session.id)
    by_trace: dict[str, list[list[Any]]] = {}
    for row in rows:
        by_trace.setdefault(row[_COL["trace_id"]], []).append(row)
    trees: dict[str, list[SpanNode]] = {}
    durations: dict[str, int] = {}
    for trace_id, found in by_trace.items():
        first_run = next((r[_COL["run_id"]] for r in found if r[_COL["run_id"]]), None)
        invocation = (
            runs[first_run].invocation_id
            if first_run in runs
            else str(invocation_of_trace.get(trace_id) or trace_id)
        )
        nodes, root_ns = _tree(found)
        trees.setdefault(invocation, []).extend(nodes)
        if root_ns is not None:
            durations[invocation] = durations.get(invocation, 0) + root_ns
    return trees, durations, page.next is not None


def _tree(rows: list[list[Any]]) -> tuple[list[SpanNode], int | None]:
    ids = {r[_COL["span_id"]] for r in rows}
    children: dict[str | None, list[list[Any]]] = {}
    for row in rows:  # in start order: children stay in it
        parent = row[_COL["parent_span_id"]]
        children.setdefault(parent if parent in ids else None, []).append(row)
    out: list[SpanNode] = []
    root_ns: int | None = None
    stack = [(row, 0) for row in reversed(children.get(None, []))]
    while stack:
        row, depth = stack.pop()
        start, end = row[_COL["start_time"]], row[_COL["end_time"]]
        took = end - start if end is not None else None
        if depth == 0 and took is not None:
            root_ns = (root_ns or 0) + took
        out.append(
            SpanNode(
                kind=row[_COL["span_kind"]],
                label=row[_COL["label"]],
                depth=depth,
                status=row[_COL["status"]],
                duration_ns=took,
                tokens_in=row[_COL["tokens_in"]],
                tokens_out=row[_COL["tokens_out"]],
            )
        )
        stack.extend(
            (child, depth + 1) for child in reversed(children.get(row[_COL["span_id"]], []))
        )
    return out, root_ns


def _run_ns(run: Run) -> int | None:
    if run.started_at is None or run.finished_at is None:
        return None
    return int((run.finished_at - run.started_at).total_seconds() * 1e9)


def _state_after(*, session: AgentSession, run: Run, last_seq: int | None) -> dict[str, Any]:
    """The state as of the run's last event: every state change of the session up to it,
    replayed (``app:`` and ``user:`` keys as this session's events changed them)."""
    if last_seq is None:
        return {}
    state: dict[str, Any] = {}
    for data in session_state_deltas(session_id=session.id, up_to_seq=last_seq):
        found = (data.get("actions") or {}).get("state_delta") or {}
        if isinstance(found, Mapping):
            state.update(found)
    return state


def _copied_spans(
    session: AgentSession,
    turns: list[Turn],
    trees: dict[str, list[SpanNode]],
    durations: dict[str, int],
) -> None:
    """Give a fork's copied turns the spans their runs made in the session they were copied
    from (a fork copies events, not spans: without them a copied turn would differ from its
    original in every span). Up the chain of parents, :data:`MAX_FORK_DEPTH` at most."""
    missing = {t.invocation_id for t in turns if t.invocation_id not in trees}
    parent_id = session.parent_id
    for _ in range(MAX_FORK_DEPTH):
        if not missing or not parent_id:
            return
        parent = session_find(session_id=parent_id)
        if parent is None:
            return
        runs = session_runs(session_id=parent.pk)
        found, took, _cut = _span_trees(session=parent, run=None, runs=runs)
        for invocation in missing & found.keys():
            trees[invocation] = found[invocation]
            if invocation in took:
                durations[invocation] = took[invocation]
        missing -= found.keys()
        parent_id = parent.parent_id


def side_read(*, session: AgentSession, run: Run | None = None) -> Side:
    """``session`` (or only ``run`` of it) read for comparing. The caller has checked that
    the user may see the session and that the run is one of its runs."""
    rows = session_event_rows(
        session_id=session.id,
        fields=("seq", "invocation_id", "author", "data", "html"),
        limit=MAX_EVENTS + 1,
        invocation_id=None if run is None else run.invocation_id,
    )
    truncated = len(rows) > MAX_EVENTS
    rows = rows[:MAX_EVENTS]
    turns = _turns_of_events(rows)
    runs = session_runs(session_id=session.id, run_id=None if run is None else run.pk)
    run_of_invocation = {r.invocation_id: r for r in runs.values()}
    trees, durations, spans_cut = _span_trees(session=session, run=run, runs=runs)
    if run is None:
        _copied_spans(session, turns, trees, durations)
    for turn in turns:
        turn.spans = trees.get(turn.invocation_id, [])
        found_run = run_of_invocation.get(turn.invocation_id)
        if found_run is not None:
            turn.run_id, turn.run_status = found_run.pk, found_run.status
        turn.duration_ns = durations.get(turn.invocation_id)
        if (
            turn.duration_ns is None
            and found_run
            and found_run.started_at
            and found_run.finished_at
        ):
            turn.duration_ns = int(
                (found_run.finished_at - found_run.started_at).total_seconds() * 1e9
            )
    if run is None:
        usage, _ = session_usage(session_id=session.id)
        state = session_state_view(session_id=session.id).state
    else:
        from_runs = runs_usage(session_ids=[session.id], run_ids=[run.pk])
        usage = from_runs.get(run.pk) or UsageTotals()
        state = _state_after(session=session, run=run, last_seq=rows[-1]["seq"] if rows else None)
    known = [t.duration_ns for t in turns if t.duration_ns is not None]
    totals = Totals(
        tokens_in=usage.input,
        tokens_out=usage.output,
        duration_ns=sum(known) if known else None,
        tool_calls=sum(t.tool_calls for t in turns),
        model_calls=usage.calls,
        turns=len(turns),
    )
    return Side(
        session=session,
        run=run,
        turns=turns,
        state=state,
        totals=totals,
        truncated=truncated or spans_cut,
        instructions=instruction_versions(session_id=session.id, run_id=run.pk if run else None),
    )


# ── Comparing two sides ──────────────────────────────────────────────────────────────────────
def _turn_view(pair: Pair[Turn], number: int) -> TurnView:
    left, right = pair.left, pair.right
    if left is None or right is None:
        return TurnView(pair, pair.status, (), [], [], [], [], number)
    steps = align(left.steps, right.steps, key=lambda s: s.key, fields=Step.compared)
    spans = align(left.spans, right.spans, key=lambda s: s.key, fields=SpanNode.compared)
    answer_left, answer_right = words_diff(left.answer, right.answer)
    fields: list[str] = []
    if STEP_FIELD in pair.fields or left.user_text != right.user_text:
        fields.append("message")
    if any(p.status != SAME for p in steps):
        fields.append("steps")
    if left.answer != right.answer:
        fields.append("answer")
    if any(p.status != SAME for p in spans):
        fields.append("spans")
    status = CHANGED if fields else SAME
    return TurnView(pair, status, tuple(fields), steps, spans, answer_left, answer_right, number)


def sides_compare(*, left: Side, right: Side) -> Comparison:
    """The comparison of two sides read by :func:`side_read`."""
    turn_pairs = align(
        left.turns, right.turns, key=lambda t: " ".join(t.user_text.split()), fields=lambda t: {}
    )
    turns = [_turn_view(pair, number) for number, pair in enumerate(turn_pairs, start=1)]
    counts = pairs_count([step for turn in turns for step in turn.steps])
    a, b = left.totals, right.totals
    totals = [
        TotalRow("Input tokens", a.tokens_in, b.tokens_in, "tokens"),
        TotalRow("Output tokens", a.tokens_out, b.tokens_out, "tokens"),
        TotalRow(
            "Duration",
            None if a.duration_ns is None else a.duration_ns / 1e6,
            None if b.duration_ns is None else b.duration_ns / 1e6,
            "ms",
        ),
        TotalRow("Tool calls", a.tool_calls, b.tool_calls, ""),
        TotalRow("Model calls", a.model_calls, b.model_calls, ""),
        TotalRow("Turns", a.turns, b.turns, ""),
    ]
    return Comparison(
        left=left,
        right=right,
        turns=turns,
        state=mapping_diff(left.state, right.state),
        totals=totals,
        counts=counts,
    )
