"""Spans sent by an outside agent become a session's spans, stored and streamed like the
runtime's own.

**Sessions.** A span belongs to the conversation its sender named
(:data:`~agentdash.ingest.semconv.CONVERSATION_KEYS`); a trace's spans all go where any of
them says, and a trace that names none gets a session of its own. Sessions are the key's
owner's, under the key's project (their app name), and their ids are derived from owner,
project and conversation: two keys of one owner and project share sessions, a key of someone
else can never reach them. A trace whose spans arrived before the one naming its
conversation is moved into that conversation's session when it does (its own session then
goes), so pieces arriving in any order converge.

**Spans.** Stored through the span store (``spans_store_isolating``): the same span twice is
one span, an ended span is never replaced by its start, a child may come before its parent.
A span id already stored in a session that is not this key's owner's and project's is
rejected (one sender cannot overwrite another's spans, nor the runtime's).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from django.db import transaction

from agentdash.agent_sessions.external import (
    external_session_ensure,
    external_sessions_delete,
    session_owners,
    sessions_existing,
    sessions_touch,
)
from agentdash.agent_sessions.models import EXTERNAL_SESSION_PREFIX
from agentdash.core.conf import agentdash_setting
from agentdash.ingest import semconv
from agentdash.ingest.conversation import conversation_record
from agentdash.ingest.limits import sessions_limiter
from agentdash.ingest.models import IngestKey
from agentdash.ingest.otlp_spans import IncomingSpan
from agentdash.ingest.prepared import Prepared
from agentdash.ingest.span_logs import pending_drop, pending_take
from agentdash.ingest.versions import span_version_of
from agentdash.spans.rehome import children_named, trace_sessions, traces_rehome, usage_uncount
from agentdash.spans.selectors import spans_stored
from agentdash.spans.services import spans_store_isolating
from agentdash.spans.sources import sources_ensure
from agentdash.spans.span_version import SpanVersion

SESSION_PREFIX = EXTERNAL_SESSION_PREFIX
SERVICE_NAME = "service.name"


@dataclass(frozen=True)
class IngestResult:
    stored: int
    rejected: int
    error_message: str
    sessions: tuple[str, ...]


def session_id_for(key: IngestKey, conversation: str) -> str:
    """The id of the session of ``conversation`` for ``key``'s owner and project."""
    digest = hashlib.sha256(
        f"{key.owner_id}\0{key.project}\0{conversation}".encode("utf-8", "surrogatepass")
    ).hexdigest()
    return SESSION_PREFIX + digest[:40]


def _trace_conversation(trace_id: str) -> str:
    return f"trace:{trace_id}"


def _within_budget(
    key: IngestKey, taken: list[IncomingSpan], problems: list[str]
) -> tuple[list[IncomingSpan], dict[str, str], int]:
    """The spans whose sessions exist or fit the key's budget of new sessions a minute, their
    trace → session targets, and how many were refused (each named in ``problems``)."""
    targets = _targets(key, taken)
    over = _sessions_over_budget(key, targets)
    if not over:
        return taken, targets, 0
    kept = []
    for span in taken:
        if targets[span.trace_id] in over:
            problems.append(
                f"span {span.span_id} of trace {span.trace_id}: a new session past this "
                f"key's {_sessions_budget()} a minute"
            )
        else:
            kept.append(span)
    targets = {t: s for t, s in targets.items() if s not in over}
    return kept, targets, len(taken) - len(kept)


