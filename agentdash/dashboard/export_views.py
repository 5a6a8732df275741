"""Downloads of a session (docs/EXPORT.md): the session document and its spans as OTLP/JSON,
every trace or one. Each checks, as the session page does, that the user may see the
session (a 404 otherwise, the same as the page's) and streams the document as it is read
(``session_export``), never holding it whole."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator

from asgiref.sync import sync_to_async
from django.contrib.auth.decorators import login_required
from django.core.handlers.asgi import ASGIRequest
from django.http import Http404, HttpRequest, StreamingHttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from agentdash.agent_sessions.selectors import session_get_for_user
from agentdash.dashboard.session_export import session_json_parts, session_otlp_parts
from agentdash.spans.selectors import session_has_trace

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
def session_export_otlp(request: HttpRequest, session_id: str) -> StreamingHttpResponse:
    """Every span of the session as one OTLP/JSON ``ExportTraceServiceRequest``."""
    session = session_get_for_user(user=request.user, session_id=session_id)
    parts = session_otlp_parts(session=session)
    return _download(request, parts, f"agentdash-session-{_name(session.id)}.otlp.json")


@login_required
@require_GET
@never_cache
def session_export_trace(
    request: HttpRequest, session_id: str, trace_id: str
) -> StreamingHttpResponse:
    """The session's spans of one trace as OTLP/JSON; 404 when the session has none."""
    session = session_get_for_user(user=request.user, session_id=session_id)
    if not session_has_trace(session_id=session.id, trace_id=trace_id):
        raise Http404("this session has no such trace")
    parts = session_otlp_parts(session=session, trace_id=trace_id)
    return _download(request, parts, f"agentdash-trace-{_name(trace_id)}.otlp.json")


def _download(request: HttpRequest, parts: Iterator[str], filename: str) -> StreamingHttpResponse:
    """An attachment of JSON, streamed part by part. Under ASGI (daphne) the parts are read
    in a thread one at a time: Django would read a plain iterator whole before sending."""
    content = _streamed(parts) if isinstance(request, ASGIRequest) else _encoded(parts)
    response = StreamingHttpResponse(content, content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


def _encoded(parts: Iterator[str]) -> Iterator[bytes]:
    for part in parts:
        yield part.encode("utf-8")


async def _streamed(parts: Iterator[str]) -> AsyncIterator[bytes]:
    step = sync_to_async(next, thread_sensitive=True)
    while (part := await step(parts, None)) is not None:
        yield part.encode("utf-8")


def _name(text: str) -> str:
    """Text fit for a file name: letters, digits, ``.``, ``_``, ``-`` (others become ``_``)."""
    return _UNSAFE_IN_NAME.sub("_", text)[:100].strip(".") or "export"
