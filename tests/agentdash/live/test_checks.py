"""The websocket stack sits behind the origin validator (``agentdash.E005``), checked on the
application ``settings.ASGI_APPLICATION`` names."""

from __future__ import annotations

import pytest
from channels.routing import ProtocolTypeRouter, URLRouter
from channels.security.websocket import AllowedHostsOriginValidator
from django.test import override_settings

from tests.agentdash.system_checks import check_ids


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


def test_e005_looks_through_middleware_around_the_router(monkeypatch: pytest.MonkeyPatch) -> None:
    import agentdash.asgi
    from agentdash.runs.asgi_start import RunHostStarter

    project = agentdash.asgi.application
    bare = RunHostStarter(ProtocolTypeRouter({"websocket": URLRouter([])}))
    monkeypatch.setattr(agentdash.asgi, "application", bare)
    assert "agentdash.E005" in check_ids()
    monkeypatch.setattr(agentdash.asgi, "application", project)  # the router behind it is fine
    assert "agentdash.E005" not in check_ids()


def test_e005_an_asgi_application_that_does_not_import() -> None:
    with override_settings(ASGI_APPLICATION="agentdash.nowhere.application"):
        assert "agentdash.E005" in check_ids()