def spans_ingest(*, key: IngestKey, prepared: Prepared) -> IngestResult:
    """Store what ``prepared`` holds for ``key``; what was stored and what was rejected."""
    unpacked = prepared.unpacked
    problems = list(unpacked.problems)
    rejected = unpacked.rejected
    spans = unpacked.spans
    if not spans:
        return IngestResult(0, rejected, problems_said(rejected, problems), ())
    stored_sessions = _stored_sessions(spans)
    mine = {
        identity: session
        for identity, (session, owned) in stored_sessions.items()
        if owned == (key.owner_id, key.project) and session is not None
    }
    taken = []
    for span in spans:
        identity = (span.trace_id, span.span_id)
        if identity in stored_sessions and identity not in mine:
            rejected += 1
            problems.append(f"span {span.span_id} of trace {span.trace_id} is another sender's")
        else:
            taken.append(span)
    taken, targets, refused = _within_budget(key, taken, problems)
    rejected += refused
    sessions, touched = _sessions_placed(key, taken, targets, mine)
    sent_events = {id(span): span.events for span in taken}
    with_logs = pending_take(key=key, spans=taken)  # their log records, sent before them
    sources = list({id(span.source): span.source for span in taken}.values())
    source_ids = dict(zip(map(id, sources), sources_ensure(sources=sources), strict=True))
    made = prepared.by_span()
    versions = []
    for span in taken:
        session_id = sessions[id(span)]
        source_id = source_ids[id(span.source)]
        if span.events is sent_events[id(span)]:
            versions.append(made[id(span)].placed(session_id=session_id, source_id=source_id))
        else:  # log records sent before it joined its events: made again
            versions.append(span_version_of(span, session_id, source_id))
    versions = _usage_counted_once(versions)
    writes = spans_store_isolating(versions=versions)
    _stored_call_llm_uncount(versions)
    conversation_record(versions)
    pending_drop(key=key, identities=with_logs)
    stored = sum(1 for w in writes if w.stored)
    # Taken, yet the database would not hold them (a span sent again after it ended — an
    # exporter's retry — is already stored: not rejected).
    if dropped := sum(1 for w in writes if w.dropped):
        rejected += dropped
        problems.append(
            f"{dropped} span(s) could not be stored (each replaced in its session by an error "
            "span named 'span not stored' saying why)"
        )
    return IngestResult(stored, rejected, problems_said(rejected, problems), tuple(touched))


def _sessions_placed(
    key: IngestKey,
    taken: list[IncomingSpan],
    targets: dict[str, str],
    mine: dict[tuple[str, str], str],
) -> tuple[dict[int, str], list[str]]:
    """Each span's session (by ``id`` of the span), made or moved to as needed, and the
    sessions touched — in one transaction."""
    with transaction.atomic():
        # Each trace's session of its own, where its spans went while it named no conversation.
        own = {trace_id: session_id_for(key, _trace_conversation(trace_id)) for trace_id in targets}
        existing = sessions_existing(ids={*targets.values(), *own.values()})
        _sessions_ensure(key, taken, targets, existing)
        moved = _traces_rehome(targets, own, existing)
        sessions = {id(span): _session_of(span, targets, mine, moved) for span in taken}
        # Touched here, where the writer's lock is held already: a write of its own would
        # wait for it once more, behind the other exports' stores.
        touched = sorted(set(sessions.values()))
        sessions_touch(ids=touched)
    return sessions, touched


def _session_of(
    span: IncomingSpan,
    targets: dict[str, str],
    mine: dict[tuple[str, str], str],
    moved: set[str],
) -> str:
    """The session ``span`` is stored in: where it is stored already (a span of this sender
    sent again), unless its trace moved; else its trace's target."""
    identity = (span.trace_id, span.span_id)
    if identity in mine and span.trace_id not in moved:
        return mine[identity]
    return targets[span.trace_id]


def problems_said(rejected: int, problems: list[str], what: str = "span") -> str:
    """A partial success's message: how many ``what`` were rejected, and the first reasons."""
    if not rejected:
        return ""
    shown = "; ".join(problems[:5])
    more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
    return f"{rejected} {what}(s) rejected: {shown}{more}"


def _stored_sessions(
    spans: list[IncomingSpan],
) -> dict[tuple[str, str], tuple[str | None, tuple[int | None, str] | None]]:
    """Identities of ``spans`` already stored → (their session, (its owner, its app name) if
    it is an ingest session, else ``None``)."""
    stored = spans_stored(identities=[(s.trace_id, s.span_id) for s in spans])
    ingest = {
        span.session_id
        for span in stored.values()
        if span.session_id is not None and span.session_id.startswith(SESSION_PREFIX)
    }
    owners = session_owners(ids=ingest)
    return {
        identity: (span.session_id, owners.get(span.session_id or ""))
        for identity, span in stored.items()
    }


