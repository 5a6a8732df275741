"""The instructions pages (operators): the agents that read a stored instruction, and one
agent's editor — preview with the diff against the current version, save as the next
version (refused, the text kept, when someone saved meanwhile), the history with each
version's diff, and rollback to any earlier version or to the code's text."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from agentdash.core.permissions import OperatorRequired, PermissionRequired, is_operator
from agentdash.dashboard.compare.align import words_diff
from agentdash.dashboard.instructions.reads import Instructed, instructed_agent, instructed_agents
from agentdash.instructions.selectors import instruction_history
from agentdash.instructions.services import (
    PERMISSION,
    REASON_MAX_CHARS,
    TEXT_MAX_CHARS,
    InstructionConflict,
    instruction_rollback,
    instruction_save,
)


class InstructionForm(forms.Form):
    text = forms.CharField(
        max_length=TEXT_MAX_CHARS, strip=False, widget=forms.Textarea(attrs={"rows": 12})
    )
    reason = forms.CharField(max_length=REASON_MAX_CHARS, required=False)
    loaded_version = forms.IntegerField(min_value=0, widget=forms.HiddenInput)


def _operator(request: HttpRequest) -> None:
    if not is_operator(request.user):
        raise OperatorRequired("only operators see agents' instructions")


@login_required
@require_GET
def instructions(request: HttpRequest) -> HttpResponse:
    _operator(request)
    return render(request, "dashboard/instructions.html",
                  {"agents": instructed_agents(), "is_operator": True})  # fmt: skip


@login_required
@require_http_methods(["GET", "POST"])
def instruction_edit(request: HttpRequest, agent_name: str) -> HttpResponse:
    # An agent that is not there is a 404 for anyone (as an agent's guardrails page is).
    agent = instructed_agent(name=agent_name[:128])
    if agent is None:
        raise Http404("no agent of that name reads a stored instruction")
    _operator(request)
    preview: dict[str, Any] | None = None
    form = InstructionForm(initial={"text": agent.text, "loaded_version": agent.version})
    if request.method == "POST":
        if not request.user.has_perm(PERMISSION):
            raise PermissionRequired(PERMISSION, "changing instructions is not allowed")
        action = request.POST.get("action", "")
        if action == "rollback":
            return _rollback(request, agent)
        form = InstructionForm(request.POST)
        if form.is_valid():
            text, reason = form.cleaned_data["text"], form.cleaned_data["reason"]
            if action == "save":
                try:
                    saved = instruction_save(
                        agent_name=agent.name, text=text, reason=reason, actor=request.user,
                        expected_version=form.cleaned_data["loaded_version"],
                    )  # fmt: skip
                except InstructionConflict as exc:
                    form.add_error(None, str(exc))
                    agent = instructed_agent(name=agent.name) or agent
                except ValidationError as exc:
                    form.add_error(None, exc)
                else:
                    said = (
                        f"Saved as version {saved.version}: the agent reads it from its next step."
                    )
                    messages.success(request, said)
                    return redirect(_url(agent))
            else:
                preview = _diff(agent.text, text.replace("\r\n", "\n"))
    return render(
        request,
        "dashboard/instruction_edit.html",
        {"agent": agent, "form": form, "preview": preview, "history": _history(agent),
         "is_operator": True, "can_edit": request.user.has_perm(PERMISSION)},
    )  # fmt: skip


def _rollback(request: HttpRequest, agent: Instructed) -> HttpResponse:
    try:
        to_version = int(request.POST.get("to_version", ""))
        loaded = int(request.POST.get("loaded_version", ""))
    except ValueError:
        messages.error(request, "Nothing was rolled back: the form was incomplete.")
        return redirect(_url(agent))
    try:
        saved = instruction_rollback(
            agent_name=agent.name, to_version=to_version, code_text=agent.code_text,
            actor=request.user, expected_version=loaded,
        )  # fmt: skip
    except InstructionConflict as exc:
        messages.error(request, str(exc))
    except ValidationError as exc:
        messages.error(request, " ".join(m for ms in exc.message_dict.values() for m in ms))
    else:
        back_to = "the code's text" if to_version == 0 else f"version {to_version}"
        messages.success(request, f"Rolled back to {back_to}, saved as version {saved.version}.")
    return redirect(_url(agent))


def _url(agent: Instructed) -> str:
    return reverse("dashboard:instruction_edit", kwargs={"agent_name": agent.name})


def _diff(before: str, after: str) -> dict[str, Any]:
    left, right = words_diff(before, after)
    return {"left": left, "right": right, "same": before == after}


def _history(agent: Instructed) -> list[dict[str, Any]]:
    """Each version, newest first, with its diff against the one before it (the oldest
    against the code's text), and the code's text last."""
    rows = list(instruction_history(agent_name=agent.name))
    out = []
    for i, row in enumerate(rows):
        before = rows[i + 1].text if i + 1 < len(rows) else agent.code_text
        out.append({"row": row, "label": row.label, "version": row.version,
                    "current": i == 0, "diff": _diff(before, row.text)})  # fmt: skip
    out.append({"row": None, "label": "code", "version": 0, "current": not rows,
                "diff": None, "text": agent.code_text})  # fmt: skip
    return out
