"""A person's API tokens: made (the secret shown once, on the page that made it), listed
with when each was last used, revoked. Each acts as its person on the endpoints that take
tokens."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from agentdash.core.api_tokens import (
    api_token_create,
    api_token_of,
    api_token_revoke,
    api_tokens_of,
)
from agentdash.core.permissions import is_operator


@login_required
@require_http_methods(["GET", "POST"])
@never_cache
def tokens(request: HttpRequest) -> HttpResponse:
    made = ""
    problem = ""
    if request.method == "POST":
        try:
            if request.POST.get("action") == "revoke":
                wanted = request.POST.get("token", "")
                token = (
                    api_token_of(user=request.user, token_id=int(wanted))
                    if wanted.isdigit()
                    else None
                )
                if token is None:
                    raise ValidationError({"token": ["no such token of yours"]})
                api_token_revoke(token=token, actor=request.user)
            else:
                _, made = api_token_create(user=request.user, name=request.POST.get("name", ""))
        except ValidationError as exc:
            problem = " ".join(m for ms in exc.message_dict.values() for m in ms)
    return render(request, "dashboard/tokens.html", {
        "tokens": api_tokens_of(user=request.user), "made": made, "problem": problem,
        "is_operator": is_operator(request.user),
    })  # fmt: skip
