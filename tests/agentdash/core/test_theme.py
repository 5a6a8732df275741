"""The colour theme: the server reads the theme cookie and serves every page already in the
chosen theme (``<html data-theme>``, the dark stylesheet's media, ``color-scheme``), so the
first paint is right without a script; the toggle's form stores a choice without a script.
What the toggle and the colours do in a browser: dashboard/browser/test_themes.py."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.template.loader import render_to_string
from django.test import Client

from agentdash.core.theme import THEME_COOKIE, theme_parse

pytestmark = pytest.mark.django_db

DARK_LINK = re.compile(r'<link rel="stylesheet" href="/static/core/css/dark\.css" media="([^"]*)"')


def page(client: Client, path: str = "/login/", cookie: str | None = None) -> str:
    if cookie is not None:
        client.cookies[THEME_COOKIE] = cookie
    response = client.get(path)
    assert response.status_code == 200
    return response.content.decode()


def dark_media(html: str) -> str:
    found = DARK_LINK.search(html)
    assert found, "the dark stylesheet is not linked"
    return found.group(1)


@pytest.mark.parametrize(
    "value, expected",
    [
        ("light", "light"),
        ("dark", "dark"),
        ("system", "system"),
        (None, "system"),
        ("", "system"),
        ("DARK", "system"),
        ("dark\x00", "system"),
        ("dark; Path=/", "system"),
        ("\ud800", "system"),
        ('"><script>alert(1)</script>', "system"),
        ("d" * 100_000, "system"),
    ],
)
def test_a_cookie_names_a_theme_or_the_system_decides(value: str | None, expected: str) -> None:
    assert theme_parse(value) == expected


def test_without_a_choice_the_system_decides(client: Client) -> None:
    html = page(client)
    assert '<html lang="en" data-theme="system">' in html
    assert dark_media(html) == "(prefers-color-scheme: dark)"
    assert '<meta name="color-scheme" content="light dark">' in html


def test_a_dark_choice_is_in_the_page_as_served(client: Client) -> None:
    html = page(client, cookie="dark")
    assert '<html lang="en" data-theme="dark">' in html
    assert dark_media(html) == "all"
    assert '<meta name="color-scheme" content="dark">' in html
    # The toggle offers the next choice.
    assert re.search(r'<button name="theme" value="system" data-choice="dark"', html)


def test_a_light_choice_keeps_the_dark_palette_off(client: Client) -> None:
    html = page(client, cookie="light")
    assert '<html lang="en" data-theme="light">' in html
    assert dark_media(html) == "not all"
    assert '<meta name="color-scheme" content="light">' in html


def test_a_hostile_cookie_is_not_echoed(client: Client) -> None:
    html = page(client, cookie='dark"><script>alert(1)</script>')
    assert '<html lang="en" data-theme="system">' in html
    assert "<script>alert(1)" not in html


def test_every_page_carries_the_theme(client: Client, alice: User) -> None:
    client.force_login(alice)
    html = page(client, "/", cookie="dark")
    assert '<html lang="en" data-theme="dark">' in html
    assert dark_media(html) == "all"
    assert 'class="theme-switch"' in html


def test_the_unavailable_page_follows_the_system() -> None:
    """The 503 page is rendered without the request (no cookie, no context processors): the
    system's preference applies, and there is no toggle or script to run without a nonce."""
    html = render_to_string("503.html", {"retry_after": 5})
    assert "data-theme" not in html
    assert dark_media(html) == "(prefers-color-scheme: dark)"
    assert "theme-switch" not in html
    assert "theme.js" not in html


def test_the_toggle_form_stores_the_choice_and_comes_back(client: Client) -> None:
    response = client.post("/theme/", {"theme": "dark", "next": "/login/?next=/"})
    assert response.status_code == 302
    assert response["Location"] == "/login/?next=/"
    cookie = response.cookies[THEME_COOKIE]
    assert cookie.value == "dark"
    assert int(cookie["max-age"]) >= 30 * 24 * 3600
    assert cookie["samesite"] == "Lax"
    assert dark_media(page(client)) == "all"  # the next page is dark


@pytest.mark.parametrize(
    "target",
    ["https://evil.example/", "//evil.example/", "/\\evil.example", "javascript:alert(1)", ""],
)
def test_the_toggle_form_never_leaves_the_site(client: Client, target: str) -> None:
    response = client.post("/theme/", {"theme": "light", "next": target})
    assert response.status_code == 302
    assert response["Location"] == "/"


def test_an_unknown_choice_is_stored_as_the_system(client: Client) -> None:
    response = client.post("/theme/", {"theme": "<b>neon</b>", "next": "/"})
    assert response.cookies[THEME_COOKIE].value == "system"


def test_the_toggle_form_takes_only_posts_with_a_csrf_token() -> None:
    strict = Client(enforce_csrf_checks=True)
    assert strict.get("/theme/").status_code == 405
    assert strict.post("/theme/", {"theme": "dark"}).status_code == 403
