"""Security headers: a strict Content-Security-Policy with a fresh nonce on every HTML
response, and a request id echoed when it is sane and replaced when it is not."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agentdash.core.middleware import csp_header

NONCE = re.compile(r"'nonce-([A-Za-z0-9_\-+/=]+)'")


def directives(header: str) -> dict[str, list[str]]:
    parsed: dict[str, list[str]] = {}
    for part in header.split(";"):
        name, *values = part.split()
        parsed[name] = values
    return parsed


def assert_strict_csp(response) -> str:  # type: ignore[no-untyped-def]
    """The response's CSP is ours and strict; returns its nonce."""
    header = response.headers.get("Content-Security-Policy")
    assert header, f"{response.request['PATH_INFO']}: no Content-Security-Policy"
    assert "unsafe-inline" not in header
    assert "unsafe-eval" not in header
    policy = directives(header)
    assert policy["object-src"] == ["'none'"]
    assert policy["frame-ancestors"] == ["'none'"]
    assert policy["base-uri"] == ["'none'"]
    assert policy["style-src"] == ["'self'"]
    assert policy["img-src"] == ["'self'"]
    match = NONCE.search(" ".join(policy["script-src"]))
    assert match, header
    assert len(match.group(1)) >= 16
    return match.group(1)


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/login/", "/admin/login/", "/no-such-page/", "/"])
@pytest.mark.parametrize("signed_in", [False, True])
def test_every_html_response_has_a_strict_csp_with_a_fresh_nonce(
    client: Client, path: str, signed_in: bool
) -> None:
    if signed_in:
        client.force_login(User.objects.create_user("csp-user", password="x-Very-long-123"))
    nonces = []
    for _ in range(2):
        response = client.get(path)
        assert response["Content-Type"].startswith("text/html")
        nonces.append(assert_strict_csp(response))
    assert nonces[0] != nonces[1], "the nonce must be new for every response"


@pytest.mark.django_db
def test_the_page_nonce_is_the_header_nonce(client: Client, rf) -> None:  # type: ignore[no-untyped-def]
    from django.template import engines

    from agentdash.core.middleware import ContentSecurityPolicyMiddleware

    template = engines["django"].from_string('<script nonce="{{ csp_nonce }}"></script>')

    def view(request):  # type: ignore[no-untyped-def]
        from django.http import HttpResponse

        return HttpResponse(template.render({}, request))

    response = ContentSecurityPolicyMiddleware(view)(rf.get("/"))
    nonce = assert_strict_csp(response)
    assert f'nonce="{nonce}"' in response.content.decode()


def test_a_policy_set_by_the_view_is_kept(rf) -> None:  # type: ignore[no-untyped-def]
    from django.http import HttpResponse

    from agentdash.core.middleware import ContentSecurityPolicyMiddleware

    def view(request):  # type: ignore[no-untyped-def]
        response = HttpResponse("x")
        response["Content-Security-Policy"] = "default-src 'none'"
        return response

    response = ContentSecurityPolicyMiddleware(view)(rf.get("/"))
    assert response["Content-Security-Policy"] == "default-src 'none'"


def test_the_policy_has_no_unsafe_sources() -> None:
    header = csp_header("abc123abc123abc123")
    assert "unsafe" not in header
    assert "*" not in header
    assert "data:" not in header


@pytest.mark.django_db
@pytest.mark.parametrize(
    "incoming", ["req-12345678", "a1b2c3d4e5f6a7b8c9d0", "trace.id_42-x", "A" * 64]
)
def test_a_sane_request_id_is_echoed(client: Client, incoming: str) -> None:
    response = client.get("/login/", headers={"X-Request-ID": incoming})
    assert response["X-Request-ID"] == incoming


@pytest.mark.django_db
@pytest.mark.parametrize(
    "incoming",
    [
        "x" * 500,
        "A" * 65,
        "has spaces in it",
        "short",
        "",
        "<script>alert(1)</script>",
        "id\r\nSet-Cookie: a=b",
        "ünïcödé-12345678",
    ],
)
def test_an_insane_request_id_is_replaced(client: Client, incoming: str) -> None:
    response = client.get("/login/", headers={"X-Request-ID": incoming})
    replaced = response["X-Request-ID"]
    assert replaced != incoming
    assert re.fullmatch(r"[0-9a-f]{24}", replaced)


@pytest.mark.django_db
def test_a_missing_request_id_is_made_up_fresh_each_time(client: Client) -> None:
    first = client.get("/login/")["X-Request-ID"]
    second = client.get("/login/")["X-Request-ID"]
    assert re.fullmatch(r"[0-9a-f]{24}", first)
    assert first != second
