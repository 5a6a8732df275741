"""The site's own pages under hostile input (the admin's: test_hostile_admin.py): never a 500.

Every route of the URLconf (found as the authorization matrix finds them, so a new page is
covered when it is added) gets, signed in and not: junk in each URL parameter, junk in the
query parameters pages read (``next``) and any other, and a NUL, a lone surrogate, max
length + 1 or 100,000 characters in each field of the form it shows or takes. NUL and
unpaired surrogates are refused by one middleware (agentdash.core.middleware) with a 400
that names the part; the rest ends in a form error, a 404 or a page.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django import forms
from django.contrib.auth.models import User
from django.test import Client

from agentdash.core.middleware import request_input_problem
from tests.agentdash.hostile import (
    JUNK_VALUES,
    NUL,
    SURROGATE,
    Prober,
    assert_refused_naming,
    form_fields_of,
    replaced,
)
from tests.agentdash.test_authorization import project_routes

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow,
]  # every route, signed in and not, each with junk: ~20 s a run, seconds a route

ROUTES = sorted(project_routes())
# Fields of forms that a route takes but no page of it shows (a POST-only view).
POSTED_FIELDS = {
    "sessions/": ("agent", "text", "start"),
    "sessions/<session_id:session_id>/rename/": ("title", "next"),
    "sessions/<session_id:session_id>/delete/": ("next",),
}
# A URL parameter as a client may write it: NUL, double-encoded NUL, a lone surrogate's
# bytes, too long, dot segments, an encoded slash.
JUNK_IN_PATH = ("%00", "%2500", "%ED%A0%80", "%25ED%25A0%2580", "x" * 300, "..", "%252E%252E",
                "a%2Fb", "a%252Fb", "%25")  # fmt: skip
_PARAM = re.compile(r"<[^>]+>")


@pytest.fixture(params=["anonymous", "alice"])
def prober(request: pytest.FixtureRequest, alice: User) -> Prober:
    client = Client()
    if request.param == "alice":
        client.force_login(alice)
    return Prober(client)


def test_the_routes_are_found() -> None:
    assert "sessions/<session_id:session_id>/" in ROUTES and "login/" in ROUTES


@pytest.mark.parametrize("route", [route for route in ROUTES if "<" in route])
def test_junk_in_every_url_parameter(prober: Prober, route: str) -> None:
    # The APIs of agents elsewhere ask for their key before they read the path: 401.
    allowed = (302, 404, 405, 401) if route.startswith("v1/") else (302, 404, 405)
    for junk in JUNK_IN_PATH:
        path = "/" + _PARAM.sub(junk, route)
        for response in (prober.get(path), prober.post(path)):
            if junk == "%00":
                assert response.status_code == 404, path  # the middleware: names nothing
            else:
                assert response.status_code in allowed, (path, response.status_code)


@pytest.mark.parametrize("route", ROUTES)
def test_junk_in_query_parameters(prober: Prober, route: str) -> None:
    path = "/" + _PARAM.sub("s1", route)
    for junk in JUNK_VALUES:
        for name in ("next", "q", "e"):
            response = prober.get(path, [(name, junk)])
            if junk == NUL:
                assert_refused_naming(response, name)


@pytest.mark.parametrize("route", ROUTES)
def test_every_form_field_with_hostile_values(prober: Prober, route: str) -> None:
    path = "/" + _PARAM.sub("s1", route)
    page = prober.get(path)
    form = page.context.get("form") if page.context else None
    if isinstance(form, forms.BaseForm):
        shown = list(form_fields_of(form))
        fields = {bound.html_name: bound.field for bound in form}
    else:
        shown, fields = [], {name: None for name in POSTED_FIELDS.get(route, ())}
    for name, field in fields.items():
        assert_refused_naming(prober.post(path, replaced(shown, name, NUL)), name)
        prober.post(path, replaced(shown, name, SURROGATE))
        max_length = getattr(field, "max_length", None)
        if max_length:
            response = prober.post(path, replaced(shown, name, "x" * (max_length + 1)))
            assert response.status_code in (200, 400), response.status_code
            if response.status_code == 200:  # refused: the field's error, or the form's
                assert response.context["form"].errors, f"{path} {name}: max length + 1 taken"
        prober.post(path, replaced(shown, name, "x" * 100_000))


def test_the_forms_walked_include_login_and_new_chat(alice: User) -> None:
    client = Client()
    assert isinstance(client.get("/login/").context["form"], forms.BaseForm)
    assert "sessions/" in POSTED_FIELDS and "sessions/" in ROUTES


# ── What the middleware says, and where ────────────────────────────────────────────────────
def test_nul_in_the_path_is_a_404_that_says_so(client: Client, alice: User) -> None:
    client.force_login(alice)
    response = client.get("/sessions/%00/")
    assert response.status_code == 404  # no id can hold it: the address names nothing
    assert response["Content-Type"].startswith("text/plain")
    assert response.content.decode() == "Not found: the address contains a NUL character.\n"
    assert "Content-Security-Policy" in response and "X-Request-ID" in response


def test_a_query_parameter_or_form_field_is_named(client: Client) -> None:
    said = client.get("/login/", {"next": NUL}).content.decode()
    assert said == "Bad request: query parameter 'next' contains a NUL character.\n"
    said = client.post("/login/", {"username": NUL, "password": "x"}).content.decode()
    assert said == "Bad request: form field 'username' contains a NUL character.\n"
    said = client.post("/login/", {"user\x00name": "x"}).content.decode()
    assert said == "Bad request: the name of a form field contains a NUL character.\n"


def test_multipart_fields_are_checked_too(client: Client) -> None:
    response = client.post("/login/", {"username": "alice", "password": NUL})  # multipart
    assert_refused_naming(response, "password")


def test_unpaired_surrogates_are_named_where_django_lets_them_through(rf: Any) -> None:
    # Django decodes query strings and bodies with errors="replace" (a surrogate's bytes
    # arrive as U+FFFD), but a request built in code or by another handler may carry one.
    request = rf.get("/", {"q": "ok"})
    request.GET = request.GET.copy()
    request.GET["q"] = SURROGATE
    assert request_input_problem(request) == ("query parameter 'q' contains an unpaired surrogate")
    assert request_input_problem(rf.get("/ok/")) is None


def test_a_cookie_with_a_nul_is_dropped_not_fatal(client: Client, alice: User) -> None:
    client.force_login(alice)
    client.cookies["sessionid"] = "abcdefgh\x00ijkl"  # sent as "abcdefgh\000ijkl"
    response = client.get("/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")
    client.cookies["other"] = "\x00"
    assert client.get("/login/").status_code == 200


def test_a_surrogate_in_a_query_reaches_views_as_a_replacement_character(
    client: Client, alice: User
) -> None:
    client.force_login(alice)
    response = client.get("/sessions/s1/?q=%ED%A0%80")
    assert response.status_code == 404  # no such session; the query was harmless
