"""The eval pages (docs/EVAL.md), operators only: eval sets listed and imported, one set
with its cases and runs, a set downloaded as ``<eval_set_id>.evalset.json``, a run started
and its results; and a session kept as a case (from the session page)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from agentdash.agent_sessions.selectors import session_get_for_user
from agentdash.core.permissions import OperatorRequired, is_operator
from agentdash.evals.forms import EvalCaseSaveForm, EvalRunForm, EvalSetImportForm
from agentdash.evals.runner import eval_run_spawn
from agentdash.evals.selectors import (
    eval_run_cases,
    eval_run_find,
    eval_runs_of,
    eval_set_find,
    eval_set_of,
    eval_sets_list,
)
from agentdash.evals.services import (
    eval_case_save,
    eval_file_name,
    eval_run_create,
    eval_set_import,
    eval_set_parse,
    eval_set_text,
)
from agentdash.registry.selectors import agent_list
from runtime.evaluation import content_text

if TYPE_CHECKING:
    from agentdash.evals.models import EvalSetRecord


def _operator(request: HttpRequest) -> None:
    if not is_operator(request.user):
        raise OperatorRequired("only operators work with eval sets")


def _page(
    request: HttpRequest, template: str, context: dict[str, Any], status: int = 200
) -> HttpResponse:
    # Only operators get here: the top bar shows them their links.
    return render(request, template, {**context, "is_operator": True}, status=status)


def _errors(exc: ValidationError) -> list[str]:
    found = getattr(exc, "message_dict", None)
    if found:
        return [m for ms in found.values() for m in ms]
    return list(exc.messages)


@login_required
@require_http_methods(["GET", "POST"])
def evals_list(request: HttpRequest) -> HttpResponse:
    """Every eval set, and the import of an ADK eval-set file (POST, multipart): a file
    that is not one is a 400 saying why."""
    _operator(request)
    form = EvalSetImportForm()
    errors: list[str] = []
    if request.method == "POST":
        form = EvalSetImportForm(request.POST, request.FILES)
        if form.is_valid():
            upload = form.cleaned_data["file"]
            stem = upload.name.removesuffix(".json").removesuffix(".evalset")
            try:
                found = eval_set_parse(upload.read(), eval_set_id=stem.removesuffix(".test"))
                record, changed = eval_set_import(
                    eval_set=found,
                    actor=request.user,
                    agent_name=form.cleaned_data["agent_name"],
                    replace=form.cleaned_data["replace"],
                )
            except ValidationError as exc:
                errors = _errors(exc)
            else:
                if changed:
                    messages.success(request, f"Imported eval set {record.eval_set_id}.")
                else:
                    messages.info(
                        request,
                        f"Eval set {record.eval_set_id} is stored already with the same "
                        "content: nothing changed.",
                    )
                return redirect("dashboard:eval_set", pk=record.pk)
        else:
            # Typed otherwise, but an ErrorList yields its messages (str), not ValidationErrors.
            errors = [e for es in form.errors.values() for e in es]  # type: ignore[misc]
    context = {"sets": eval_sets_list(), "form": form, "errors": errors}
    return _page(request, "dashboard/evals.html", context, status=400 if errors else 200)


def _set_page(
    request: HttpRequest, record: EvalSetRecord, form: EvalRunForm, status: int = 200
) -> HttpResponse:
    eval_set = eval_set_of(record=record)
    cases = [
        {
            "eval_id": case.eval_id,
            "turns": len(case.conversation or []),
            "first": content_text(case.conversation[0].user_content) if case.conversation else "",
            "tools": sum(len(t.tool_calls()) for t in case.conversation or []),
            "scenario": case.conversation is None,
        }
        for case in eval_set.eval_cases
    ]
    context = {"record": record, "cases": cases, "runs": eval_runs_of(record=record), "form": form}
    return _page(request, "dashboard/eval_set.html", context, status=status)


def _eval_set(pk: int) -> EvalSetRecord:
    record = eval_set_find(pk=pk)
    if record is None:
        raise Http404("no such eval set")
    return record


def _run_form(record: EvalSetRecord, data: Any = None) -> EvalRunForm:
    agents = [a.name for a in agent_list()]
    return EvalRunForm(data, agents=agents, default_agent=record.agent_name)


@login_required
@require_GET
def eval_set_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """An eval set: its cases, its runs, the form that starts one."""
    _operator(request)
    record = _eval_set(pk)
    return _set_page(request, record, _run_form(record))


@login_required
@require_GET
@never_cache
def eval_set_download(request: HttpRequest, pk: int) -> HttpResponse:
    """The set as ``adk`` writes it: ``<eval_set_id>.evalset.json``."""
    _operator(request)
    record = _eval_set(pk)
    response = HttpResponse(eval_set_text(record), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{eval_file_name(record)}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


@login_required
@require_POST
def eval_set_run(request: HttpRequest, pk: int) -> HttpResponse:
    """Start a run of every case against the chosen agent (one new session each, owned by
    the operator), executed in the background; then its results page."""
    _operator(request)
    record = _eval_set(pk)
    form = _run_form(record, request.POST)
    if not form.is_valid():
        return _set_page(request, record, form, status=400)
    try:
        eval_run = eval_run_create(
            record=record,
            actor=request.user,
            agent_name=form.cleaned_data["agent_name"],
            criteria=form.criteria(),
            dispatch=eval_run_spawn,
        )
    except ValidationError as exc:
        for message in _errors(exc):
            form.add_error(None, message)
        return _set_page(request, record, form, status=400)
    return redirect("dashboard:eval_run", pk=eval_run.pk)


@login_required
@require_GET
@never_cache
def eval_run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """A run's results: per case its scores, verdict, turns and session; the page reloads
    itself while the run goes on."""
    _operator(request)
    eval_run = eval_run_find(pk=pk)
    if eval_run is None:
        raise Http404("no such eval run")
    cases = list(eval_run_cases(eval_run=eval_run))
    context = {
        "run": eval_run,
        "cases": cases,
        "passed": sum(c.status == "passed" for c in cases),
    }
    return _page(request, "dashboard/eval_run.html", context)


@login_required
@require_POST
def session_eval_case(request: HttpRequest, session_id: str) -> HttpResponse:
    """Keep the session's conversation as a case of an eval set (operators); a case of the
    same name in the set is replaced. Then the set's page."""
    session = session_get_for_user(user=request.user, session_id=session_id)
    _operator(request)
    form = EvalCaseSaveForm(request.POST)
    if not form.is_valid():
        # Typed otherwise, but an ErrorList yields its messages (str), not ValidationErrors.
        problems = "; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items())  # type: ignore[arg-type]
        return HttpResponse(problems, status=400, content_type="text/plain; charset=utf-8")
    try:
        record, replaced = eval_case_save(
            session=session,
            eval_set_id=form.cleaned_data["eval_set_id"],
            eval_id=form.cleaned_data["eval_id"],
            actor=request.user,
        )
    except ValidationError as exc:
        return HttpResponse(
            "; ".join(_errors(exc)), status=400, content_type="text/plain; charset=utf-8"
        )
    verb = "Replaced" if replaced else "Added"
    messages.success(request, f"{verb} this session as a case of {record.eval_set_id}.")
    return redirect("dashboard:eval_set", pk=record.pk)
