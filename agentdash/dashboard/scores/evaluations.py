"""The online evaluators' page (operators): each rule with how its evaluations went and what
its judge spent, apart from the agents' own cost; the latest evaluations, each linked to the
run it scored and, for a judge, to the judge's own session."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from agentdash.core.permissions import OperatorRequired, is_operator
from agentdash.scores.selectors import (
    EVALUATION_STATUSES,
    evaluations_recent,
    evaluator_rules_summary,
)


@login_required
@require_GET
def evaluations(request: HttpRequest) -> HttpResponse:
    if not is_operator(request.user):
        raise OperatorRequired("only operators see the evaluators")
    rule = request.GET.get("rule", "")[:64]
    status = request.GET.get("status", "")
    if status not in EVALUATION_STATUSES:
        status = ""
    return render(request, "dashboard/evaluations.html", {
        "rules": evaluator_rules_summary(),
        "evaluations": evaluations_recent(rule=rule, status=status),
        "rule": rule, "status": status, "statuses": EVALUATION_STATUSES,
        "is_operator": True,
    })  # fmt: skip
