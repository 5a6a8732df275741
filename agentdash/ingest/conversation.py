"""An ingested session's conversation in its chat: the question each run answered and the
answer it gave, read out of the model calls' recorded messages.

An agent that runs elsewhere sends spans, not chat events: without this, its session's chat
column stayed empty and the conversation was only inside model spans. Each trace (one run)
gives at most two events, stored through the session store like any other (rendered and
sanitized once, announced live):

- the **question** — the last user message with text in the input of a model call of the
  trace — as soon as a model call of the trace arrives (it ends before its run);
- the **answer** — the text of the trace's last model call that answered with text — once
  the trace's root span has ended.

Their ids are derived from the trace (``otlp-<trace>-question``, ``otlp-<trace>-answer``), so
a span sent again, or a batch split differently, never tells them twice. Message content is
read from the OpenTelemetry GenAI conventions (``gen_ai.input.messages`` /
``gen_ai.output.messages``), which ingest has read every known sender's layout into
(``ingest.messages``); a sender that records no content (ADK's default) gives no events.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from django.db import IntegrityError
from google.genai import types

from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.agent_sessions.session_service import DjangoSessionService
from agentdash.core.hygiene import text_storable
from agentdash.core.prepared import PreparedQuery
from agentdash.spans.models import Span
from agentdash.spans.span_version import SpanVersion
from runtime.events.event import Event
from runtime.sessions.base_session_service import GetSessionConfig
from runtime.telemetry.attributes import AgentDash, GenAI

logger = logging.getLogger(__name__)

TEXT_MAX = 100_000  # characters of one told message (a bigger one is cut, saying so)


def conversation_record(versions: Iterable[SpanVersion], *, amended: bool = False) -> int:
    """Tell the chats of the sessions these stored span versions belong to what their runs
    were asked and answered (module docstring). Returns how many events were stored; a
    failure is logged, never raised (the spans are stored already). ``amended``: versions
    of spans that had ended (their log records arrived since): a trace whose root span is
    stored ended is told its answer too."""
    by_trace: dict[tuple[str, str], list[SpanVersion]] = defaultdict(list)
    for version in versions:
        if version.session_id:
            by_trace[(version.session_id, version.trace_id)].append(version)
    told = 0
    for (session_id, trace_id), group in by_trace.items():
        try:
            told += _trace_tell(session_id, trace_id, group, amended)
        except Exception:
            logger.exception("could not tell the conversation of trace %s", trace_id)
    return told


def _trace_tell(session_id: str, trace_id: str, group: list[SpanVersion], amended: bool) -> int:
    models = [
        v
        for v in group
        if v.attributes.get(AgentDash.SPAN_KIND) == "model" or _legacy_call(v.attributes)
    ]
    ended = [v for v in group if not v.parent_span_id and v.end_time is not None]
    if amended and not ended:
        ended = _root_ended(session_id, trace_id)
    if not models and not ended:
        return 0
    ids = [f"otlp-{trace_id}-question", f"otlp-{trace_id}-answer"]
    told = set(_TOLD.rows(session_id, ids))
    count = 0
    question_id = f"otlp-{trace_id}-question"
    if models and question_id not in told:
        first = min(models, key=lambda v: v.start_time)
        text = next((t for v in models if (t := question_text(v.attributes))), None)
        if text:
            count += _tell(session_id, question_id, "user", text, first, trace_id)
    if not models and ended and question_id not in told:  # OpenInference's chain root
        text = plain_value(ended[0].attributes.get("input.value"), INPUT_KEYS)
        if text:
            count += _tell(session_id, question_id, "user", text, ended[0], trace_id)
    answer_id = f"otlp-{trace_id}-answer"
    if ended and answer_id not in told:
        found = _answer(session_id, trace_id, group)
        root_text = plain_value(ended[0].attributes.get("output.value"), OUTPUT_KEYS)
        if found is None and root_text:
            found = (root_text, ended[0])
        if found is not None:
            text, version = found
            author = str(version.attributes.get(GenAI.AGENT_NAME) or "") or _agent(session_id)
            count += _tell(session_id, answer_id, author, text, version, trace_id)
    return count


_TOLD: PreparedQuery[str] = PreparedQuery(
    lambda session_id, event_ids: SessionEvent.objects.filter(
        session_id=session_id, event_id__in=event_ids
    ).values_list("event_id", flat=True)
)
_TRACE_SPANS: PreparedQuery[str] = PreparedQuery(
    lambda session_id, trace_id: Span.objects.filter(
        session_id=session_id, trace_id=trace_id
    ).values_list("span_id", flat=True)
)


def _answer(
    session_id: str, trace_id: str, group: list[SpanVersion]
) -> tuple[str, SpanVersion] | None:
    """The text of the trace's last model call that answered with text, and that call.
    Read from ``group`` (the trace's versions just stored) when they are every span the
    trace has stored, all ended — a whole trace in one export, as exporters send them: its
    spans' attributes are then not read back —, else from the stored spans."""
    here = {version.span_id: version for version in group}
    rows: Iterable[Mapping[str, Any]]
    if all(v.end_time is not None for v in here.values()) and set(
        _TRACE_SPANS.rows(session_id, trace_id)
    ) == set(here):
        ended = sorted(here.values(), key=lambda v: v.end_time or 0, reverse=True)
        rows = (
            {"span_id": v.span_id, "name": v.name, "start_time": v.start_time,
             "end_time": v.end_time, "attributes": v.attributes}
            for v in ended
        )  # fmt: skip
    else:
        rows = _stored_ended(session_id, trace_id)
    agent = ""  # the agent that answered: its span ends after its model calls
    for row in rows:
        attributes = row["attributes"] if isinstance(row["attributes"], dict) else {}
        name = attributes.get(GenAI.AGENT_NAME)
        if isinstance(name, str) and name:
            agent = name
        if attributes.get(AgentDash.SPAN_KIND) != "model" and not _legacy_call(attributes):
            continue
        text = answer_text(attributes)
        if text:
            version = SpanVersion(
                trace_id=trace_id,
                span_id=row["span_id"],
                name=row["name"],
                start_time=row["start_time"],
                end_time=row["end_time"],
                attributes={GenAI.AGENT_NAME: agent, **attributes} if agent else attributes,
            )
            return text, version
    return None


def _stored_ended(session_id: str, trace_id: str) -> Iterable[Mapping[str, Any]]:
    """The trace's stored ended spans, the latest to end first (read as iterated)."""
    return (
        Span.objects.filter(session_id=session_id, trace_id=trace_id, end_time__isnull=False)
        .order_by("-end_time")
        .values("span_id", "name", "start_time", "end_time", "attributes")
        .iterator(chunk_size=50)
    )


def _root_ended(session_id: str, trace_id: str) -> list[SpanVersion]:
    """The trace's root span, if it is stored ended (as a version, for its text)."""
    row = (
        Span.objects.filter(
            session_id=session_id, trace_id=trace_id, parent_span_id="", end_time__isnull=False
        )
        .values("span_id", "name", "start_time", "end_time", "attributes")
        .first()
    )
    if row is None:
        return []
    attributes = row["attributes"] if isinstance(row["attributes"], dict) else {}
    return [
        SpanVersion(
            trace_id=trace_id, span_id=row["span_id"], name=row["name"],
            start_time=row["start_time"], end_time=row["end_time"], attributes=attributes,
        )
    ]  # fmt: skip


def _legacy_call(attributes: Mapping[str, Any]) -> bool:
    """ADK's legacy ``call_llm`` span: the model call's content, without a kind of its own."""
    return "gcp.vertex.agent.llm_response" in attributes


def _agent(session_id: str) -> str:
    found = AgentSession.objects.filter(pk=session_id).values_list("app_name", flat=True).first()
    return found or "agent"


def _tell(
    session_id: str, event_id: str, author: str, text: str, span: SpanVersion, trace_id: str
) -> int:
    session = AgentSession.objects.filter(pk=session_id).first()
    if session is None:
        return 0
    service = DjangoSessionService()
    live = service.get_session(
        app_name=session.app_name,
        user_id=session.user_id,
        session_id=session_id,
        config=GetSessionConfig(num_recent_events=0),
    )
    if live is None:
        return 0
    if len(text) > TEXT_MAX:
        text = f"{text[:TEXT_MAX]}\n\n[… {len(text) - TEXT_MAX:,} more characters in the span]"
    text = text_storable(text)[0]
    invocation = str(span.attributes.get(AgentDash.INVOCATION_ID) or "") or f"trace-{trace_id}"
    when = (span.start_time if author == "user" else (span.end_time or span.start_time)) / 1e9
    event = Event(
        id=event_id,
        invocation_id=invocation[:128],
        author=author[:128] or "agent",
        content=types.Content(
            role="user" if author == "user" else "model", parts=[types.Part(text=text)]
        ),
        timestamp=when,
        turn_complete=author != "user",
    )
    try:
        service.append_event(live, event)
    except IntegrityError:
        return 0  # told meanwhile by another request of the same sender
    return 1


# ── message content, as each convention records it ─────────────────────────────────────
def question_text(attributes: Mapping[str, Any]) -> str | None:
    """The last user message with text a model call was sent, if the span recorded it."""
    messages = _json(attributes.get("gen_ai.input.messages"))
    if isinstance(messages, list):
        for message in reversed(messages):
            if isinstance(message, dict) and message.get("role") == "user":
                text = _semconv_text(message.get("parts"))
                if text:
                    return text
    return None


def answer_text(attributes: Mapping[str, Any]) -> str | None:
    """The text a model call answered with, if the span recorded it."""
    messages = _json(attributes.get("gen_ai.output.messages"))
    if isinstance(messages, list):
        texts = [
            _semconv_text(m.get("parts")) for m in messages if isinstance(m, dict)
        ]  # one per choice: the first with text
        found = next((t for t in texts if t), None)
        if found:
            return found
    return None


INPUT_KEYS = ("input", "question", "query", "message")
OUTPUT_KEYS = ("output", "answer", "text")


def plain_value(value: Any, keys: tuple[str, ...]) -> str | None:
    """OpenInference's ``input.value``/``output.value`` as text: the value itself when it
    is plain text, or the text under one of ``keys`` of a JSON object; else ``None``."""
    if not isinstance(value, str) or not value.strip():
        return None
    parsed = _json(value) if value.lstrip()[:1] in ("{", "[") else value
    if isinstance(parsed, str):
        return parsed.strip()
    if isinstance(parsed, dict):
        found = next((parsed[k] for k in keys if isinstance(parsed.get(k), str)), None)
        return found.strip() if found and found.strip() else None
    return None


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def _semconv_text(parts: Any) -> str:
    """The text parts of a GenAI semconv message (``{"type": "text", "content": …}``)."""
    if not isinstance(parts, list):
        return ""
    texts = [
        str(p.get("content"))
        for p in parts
        if isinstance(p, dict) and p.get("type") == "text" and p.get("content")
    ]
    return "\n\n".join(texts).strip()
