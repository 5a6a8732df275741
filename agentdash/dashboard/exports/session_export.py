"""A session written out whole, as one JSON document streamed in parts: the session, its
state, runs, events, state history and spans (``agentdash.session/1``), or its spans — every
trace, or one — as OTLP/JSON (``spans.otlp_json``) or OTLP/protobuf (``spans.otlp_proto``).
Formats: docs/EXPORT.md.

Each part costs one query (a batch of rows, read after the last one of the batch before),
so a session of any size is written with one batch in memory. A session still running is
written as its rows were when each batch was read. Whatever the rows hold, the text is
valid JSON (UTF-8, no NaN, no lone surrogate, nesting bounded): stored values pass through
``core.hygiene.storable`` on the way out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.utils import timezone

from agentdash.agent_sessions.selectors import (
    session_events_batched,
    session_find,
    session_state_view,
)
from agentdash.core.hygiene import storable
from agentdash.runs.selectors import session_runs_batched
from agentdash.scores.selectors import session_scores
from agentdash.spans.otlp_json import otlp_json_parts
from agentdash.spans.otlp_proto import otlp_proto_parts
from agentdash.spans.selectors import EXPORT_BATCH, runs_with_root, spans_batched
from agentdash.spans.sources import with_sources

if TYPE_CHECKING:
    from agentdash.agent_sessions.models import AgentSession
    from agentdash.runs.models import Run

FORMAT = "agentdash.session/1"
"""The session document's ``format``; a change that breaks a reader gets a new number."""

MAX_DEPTH = 256
"""Deepest value written; stored rows are far shallower (``core.hygiene``), but a row
written by other means must not fail the export (deeper parts: ``"[nested too deep]"``)."""

_EVENT_FIELDS = ("seq", "event_id", "invocation_id", "author", "timestamp", "version", "data")


def session_for_export(*, session_id: str) -> AgentSession | None:
    """The session, whoever owns it (for ``manage.py export_session``: people reach
    exports through ``session_get_for_user``); ``None`` when there is none."""
    return session_find(session_id=session_id)


def session_json_parts(*, session: AgentSession, batch: int = EXPORT_BATCH) -> Iterator[str]:
    """The session document (``agentdash.session/1``) as JSON text in parts; joined, one
    JSON object. Reads lazily: nothing is read before the first part is asked for."""
    state = session_state_view(session_id=session.id)
    head = {
        "format": FORMAT,
        "exported_at": timezone.now().isoformat(),
        "session": {
            "id": session.id,
            "app_name": session.app_name,
            "user_id": session.user_id,
            "owner": session.owner.get_username() if session.owner is not None else None,
            "title": session.title,
            "created_at": _time(session.created_at),
            "last_update_time": session.last_update_time,
            "version": state.version,
            "event_count": state.event_count,
        },
        "state": state.state,
        "state_versions": {
            "session": state.version,
            "app": state.app_version,
            "user": state.user_version,
        },
    }
    yield _dumps(head).removesuffix("}")
    yield from _array("runs", _runs_batched(session_id=session.id, batch=batch))
    yield from _array("events", _events_batched(session_id=session.id, batch=batch))
    history = _events_batched(session_id=session.id, batch=batch, with_state_delta=True)
    yield from _array("state_history", ([_state_change(e) for e in b] for b in history))
    yield from _array("spans", with_sources(spans_batched(session_id=session.id, batch=batch)))
    yield from _array("scores", iter([session_scores(session_id=session.id)]))
    yield "}"


def session_otlp_parts(
    *, session: AgentSession, trace_id: str | None = None, batch: int = EXPORT_BATCH
) -> Iterator[str]:
    """The session's spans (only those of ``trace_id`` when given) as an OTLP/JSON
    ``ExportTraceServiceRequest`` in parts: the runtime's spans under one resource —
    ``service.name`` the session's agent, ``agentdash.session.id`` the session — and one
    scope; spans sent from outside under the resource and scope they were sent with."""
    spans = with_sources(spans_batched(session_id=session.id, trace_id=trace_id, batch=batch))
    return otlp_json_parts(resource=_resource(session), span_batches=_scored(session, spans))


def session_otlp_proto_parts(
    *, session: AgentSession, trace_id: str | None = None, batch: int = EXPORT_BATCH
) -> Iterator[bytes]:
    """The same request as :func:`session_otlp_parts`, in protobuf's binary encoding, in
    parts (one ``ResourceSpans`` per batch of spans, each with the same resource)."""
    spans = with_sources(spans_batched(session_id=session.id, trace_id=trace_id, batch=batch))
    return otlp_proto_parts(resource=_resource(session), span_batches=_scored(session, spans))


SCORE_EVENT = "gen_ai.evaluation.result"
"""The OpenTelemetry GenAI conventions' event for the result of evaluating an output: a
score goes out as one on the span it scores (docs/EXPORT.md)."""


