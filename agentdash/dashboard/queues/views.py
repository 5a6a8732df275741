"""The annotation queues' pages (operators): the queues with their progress and a form to
make one; a queue — fill it from a filter or with a session's runs, its items with who has
them, who reviewed them and the scores given —; and the review, one item at a time: the
run's conversation and steps beside the queue's scores, keys to score, finish or skip."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from agentdash.agent_sessions.selectors import event_from_row, session_events
from agentdash.core.permissions import OperatorRequired, is_operator
from agentdash.dashboard.form_choices import agent_choices
from agentdash.scores.queues import (
    HOLD,
    RunFilter,
    queue_add_session,
    queue_create,
    queue_fill,
    queue_item_finish,
    queue_item_release,
    queue_next,
    queue_progress,
)
from agentdash.scores.selectors import (
    definitions_enabled,
    queue_get,
    queue_item_get,
    queue_items,
    queues_with_progress,
)
from agentdash.spans.step_reads import run_steps


def _operator(request: HttpRequest) -> None:
    if not is_operator(request.user):
        raise OperatorRequired("annotation queues are operators' tools")


def _said(exc: ValidationError) -> str:
    return " ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())


@login_required
@require_http_methods(["GET", "POST"])
def queues(request: HttpRequest) -> HttpResponse:
    _operator(request)
    if request.method == "POST":
        try:
            made = queue_create(
                name=request.POST.get("name", "").strip(),
                description=request.POST.get("description", "").strip()[:500],
                definitions=request.POST.getlist("definitions"), actor=request.user,
            )  # fmt: skip
        except ValidationError as exc:
            messages.error(request, f"The queue was not made: {_said(exc)}")
        else:
            return redirect("dashboard:queue", name=made.name)
    return render(request, "dashboard/queues.html", {
        "queues": queues_with_progress(), "definitions": definitions_enabled(),
        "is_operator": True,
    })  # fmt: skip


@login_required
@require_http_methods(["GET", "POST"])
def queue_page(request: HttpRequest, name: str) -> HttpResponse:
    queue = queue_get(name=name)
    if queue is None:  # for anyone, as a page of what is not there
        raise Http404("no queue of that name")
    _operator(request)
    if request.method == "POST":
        if request.POST.get("action") == "release":
            return _release(request, queue)
        try:
            if request.POST.get("action") == "add_session":
                added = queue_add_session(queue=queue, session_id=request.POST.get(
                    "session", "").strip()[:64], actor=request.user)  # fmt: skip
            else:
                added = queue_fill(queue=queue, runs=_filter(request), actor=request.user)
        except ValidationError as exc:
            messages.error(request, f"Nothing was added: {_said(exc)}")
        else:
            messages.success(request, f"Added {added} run{'' if added == 1 else 's'}.")
        return redirect("dashboard:queue", name=queue.name)
    return render(request, "dashboard/queue.html", {
        "queue": queue, "items": queue_items(queue=queue), "progress": queue_progress(queue=queue),
        "agents": agent_choices(), "is_operator": True,
        "hold_minutes": int(HOLD.total_seconds() // 60),
    })  # fmt: skip


def _release(request: HttpRequest, queue: Any) -> HttpResponse:
    """An operator takes an item back from the reviewer who has it."""
    wanted = request.POST.get("item", "")
    item = queue_item_get(queue=queue, item_id=int(wanted)) if wanted.isdigit() else None
    if item is None:
        raise Http404("no such item in this queue")
    try:
        queue_item_release(item=item, actor=request.user)
    except ValidationError as exc:
        messages.error(request, f"Not released: {_said(exc)}")
    else:
        messages.success(request, f"Item {item.position} is free for the next reviewer.")
    return redirect("dashboard:queue", name=queue.name)


def _filter(request: HttpRequest) -> RunFilter:
    def number(name: str, default: int) -> int:
        text = request.POST.get(name, "")
        if not text.strip():
            return default
        if not text.strip().isdigit():
            raise ValidationError({name: ["a whole number"]})
        return int(text)

    outcome = request.POST.get("outcome", "")
    if outcome not in ("", "succeeded", "failed", "cancelled"):
        raise ValidationError({"outcome": ["succeeded, failed, cancelled or any"]})
    return RunFilter(agent=request.POST.get("agent", "")[:128], outcome=outcome,
                     tool_error=bool(request.POST.get("tool_error")),
                     days=number("days", 7), limit=number("limit", 20))  # fmt: skip


@login_required
@require_http_methods(["GET", "POST"])
def queue_review(request: HttpRequest, name: str) -> HttpResponse:
    queue = queue_get(name=name)
    if queue is None:  # for anyone, as a page of what is not there
        raise Http404("no queue of that name")
    _operator(request)
    here = reverse("dashboard:queue_review", kwargs={"name": queue.name})
    if request.method == "POST":
        wanted = request.POST.get("item", "")
        item = queue_item_get(queue=queue, item_id=int(wanted)) if wanted.isdigit() else None
        if item is None:
            raise Http404("no such item in this queue")
        queue_item_finish(item=item, actor=request.user,
                          skipped=request.POST.get("action") == "skip")  # fmt: skip
        return redirect(here)
    item = queue_next(queue=queue, actor=request.user)
    context: dict[str, Any] = {"queue": queue, "item": item, "is_operator": True,
                               "progress": queue_progress(queue=queue)}  # fmt: skip
    if item is not None:
        rows = session_events(session_id=item.session_id, invocation_id=item.run.invocation_id)
        context.update(
            turns=[_turn(event_from_row(row)) for row in rows[:200]],
            steps=run_steps(run_id=item.run_id),
            review_data={
                "scores_path": reverse(
                    "dashboard:session_scores", kwargs={"session_id": item.session_id}
                ),
                "run": item.run_id,
                "me": request.user.get_username(),
                "definitions": [d.name for d in queue.definitions.all()],
            },
        )
    return render(request, "dashboard/queue_review.html", context)


def _turn(event: Any) -> dict[str, Any]:
    """An event as the review shows it: who, its text, its tool calls and results (text)."""
    parts = event.content.parts if event.content else []
    calls = [f"{p.function_call.name}({json.dumps(p.function_call.args or {})[:300]})"
             for p in parts or [] if p.function_call]  # fmt: skip
    results = [f"{p.function_response.name} → {json.dumps(p.function_response.response)[:300]}"
               for p in parts or [] if p.function_response]  # fmt: skip
    text = "".join(p.text or "" for p in parts or [] if p.text and not p.thought)
    return {"author": event.author, "text": text, "calls": calls, "results": results}
