"""The security invariants are system checks (``agentdash.E00x``): each fires when broken."""

from __future__ import annotations

import pytest
from channels.routing import ProtocolTypeRouter, URLRouter
from channels.security.websocket import AllowedHostsOriginValidator
from django.conf import settings
from django.core import checks
from django.test import override_settings

from agentdash.core import rendering
from agentdash.core.checks import CSP_MIDDLEWARE


def check_ids(*, deploy: bool = False) -> set[str]:
    """Ids of every agentdash check message, as ``manage.py check`` would run them."""
    messages = checks.run_checks(include_deployment_checks=deploy)
    return {m.id for m in messages if m.id and m.id.startswith("agentdash.")}


def test_the_project_as_configured_passes_every_check() -> None:
    assert not {i for i in check_ids() if i.startswith("agentdash.E00")}


def test_e001_csp_middleware_removed() -> None:
    without_csp = [m for m in settings.MIDDLEWARE if m != CSP_MIDDLEWARE]
    with override_settings(MIDDLEWARE=without_csp):
        assert "agentdash.E001" in check_ids()


@pytest.mark.parametrize("tag", ["img", "script", "style", "iframe", "svg", "form"])
def test_e002_sanitizer_allows_a_dangerous_tag(monkeypatch: pytest.MonkeyPatch, tag: str) -> None:
    monkeypatch.setattr(rendering, "ALLOWED_TAGS", rendering.ALLOWED_TAGS | {tag})
    assert "agentdash.E002" in check_ids()


@pytest.mark.parametrize("attribute", ["onclick", "onerror", "style", "src", "srcdoc"])
def test_e003_sanitizer_allows_a_dangerous_attribute(
    monkeypatch: pytest.MonkeyPatch, attribute: str
) -> None:
    attributes = {tag: set(names) for tag, names in rendering.ALLOWED_ATTRIBUTES.items()}
    attributes.setdefault("span", set()).add(attribute)
    monkeypatch.setattr(rendering, "ALLOWED_ATTRIBUTES", attributes)
    assert "agentdash.E003" in check_ids()


@pytest.mark.parametrize("scheme", ["javascript", "data", "vbscript"])
def test_e004_sanitizer_allows_a_dangerous_url_scheme(
    monkeypatch: pytest.MonkeyPatch, scheme: str
) -> None:
    monkeypatch.setattr(rendering, "ALLOWED_URL_SCHEMES", rendering.ALLOWED_URL_SCHEMES | {scheme})
    assert "agentdash.E004" in check_ids()


async def _websocket_app(scope: dict, receive: object, send: object) -> None:  # pragma: no cover
    pass


def test_e005_websocket_not_behind_the_origin_validator(monkeypatch: pytest.MonkeyPatch) -> None:
    import agentdash.asgi

    bare = ProtocolTypeRouter({"websocket": URLRouter([])})
    monkeypatch.setattr(agentdash.asgi, "application", bare)
    assert "agentdash.E005" in check_ids()


def test_e005_websocket_behind_the_origin_validator_is_clean(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import agentdash.asgi

    wrapped = ProtocolTypeRouter({"websocket": AllowedHostsOriginValidator(URLRouter([]))})
    monkeypatch.setattr(agentdash.asgi, "application", wrapped)
    assert "agentdash.E005" not in check_ids()


def test_e006_demo_password_with_debug_off() -> None:
    demo = {**settings.AGENTDASH, "DEMO_PASSWORD": "demo-pass-123"}
    with override_settings(DEBUG=False, AGENTDASH=demo):
        assert "agentdash.E006" in check_ids(deploy=True)
    with override_settings(DEBUG=True, AGENTDASH=demo):
        assert "agentdash.E006" not in check_ids(deploy=True)
    no_demo = {**settings.AGENTDASH, "DEMO_PASSWORD": ""}
    with override_settings(DEBUG=False, AGENTDASH=no_demo):
        assert "agentdash.E006" not in check_ids(deploy=True)
