"""Downloads of a session (docs/EXPORT.md): the session document and its spans as OTLP —
every trace or one, in JSON or, with ``?encoding=protobuf``, in protobuf's binary encoding.
Each checks, as the session page does, that the user may see the session (a 404 otherwise,
the same as the page's) and streams the document as it is read (``session_export``), never
holding it whole."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING

from asgiref.sync import sync_to_async
from django.contrib.auth.decorators import login_required
from django.core.handlers.asgi import ASGIRequest
from django.http import (
    Http404,
    HttpRequest,
    HttpResponseBadRequest,
    StreamingHttpResponse,
)
from django.http.response import HttpResponseBase
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from agentdash.agent_sessions.selectors import session_get_for_user
from agentdash.dashboard.exports.session_export import (
    session_json_parts,
    session_otlp_parts,
    session_otlp_proto_parts,
)
from agentdash.spans import otlp_proto
from agentdash.spans.selectors import session_has_trace

if TYPE_CHECKING:
    from agentdash.agent_sessions.models import AgentSession

_UNSAFE_IN_NAME = re.compile(r"[^A-Za-z0-9._-]+")


@login_required
@require_GET
@never_cache
def session_export(request: HttpRequest, session_id: str) -> StreamingHttpResponse:
    """The session document (``agentdash.session/1``): session, state, runs, events, state
    history, spans."""
    session = session_get_for_user(user=request.user, session_id=session_id)
    parts = session_json_parts(session=session)
    return _download(request, parts, f"agentdash-session-{_name(session.id)}.json")


@login_required
@require_GET
@never_cache
def session_export_otlp(request: HttpRequest, session_id: str) -> HttpResponseBase:
    """Every span of the session as one OTLP ``ExportTraceServiceRequest`` (JSON, or
    protobuf with ``?encoding=protobuf``)."""
    session = session_get_for_user(user=request.user, session_id=session_id)
    return _otlp_download(request, session, None, f"agentdash-session-{_name(session.id)}")


@login_required
@require_GET
@never_cache
def session_export_trace(request: HttpRequest, session_id: str, trace_id: str) -> HttpResponseBase:
    """The session's spans of one trace as OTLP (as above); 404 when the session has none."""
    session = session_get_for_user(user=request.user, session_id=session_id)
    if not session_has_trace(session_id=session.id, trace_id=trace_id):
        raise Http404("this session has no such trace")
    return _otlp_download(request, session, trace_id, f"agentdash-trace-{_name(trace_id)}")


def _otlp_download(
    request: HttpRequest, session: AgentSession, trace_id: str | None, stem: str
) -> HttpResponseBase:
    """``?encoding=``: ``json`` (the default) → ``<stem>.otlp.json``; ``protobuf`` →
    ``<stem>.otlp.pb``, ``application/x-protobuf``; anything else a 400 saying so."""
    encoding = request.GET.get("encoding") or "json"
    if encoding == "json":
        parts = session_otlp_parts(session=session, trace_id=trace_id)
        return _download(request, parts, f"{stem}.otlp.json")
    if encoding == "protobuf":
        binary = session_otlp_proto_parts(session=session, trace_id=trace_id)
        return _download(request, binary, f"{stem}.otlp.pb", otlp_proto.CONTENT_TYPE)
    return HttpResponseBadRequest(
        "encoding must be json or protobuf", content_type="text/plain; charset=utf-8"
    )


def _download(
    request: HttpRequest,
    parts: Iterator[str] | Iterator[bytes],
    filename: str,
    content_type: str = "application/json",
) -> StreamingHttpResponse:
    """An attachment, streamed part by part (text is sent as UTF-8). Under ASGI (daphne) the
    parts are read in a thread one at a time: Django would read a plain iterator whole
    before sending."""
    content = _streamed(parts) if isinstance(request, ASGIRequest) else _encoded(parts)
    response = StreamingHttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


def _bytes(part: str | bytes) -> bytes:
    return part if isinstance(part, bytes) else part.encode("utf-8")


def _encoded(parts: Iterator[str] | Iterator[bytes]) -> Iterator[bytes]:
    for part in parts:
        yield _bytes(part)


def _next(parts: Iterator[str] | Iterator[bytes]) -> str | bytes | None:
    return next(parts, None)


async def _streamed(parts: Iterator[str] | Iterator[bytes]) -> AsyncIterator[bytes]:
    step = sync_to_async(_next, thread_sensitive=True)
    while (part := await step(parts)) is not None:
        yield _bytes(part)


def _name(text: str) -> str:
    """Text fit for a file name: letters, digits, ``.``, ``_``, ``-`` (others become ``_``)."""
    return _UNSAFE_IN_NAME.sub("_", text)[:100].strip(".") or "export"
