"""The playground page (operators): a model span's call pre-filled — model, system
instruction, each message's parts, tools, parameters —, every part editable; *Run* sends it
and shows the answer beside the original, with a word diff, tokens, cost and latency; the
span's playground history; a run kept as an eval case, or its system instruction as the next
version of the agent's stored instruction."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods
from google.genai import types

from agentdash.agent_sessions.selectors import session_get_for_user
from agentdash.core.permissions import OperatorRequired, is_operator
from agentdash.dashboard.compare.align import words_diff
from agentdash.dashboard.instructions.reads import instructed_agent
from agentdash.dashboard.playground.edits import form_rows, payload_from, skeleton_of
from agentdash.evals.services import eval_case_save_turn
from agentdash.instructions.services import InstructionConflict, instruction_save
from agentdash.playground.selectors import (
    answer_of,
    model_span,
    payload_of,
    playground_history,
    playground_run_get,
    text_of,
)
from agentdash.playground.services import (
    playground_check,
    playground_record,
    playground_send,
    playground_stream_kept,
)
from runtime.models.call_payload import CallPayload, contents_of

NDJSON = "application/x-ndjson"
IDENTITY = "\n\nYou are an agent. Your internal name is"
"""Where the runtime's own lines start in a system instruction (after the agent's)."""


@login_required
@require_http_methods(["GET", "POST"])
async def playground(
    request: HttpRequest, session_id: str, trace_id: str, span_id: str
) -> HttpResponseBase:
    """Async: *Run* waits for the model (up to two minutes) on the server's loop, not in the
    thread every synchronous view shares; everything else is read and written in that
    thread (``sync_to_async``)."""
    if request.method == "POST" and request.POST.get("action") == "run":
        prepared = await sync_to_async(_run_prepare)(request, session_id, trace_id, span_id)
        if isinstance(prepared, HttpResponse):
            return prepared
        session, span, payload, here = prepared
        if request.POST.get("stream") == "1":  # the page's script: the answer as it comes
            lines = _streamed(request, session, span, payload, here)
            return StreamingHttpResponse(lines, content_type=NDJSON)
        sent = await playground_send(payload)
        row = await sync_to_async(playground_record)(
            session=session, trace_id=span["trace_id"], span_id=span["span_id"],
            payload=payload, sent=sent, actor=request.user,
        )  # fmt: skip
        return redirect(f"{here}?run={row.pk}")
    page: HttpResponse = await sync_to_async(_page)(request, session_id, trace_id, span_id)
    return page


async def _streamed(
    request: HttpRequest, session: Any, span: dict[str, Any], payload: CallPayload, here: str
) -> AsyncIterator[bytes]:
    """One JSON object a line: ``{"text": …}`` for each piece of the answer as the model
    sends it (text, set as text by the page), then ``{"run": id, "url": …}`` once the run is
    kept — the page then opens it, its comparison drawn by the server. A page closed before
    then still has its run kept (``playground_stream_kept``)."""
    async for said in playground_stream_kept(
        session=session, trace_id=span["trace_id"], span_id=span["span_id"], payload=payload,
        actor=request.user,
    ):  # fmt: skip
        if isinstance(said, str):
            yield _line({"text": said})
        else:
            yield _line({"run": said.pk, "url": f"{here}?run={said.pk}", "error": said.error})


def _line(value: dict[str, Any]) -> bytes:
    return json.dumps(value).encode("ascii") + b"\n"  # escaped: no text can break a line


def _found(request: HttpRequest, session_id: str, trace_id: str, span_id: str) -> Any:
    """The session, the model span and the page's address; 404 / 403 as the page answers."""
    session = session_get_for_user(user=request.user, session_id=session_id)
    if not is_operator(request.user):
        raise OperatorRequired("only operators use the playground")
    span = model_span(session_id=session.pk, trace_id=trace_id[:64], span_id=span_id[:32])
    if span is None:
        raise Http404("no model call of this session has that id")
    ids = {"session_id": session.pk, "trace_id": trace_id, "span_id": span_id}
    return session, span, reverse("dashboard:playground", kwargs=ids)


