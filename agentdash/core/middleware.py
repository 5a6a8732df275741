"""The project's middleware: request ids, the Content-Security-Policy header, input hygiene
(400 for what no page may take) and the 503 page while the database is away."""

from __future__ import annotations

import logging
import re
import secrets
import sys
from collections.abc import Callable
from typing import Any

from django.core.files.uploadedfile import UploadedFile
from django.core.signals import got_request_exception
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponseNotFound,
    QueryDict,
)
from django.template.loader import render_to_string

from agentdash.core.hygiene import text_problem
from agentdash.core.outages import caused_by_outage
from agentdash.core.request_context import reset_request_id, set_request_id

logger = logging.getLogger(__name__)

_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{8,64}$")
# Attributes this middleware gives requests and views (HttpRequest declares none of them).
_REQUEST_ID = "request_id"
_CSP_NONCE = "csp_nonce"  # read by core.context_processors
_TAKES_NO_FORM = "takes_no_form"


class RequestIdMiddleware:
    """Tags each request with an id (a sane incoming ``X-Request-ID`` or a new one), echoed in
    the response and recorded by audit rows."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        incoming = request.headers.get("X-Request-ID", "")
        request_id = incoming if _SAFE_ID.match(incoming) else secrets.token_hex(12)
        setattr(request, _REQUEST_ID, request_id)
        token = set_request_id(request_id)
        try:
            response = self.get_response(request)
        finally:
            reset_request_id(token)
        response["X-Request-ID"] = request_id
        return response


def csp_header(nonce: str) -> str:
    """The policy: our own origin only, scripts only with this response's nonce, no inline
    styles, no plugins, no framing, no images from elsewhere."""
    return "; ".join(
        [
            "default-src 'self'",
            f"script-src 'self' 'nonce-{nonce}'",
            "style-src 'self'",
            "img-src 'self'",
            "connect-src 'self'",
            "font-src 'self'",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    )


class ContentSecurityPolicyMiddleware:
    """Sets a strict CSP on every response; templates get ``csp_nonce`` for their scripts."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        nonce = secrets.token_urlsafe(16)
        setattr(request, _CSP_NONCE, nonce)
        response = self.get_response(request)
        response.setdefault("Content-Security-Policy", csp_header(nonce))
        return response


# ── Input hygiene ───────────────────────────────────────────────────────────────────────────
# What a person can put in a request that no page may take: a NUL character (PostgreSQL
# refuses it in text and jsonb, so the first query using it fails) and an unpaired surrogate
# (no database stores it). Django hands both through: ``%00`` decodes to NUL in the path, the
# query string and urlencoded or multipart fields (invalid UTF-8 such as ``%ED%A0%80`` becomes
# U+FFFD there, harmless; a surrogate arrives only where a JSON escape is parsed, which the
# JSON form fields check: agentdash.core.forms). One check here covers every page, the admin's
# included, before any view or session lookup reads the value.

_MAX_NAME_SHOWN = 60


