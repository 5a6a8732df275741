"""API tokens: made and revoked by their owner (both audited), and checked on the endpoints
that take them — a view wrapped in :func:`token_or_session` answers a request with
``Authorization: Bearer adt_…`` as the token's user (no CSRF token needed: no cookie is
involved), and any other request as a signed-in page does (login and CSRF checked)."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt, csrf_protect

from agentdash.core.models import ApiToken
from agentdash.core.secrets import PREFIX_CHARS, secret_make, secret_matches, secret_shape_ok
from agentdash.core.services import audit_record

TOKEN_KIND = "adt_"
TARGET = "core.apitoken"


def api_token_create(*, user: Any, name: str) -> tuple[ApiToken, str]:
    """A new token of ``user`` and its secret text — shown this once."""
    name = name.strip()
    if not name or len(name) > 100:
        raise ValidationError({"name": ["a name of 1 to 100 characters: what it is for"]})
    raw, prefix, hashed = secret_make(TOKEN_KIND)
    with transaction.atomic():
        token = ApiToken.objects.create(user=user, name=name, prefix=prefix, key_hash=hashed)
        audit_record(actor=user, action="api_token.create", target_type=TARGET,
                     target_id=str(token.pk), after={"name": name, "prefix": prefix})  # fmt: skip
    return token, raw


def api_token_revoke(*, token: ApiToken, actor: Any) -> None:
    """Refuse ``token`` from now on (its owner's to revoke)."""
    if token.user_id != actor.pk:
        raise ValidationError({"token": ["only its owner revokes a token"]})
    if token.revoked_at is not None:
        return
    with transaction.atomic():
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
        audit_record(actor=actor, action="api_token.revoke", target_type=TARGET,
                     target_id=str(token.pk), before={"prefix": token.prefix})  # fmt: skip


def api_token_check(raw: str) -> ApiToken | None:
    """The active token whose secret is ``raw``, its user active; else ``None``."""
    if not secret_shape_ok(raw, TOKEN_KIND):
        return None
    token = (ApiToken.objects.select_related("user")
             .filter(prefix=raw[:PREFIX_CHARS], revoked_at__isnull=True).first())  # fmt: skip
    if token is None or not secret_matches(token.key_hash, raw) or not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token


def api_tokens_of(*, user: Any) -> list[ApiToken]:
    return list(ApiToken.objects.filter(user=user).order_by("-created_at"))


def api_token_of(*, user: Any, token_id: int) -> ApiToken | None:
    return ApiToken.objects.filter(user=user, pk=token_id).first()


def token_or_session(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """``view`` for a token's bearer (``request.api_token`` set) or a signed-in person."""
    signed_in = csrf_protect(login_required(view))

    @csrf_exempt
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        said = request.META.get("HTTP_AUTHORIZATION", "")
        if not said.startswith("Bearer "):
            return signed_in(request, *args, **kwargs)
        token = api_token_check(said.removeprefix("Bearer ").strip())
        if token is None:
            problem = {"field": "authorization", "message": "no such API token, or it was revoked"}
            answer = JsonResponse({"error": problem}, status=401)
            answer["WWW-Authenticate"] = 'Bearer realm="agentdash api"'
            return answer
        request.user = token.user
        request.api_token = token  # type: ignore[attr-defined]
        return view(request, *args, **kwargs)

    return wrapper
