"""What the pages' JSON views share: a view that answers JSON, signed-in only, never
cached, gzipped; a bad parameter is a 400 naming it."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, overload

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.gzip import gzip_page
from django.views.decorators.http import require_GET

View = Callable[..., JsonResponse]


class BadParameter(ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def data_view(view: View) -> View:
    """Login, GET only, never cached, gzipped; ``BadParameter`` → 400 naming the field."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
        try:
            return view(request, *args, **kwargs)
        except BadParameter as exc:
            error = {"code": "bad_request", "field": exc.field, "message": str(exc)}
            return JsonResponse({"error": error}, status=400)

    return login_required(require_GET(never_cache(gzip_page(wrapped))))


@overload
def int_param(request: HttpRequest, name: str, *, default: int, low: int, high: int) -> int: ...


@overload
def int_param(
    request: HttpRequest, name: str, *, default: None, low: int, high: int
) -> int | None: ...


def int_param(
    request: HttpRequest, name: str, *, default: int | None, low: int, high: int
) -> int | None:
    raw = request.GET.get(name)
    if raw is None or raw == "":
        return default
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 19:
        raise BadParameter(name, f"{name} must be a whole number from {low} to {high}")
    value = int(raw)
    if not low <= value <= high:
        raise BadParameter(name, f"{name} must be a whole number from {low} to {high}")
    return value