def takes_no_form(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Mark a view whose body is not a form (OTLP's protobuf or JSON): the hygiene check
    leaves its body alone — parsing it as a form would read it in full and answer in plain
    text — and the view checks what it takes in its own terms. Outermost decorator."""
    setattr(view, _TAKES_NO_FORM, True)
    return view


class InputHygieneMiddleware:
    """Answers **400** (plain text naming the part: a query parameter, a form field) when
    the query string or a form field — name or value — of a request contains a NUL character
    or an unpaired surrogate, and **404** when the path does (an address that names nothing
    this site has: no id can hold such a character). Cookies carrying them are dropped
    instead (the request goes on without them): a bad cookie must not lock a browser out.
    Form fields are checked once the view is known, unless it :func:`takes_no_form`."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        _drop_unusable_cookies(request)
        if path_problem := text_problem(request.path):
            logger.info("404 for %s: the address %s", request.method, path_problem)
            return HttpResponseNotFound(
                f"Not found: the address {path_problem}.\n",
                content_type="text/plain; charset=utf-8",
            )
        problem = request_input_problem(request, forms=False)
        if problem is not None:
            return _bad_request(request, problem)
        return self.get_response(request)

    def process_view(
        self, request: HttpRequest, view: Callable[..., Any], args: Any, kwargs: Any
    ) -> HttpResponse | None:
        if getattr(view, _TAKES_NO_FORM, False) or request.method != "POST":
            return None
        problem = _form_problem(request)
        return None if problem is None else _bad_request(request, problem)


def _bad_request(request: HttpRequest, problem: str) -> HttpResponse:
    logger.info("400 for %s: %s", request.method, problem)
    return HttpResponseBadRequest(
        f"Bad request: {problem}.\n", content_type="text/plain; charset=utf-8"
    )


def request_input_problem(request: HttpRequest, *, forms: bool = True) -> str | None:
    """What in ``request`` (path, query parameters, and with ``forms`` form fields and
    uploaded file names) cannot be taken, as a phrase naming the part (``"form field
    'reason' contains a NUL character"``); ``None`` when nothing. Reading ``request.POST``
    here parses the body as the view would (and raises what it would: a body too large or
    malformed is a 400)."""
    problem = text_problem(request.path)
    if problem:
        return f"the address {problem}"
    found = _fields_problem(request.GET, "query parameter")
    if found is None and forms and request.method == "POST":
        found = _form_problem(request)
    return found


def _form_problem(request: HttpRequest) -> str | None:
    found = _fields_problem(request.POST, "form field")
    if found is None:
        for name, upload in request.FILES.items():
            assert isinstance(upload, UploadedFile)  # every name in FILES has a file
            if problem := text_problem(name) or text_problem(upload.name or ""):
                return f"the file of form field {_shown(name)} {problem}"
    return found


def _fields_problem(fields: QueryDict, what: str) -> str | None:
    for name, values in fields.lists():
        if problem := text_problem(name):
            return f"the name of a {what} {problem}"
        for value in values:
            if problem := text_problem(value):
                return f"{what} {_shown(name)} {problem}"
    return None


def _drop_unusable_cookies(request: HttpRequest) -> None:
    cookies = request.COOKIES
    if any(text_problem(name) or text_problem(value) for name, value in cookies.items()):
        request.COOKIES = {
            name: value
            for name, value in cookies.items()
            if not (text_problem(name) or text_problem(value))
        }


def _shown(name: str) -> str:
    name = name if len(name) <= _MAX_NAME_SHOWN else name[: _MAX_NAME_SHOWN - 1] + "…"
    return repr(name)


# ── The database away ───────────────────────────────────────────────────────────────────────
# While the database cannot be reached (a restart, a failover, a full connection table) every
# page fails with OperationalError or InterfaceError. Django turns an exception into a 500
# inside each middleware layer, so it is caught twice: a view's (and its template's) in
# ``process_exception``; one raised by another middleware (the session saved on the way out,
# say) is marked on the request by the ``got_request_exception`` signal Django sends before
# it builds its 500, and the 500 is replaced on the way out. Neither path depends on DEBUG.

RETRY_AFTER_SECONDS = 5
"""What a 503 asks a client to wait before trying again (the ``Retry-After`` header)."""

_MARK = "_agentdash_database_down"


class DatabaseUnavailableMiddleware:
    """Answers **503** with a short page and ``Retry-After`` when a request failed because
    the database could not be reached; every other response passes untouched. First in
    ``MIDDLEWARE``, so that it sees what every other layer made of the failure."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if getattr(request, _MARK, False) and response.status_code >= 500:
            return database_unavailable_response(request, replaces=response)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not _outage(exception):
            return None
        logger.warning("503 for %s %s: database unreachable: %s", request.method, request.path,
                       exception)  # fmt: skip
        return database_unavailable_response(request)


def database_unavailable_response(
    request: HttpRequest, *, replaces: HttpResponse | None = None
) -> HttpResponse:
    """The 503 page (templates/503.html, rendered without the request: its context
    processors would ask the database who is signed in)."""
    body = render_to_string("503.html", {"retry_after": RETRY_AFTER_SECONDS})
    response = HttpResponse(body, status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
    if replaces is not None:  # made outside the inner layers: give it their headers
        response["Content-Security-Policy"] = csp_header(secrets.token_urlsafe(16))
        if "X-Request-ID" in replaces:
            response["X-Request-ID"] = replaces["X-Request-ID"]
    return response


def _outage(error: BaseException | None) -> bool:
    return error is not None and caused_by_outage(error)


def _mark_database_down(sender: Any, request: HttpRequest | None = None, **kwargs: Any) -> None:
    if request is not None and _outage(sys.exc_info()[1]):
        setattr(request, _MARK, True)
        logger.warning("503 for %s %s: database unreachable", request.method, request.path)


got_request_exception.connect(_mark_database_down, dispatch_uid="agentdash.core.database_down")