def _targets(key: IngestKey, spans: list[IncomingSpan]) -> dict[str, str]:
    """Each trace's session: its conversation's, else where its spans already are, else its
    own."""
    named: dict[str, str] = {}
    for span in sorted(spans, key=lambda s: s.parent_span_id != ""):  # roots first
        conversation = semconv.conversation_id(span.attributes)
        if conversation is not None:
            named.setdefault(span.trace_id, conversation)
    traces = {s.trace_id for s in spans}
    unnamed = traces - named.keys()
    where = (
        trace_sessions(
            trace_ids=unnamed, owner_id=key.owner_id, app_name=key.project, prefix=SESSION_PREFIX
        )
        if unnamed
        else {}
    )
    targets = {}
    for trace_id in traces:
        if trace_id in named:
            targets[trace_id] = session_id_for(key, named[trace_id])
        else:
            found = where.get(trace_id)
            targets[trace_id] = found or session_id_for(key, _trace_conversation(trace_id))
    return targets


def _sessions_budget() -> int:
    return int(agentdash_setting("INGEST_SESSIONS_PER_MIN"))


def _sessions_over_budget(key: IngestKey, targets: dict[str, str]) -> set[str]:
    """The sessions ``targets`` would make past the key's budget of new sessions (a flood
    of conversations would otherwise fill its owner's list): each new one takes a token."""
    budget = _sessions_budget()
    if budget <= 0:
        return set()
    wanted = set(targets.values())
    new = wanted - sessions_existing(ids=wanted)
    return {
        session_id
        for session_id in sorted(new)
        if sessions_limiter.take(key.prefix, rate=budget / 60.0, burst=budget) is not None
    }


def _sessions_ensure(
    key: IngestKey, spans: list[IncomingSpan], targets: dict[str, str], existing: set[str]
) -> None:
    """Make the sessions of ``targets`` not in ``existing``."""
    wanted = set(targets.values())
    firsts: dict[str, IncomingSpan] = {}
    for span in sorted(spans, key=lambda s: (s.parent_span_id != "", s.start_time)):
        firsts.setdefault(targets[span.trace_id], span)
    for session_id in sorted(wanted - existing):
        first = firsts[session_id]
        conversation = semconv.conversation_id(first.attributes) or f"trace {first.trace_id}"
        service = str(first.resource.get(SERVICE_NAME) or key.project)
        external_session_ensure(
            session_id=session_id,
            app_name=key.project,
            owner_id=key.owner_id,
            title=f"{service} · {conversation}",
            first_message=f"{first.name} · {conversation}",
        )


def _traces_rehome(targets: dict[str, str], own: dict[str, str], existing: set[str]) -> set[str]:
    """Move the spans of traces that now name their conversation out of the session they
    were given while they did not (``own``: a session that holds spans exists); the traces
    moved."""
    moves = {
        trace_id: (own[trace_id], target)
        for trace_id, target in targets.items()
        if target != own[trace_id] and own[trace_id] in existing
    }
    moved, emptied = traces_rehome(moves=moves)
    external_sessions_delete(ids=emptied)
    return moved


# ADK's legacy span layout (ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1) repeats a model call's
# usage on ``call_llm`` and on its child ``generate_content``: only the child is counted.
_LEGACY_STEP = "call_llm"
_MODEL_CALL = "generate_content"


def _usage_counted_once(versions: list[SpanVersion]) -> list[SpanVersion]:
    """``versions``, the ``call_llm`` ones with a ``generate_content`` child (in this batch
    or stored) no longer counting their usage."""
    children = {
        (v.trace_id, v.parent_span_id)
        for v in versions
        if v.name.startswith(_MODEL_CALL) and v.parent_span_id
    }
    steps = [v for v in versions if v.name == _LEGACY_STEP and v.tokens_in is not None]
    unknown = [v.identity for v in steps if v.identity not in children]
    children |= children_named(parents=unknown, prefix=_MODEL_CALL)
    return [
        v.usage_uncounted() if v.name == _LEGACY_STEP and v.identity in children else v
        for v in versions
    ]


def _stored_call_llm_uncount(versions: list[SpanVersion]) -> None:
    """The stored ``call_llm`` parents of this batch's ``generate_content`` spans (stored
    before their child came) stop counting their usage."""
    in_batch = {v.identity for v in versions}
    parents = {
        (v.trace_id, v.parent_span_id)
        for v in versions
        if v.name.startswith(_MODEL_CALL)
        and v.parent_span_id
        and (v.trace_id, v.parent_span_id) not in in_batch
    }
    usage_uncount(spans=parents, name=_LEGACY_STEP)