def _run_prepare(request: HttpRequest, session_id: str, trace_id: str, span_id: str) -> Any:
    """(session, span, the payload the form says, the page's address) — or the page again
    saying what cannot be sent."""
    session, span, here = _found(request, session_id, trace_id, span_id)
    try:
        payload = payload_from(request.POST)
        playground_check(payload=payload, actor=request.user)
    except ValidationError as exc:
        problems = [f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items()]
        return _render(request, session, span, here, None, payload_of(span), problems)
    return session, span, payload, here


def _page(request: HttpRequest, session_id: str, trace_id: str, span_id: str) -> HttpResponse:
    session, span, here = _found(request, session_id, trace_id, span_id)
    shown = _run_shown(request, session.pk)
    payload = CallPayload(**shown.request) if shown is not None else payload_of(span)
    problems: list[str] = []
    if request.method == "POST":
        action = request.POST.get("action", "")
        try:
            if shown is None:
                raise ValidationError({"run": ["run the call first"]})
            if action == "save_case":
                record, replaced = _save_case(request, session.app_name, span, shown)
                messages.success(request, f"{'Replaced' if replaced else 'Kept'} as a case of "
                                          f"eval set {record.eval_set_id}.")  # fmt: skip
            elif action == "save_instruction":
                saved = _save_instruction(request, span, shown)
                messages.success(request, f"Saved as version {saved.version} of "
                                          f"{saved.agent_name}'s instruction.")  # fmt: skip
            return redirect(f"{here}?run={shown.pk}")
        except ValidationError as exc:
            problems = [f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items()]
        except InstructionConflict as exc:
            problems = [str(exc)]
    return _render(request, session, span, here, shown, payload, problems)


def _render(
    request: HttpRequest, session: Any, span: dict[str, Any], here: str, shown: Any,
    payload: CallPayload, problems: list[str],
) -> HttpResponse:  # fmt: skip
    original = text_of(answer_of(span))
    left, right = words_diff(original, shown.text) if shown is not None else ([], [])
    agent = str((span.get("attributes") or {}).get("gen_ai.agent.name") or "")
    return render(request, "dashboard/playground.html", {
        "session": session, "span": span, "payload": payload, "rows": form_rows(payload),
        "skeleton": skeleton_of(payload), "tools_json": _json(payload.tools),
        "original": original, "original_answer": answer_of(span), "shown": shown,
        "left": left, "right": right, "problems": problems, "here": here,
        "history": playground_history(session_id=session.pk, trace_id=span["trace_id"],
                                      span_id=span["span_id"]),
        "instructed": instructed_agent(name=agent) if agent else None,
        "duration_ms": _duration_ms(span), "is_operator": True,
    })  # fmt: skip


def _run_shown(request: HttpRequest, session_id: str) -> Any:
    wanted = request.GET.get("run", "")
    if not wanted.isdigit():
        return None
    return playground_run_get(session_id=session_id, run_id=int(wanted))


def _save_case(request: HttpRequest, app_name: str, span: dict[str, Any], shown: Any) -> Any:
    contents = contents_of(shown.request.get("messages") or [])
    users = [c for c in contents if c.role == "user" and any(p.text for p in c.parts or [])]
    if not users or not shown.text:
        raise ValidationError({"case": ["a case needs the user's message and a text answer"]})
    return eval_case_save_turn(
        eval_set_id=request.POST.get("eval_set_id", "") or "playground",
        eval_id=request.POST.get("eval_id", "") or f"{span['span_id']}-{shown.pk}",
        agent_name=app_name, user_content=users[-1],
        expected=types.Content(role="model", parts=[types.Part(text=shown.text)]),
        actor=request.user, said={"playground_run": shown.pk},
    )  # fmt: skip


def _save_instruction(request: HttpRequest, span: dict[str, Any], shown: Any) -> Any:
    agent = instructed_agent(name=str((span.get("attributes") or {}).get("gen_ai.agent.name")))
    if agent is None:
        raise PermissionDenied("this agent's instruction is not kept here")
    text = str(shown.request.get("system") or "").split(IDENTITY, 1)[0]
    return instruction_save(agent_name=agent.name, text=text, actor=request.user,
                            reason=f"from the playground (run {shown.pk})",
                            expected_version=agent.version)  # fmt: skip


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1)


def _duration_ms(span: dict[str, Any]) -> float | None:
    start, end = span.get("start_time"), span.get("end_time")
    return (
        round((end - start) / 1e6, 1) if isinstance(start, int) and isinstance(end, int) else None
    )