def _scored(
    session: AgentSession, batches: Iterable[list[dict[str, Any]]]
) -> Iterator[list[dict[str, Any]]]:
    """The span batches with the session's scores as span events: a span's on it, a run's on
    the run's root span, the session's — and a run's that has no root span — on the first
    root span written (a score of a span not written is not written either)."""
    scores = session_scores(session_id=session.id)
    rooted = runs_with_root(session_id=session.id, run_ids={s["run"] for s in scores if s["run"]})
    on_span: dict[tuple[str, str], list[dict[str, Any]]] = {}
    on_run: dict[Any, list[dict[str, Any]]] = {}
    on_session: list[dict[str, Any]] = []
    for score in scores:
        if score["target"] == "span":
            on_span.setdefault((score["trace_id"], score["span_id"]), []).append(score)
        elif score["target"] == "run" and score["run"] in rooted:
            on_run.setdefault(score["run"], []).append(score)
        else:
            on_session.append(score)
    for batch in batches:
        if scores:
            for span in batch:
                found = on_span.get((span["trace_id"], span["span_id"]), [])
                if not span.get("parent_span_id"):
                    found = found + on_run.pop(span.get("run_id"), []) + on_session
                    on_session = []
                if found:
                    span["events"] = [*(span.get("events") or []), *map(_score_event, found)]
        yield batch


def _score_event(score: dict[str, Any]) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "gen_ai.evaluation.name": score["name"],
        "agentdash.score.target": score["target"],
        "agentdash.score.source": score["source"],
        "agentdash.score.author": score["author"],
    }
    if isinstance(score["value"], float):
        attributes["gen_ai.evaluation.score.value"] = score["value"]
    else:  # yes/no, a category: its label
        attributes["gen_ai.evaluation.score.label"] = score["value"]
    if score["comment"]:
        attributes["gen_ai.evaluation.explanation"] = score["comment"]
    at = datetime.fromisoformat(score["at"]) if score["at"] else None
    time_ns = int(at.timestamp()) * 1_000_000_000 + at.microsecond * 1_000 if at else 0
    return {"name": SCORE_EVENT, "time": time_ns, "attributes": attributes}


def _resource(session: AgentSession) -> dict[str, str]:
    return {"service.name": session.app_name, "agentdash.session.id": session.id}


# ── reads ───────────────────────────────────────────────────────────────────────────────────
def _runs_batched(*, session_id: str, batch: int) -> Iterator[list[dict[str, Any]]]:
    for found in session_runs_batched(session_id=session_id, batch=batch):
        yield [_run(run) for run in found]


def _events_batched(
    *, session_id: str, batch: int, with_state_delta: bool = False
) -> Iterator[list[dict[str, Any]]]:
    for found in session_events_batched(
        session_id=session_id, fields=_EVENT_FIELDS, batch=batch, with_state_delta=with_state_delta
    ):
        yield [_event(row) for row in found]


# ── items ───────────────────────────────────────────────────────────────────────────────────
def _run(run: Run) -> dict[str, Any]:
    return {
        "id": run.id,
        "agent": run.agent_name,
        "invocation_id": run.invocation_id,
        "status": run.status,
        "message": run.message,
        "requested_by": run.requested_by.get_username() if run.requested_by else None,
        "attempt": run.attempt,
        "created_at": _time(run.created_at),
        "queued_at": _time(run.queued_at),
        "started_at": _time(run.started_at),
        "finished_at": _time(run.finished_at),
        "trace_id": run.trace_id,
        "error": run.error,
        "cancel_requested": run.cancel_requested,
        "cancel_reason": run.cancel_reason,
    }


def _event(row: dict[str, Any]) -> dict[str, Any]:
    """A stored event: where it is in the session, the session version its state delta
    produced, and the event whole as the runtime serializes it (``data``)."""
    return {
        "position": row["seq"],
        "id": row["event_id"],
        "invocation_id": row["invocation_id"],
        "author": row["author"],
        "timestamp": row["timestamp"],
        "version": row["version"],
        "data": row["data"],
    }


def _state_change(event: dict[str, Any]) -> dict[str, Any]:
    """One state change as it was recorded: the event that carried it, its delta, and for
    an operator's edit who made it and why (the event's ``custom_metadata``)."""
    data = _mapping(event["data"])
    change = {
        "position": event["position"],
        "event_id": event["id"],
        "invocation_id": event["invocation_id"],
        "author": event["author"],
        "timestamp": event["timestamp"],
        "version": event["version"],
        "delta": _mapping(_mapping(data.get("actions")).get("state_delta")),
    }
    if event["author"] == "operator":
        metadata = _mapping(data.get("custom_metadata"))
        change["actor"] = metadata.get("actor")
        change["reason"] = metadata.get("reason")
    return change


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


# ── text ────────────────────────────────────────────────────────────────────────────────────
def _array(name: str, batches: Iterable[list[Any]]) -> Iterator[str]:
    """``,"name":[`` items ``]``, one part per non-empty batch."""
    yield f',"{name}":['
    first = True
    for batch in batches:
        if not batch:
            continue
        text = ",".join(_dumps(item) for item in batch)
        yield text if first else "," + text
        first = False
    yield "]"


def _safe(value: Any) -> Any:
    return storable(value, max_depth=MAX_DEPTH)[0]


def _dumps(value: Any) -> str:
    return json.dumps(_safe(value), ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None
