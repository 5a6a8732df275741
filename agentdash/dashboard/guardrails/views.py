"""The guardrails pages: what the guardrails decided in a session and for an agent, and an
operator's edits of the policies they follow (validated, previewed as a diff, versioned)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from agentdash.agent_sessions.selectors import session_get_for_user
from agentdash.controls.forms import PolicyEditForm
from agentdash.controls.selectors import (
    config_diff,
    policies_governing,
    policy_find,
    policy_versions,
)
from agentdash.controls.services import PolicyVersionConflict
from agentdash.core.permissions import OperatorRequired, PermissionRequired, is_operator
from agentdash.registry.selectors import agent_known, agent_record_find
from agentdash.spans import guardrail_log
from runtime.telemetry.attributes import Decision

if TYPE_CHECKING:
    from agentdash.controls.models import Policy

DECISION_FILTERS = ("stopped", *Decision.ALL)


class _Filters(TypedDict):
    decision: str
    guardrail: str


def _filters(request: HttpRequest) -> _Filters:
    decision = request.GET.get("decision", "")
    guardrail = request.GET.get("guardrail", "")[:128]
    return {
        "decision": decision if decision in DECISION_FILTERS else "",
        "guardrail": guardrail,
    }


def _page(request: HttpRequest, spans: Any, template: str, context: dict[str, Any]) -> HttpResponse:
    filters = _filters(request)
    counts = guardrail_log.decision_counts(spans=spans)
    context.update(
        {
            "decisions": Decision.ALL,
            "decision_filters": DECISION_FILTERS,
            "counts": counts,
            "totals": [sum(c.cells[i] for c in counts) for i in range(len(Decision.ALL))],
            "rows": guardrail_log.decisions_list(spans=spans, **filters),
            "filters": filters,
            "filtered": any(filters.values()),
            "is_operator": is_operator(request.user),
        }
    )
    return render(request, template, context)


@login_required
@require_GET
def session_guardrails(request: HttpRequest, session_id: str) -> HttpResponse:
    """A session's guardrail decisions: counted per guardrail, listed newest first, each
    linked to its span on the session page. The session's owner and operators see it."""
    session = session_get_for_user(user=request.user, session_id=session_id)
    spans = guardrail_log.session_decisions(session_id=session.id)
    return _page(request, spans, "dashboard/guardrails_session.html", {"session": session})


def _names(tree: Any) -> set[str]:
    names: set[str] = set()
    if isinstance(tree, dict):
        if isinstance(tree.get("name"), str):
            names.add(tree["name"])
        for sub in tree.get("sub_agents") or []:
            names |= _names(sub)
    return names


def _operator(request: HttpRequest) -> None:
    if not is_operator(request.user):
        raise OperatorRequired("only operators see an agent's guardrails")


@login_required
@require_GET
def agent_guardrails(request: HttpRequest, agent_name: str) -> HttpResponse:
    """Every decision of an agent's guardrails across its sessions, the sessions with the
    most, and the policies governing it or its sub-agents. Operators only."""
    # Which agents exist is no secret (every user's home page lists them): a missing one is a
    # 404 for everyone, an existing one is for operators.
    record = agent_record_find(name=agent_name)
    if record is None:
        raise Http404("no such agent")
    _operator(request)
    names = {record.name}
    for sub in record.sub_agents or []:
        names |= _names(sub)
    spans = guardrail_log.agent_decisions(agent_name=record.name)
    context = {
        "agent": record,
        "policies": policies_governing(agent_names=names),
        "sessions": guardrail_log.decision_counts_by_session(agent_name=record.name),
    }
    return _page(request, spans, "dashboard/guardrails_agent.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def policy_edit(request: HttpRequest, policy_id: int) -> HttpResponse:
    """An operator edits a policy: "Preview" checks it and shows the diff against the stored
    version; "Save" stores it as the next version (refused, nothing lost, when someone saved
    meanwhile). Its history lists every version with what changed."""
    _operator(request)
    if not request.user.has_perm("controls.change_policy"):
        raise PermissionRequired("controls.change_policy", "changing policies is not allowed")
    policy = policy_find(policy_id=policy_id)
    if policy is None:
        raise Http404("no such policy")
    back = _back(request)
    preview = None
    if request.method == "POST":
        editing = policy_find(policy_id=policy.pk)  # its own copy: the form writes into it
        if editing is None:
            raise Http404("no such policy")
        form = PolicyEditForm(request.POST, instance=editing)
        if form.is_valid():
            data = form.cleaned_data
            if request.POST.get("action") == "save":
                try:
                    saved = form.update(actor=request.user)
                except PolicyVersionConflict as exc:
                    form.add_error(None, str(exc))
                except ValidationError as exc:
                    form.add_error(None, exc)
                else:
                    if saved.version == policy.version:
                        messages.info(request, "Nothing changed: the policy was not saved.")
                    else:
                        messages.success(request, f"Saved {saved.name} as version {saved.version}.")
                    return redirect(_edit_url(saved, back))
            else:
                preview = {
                    "changes": config_diff(before=policy.config, after=data["config"]),
                    "enabled": (policy.enabled, data["enabled"]),
                    "agents": (policy.agents, data["agents"]),
                }
    else:
        form = PolicyEditForm(instance=policy)
    return render(
        request,
        "dashboard/policy_edit.html",
        {
            "policy": policy,
            "form": form,
            "preview": preview,
            "history": policy_versions(policy=policy),
            "back": back,
            "is_operator": True,
        },
    )


def _back(request: HttpRequest) -> str:
    """Where "back" goes: an agent's guardrails page named by ``?agent=`` (a name only, so
    it is never a link elsewhere)."""
    agent = (request.GET.get("agent") or request.POST.get("agent") or "")[:128]
    if agent and agent_known(name=agent):
        return agent
    return ""


def _edit_url(policy: Policy, agent: str) -> str:
    url = reverse("dashboard:policy_edit", kwargs={"policy_id": policy.pk})
    return f"{url}?{urlencode({'agent': agent})}" if agent else url
