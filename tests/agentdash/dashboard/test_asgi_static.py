"""In development daphne serves /static/ itself (as runserver does)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from types import ModuleType

import pytest
from asgiref.testing import ApplicationCommunicator
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.test import override_settings


@pytest.fixture
def asgi_module() -> Iterator[ModuleType]:
    import agentdash.asgi

    yield agentdash.asgi
    importlib.reload(agentdash.asgi)  # back to the application built with test settings


def http_app(module: ModuleType, *, debug: bool) -> object:
    with override_settings(DEBUG=debug):
        importlib.reload(module)
    return module.router.application_mapping["http"]


def test_static_files_are_served_with_debug_on(asgi_module: ModuleType) -> None:
    app = http_app(asgi_module, debug=True)
    assert isinstance(app, ASGIStaticFilesHandler)


async def get(app: object, path: str) -> tuple[int, bytes]:
    scope = {"type": "http", "method": "GET", "path": path, "query_string": b"", "headers": []}
    communicator = ApplicationCommunicator(app, scope)
    await communicator.send_input({"type": "http.request", "body": b""})
    start = await communicator.receive_output(5)
    body = b""
    while True:  # a file response may end with a message without "body"
        message = await communicator.receive_output(5)
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    await communicator.wait()
    return start["status"], body


async def test_the_base_stylesheet_is_served(asgi_module: ModuleType) -> None:
    status, body = await get(http_app(asgi_module, debug=True), "/static/core/css/base.css")
    assert status == 200
    assert b"--accent" in body


def test_no_static_handler_with_debug_off(asgi_module: ModuleType) -> None:
    assert not isinstance(http_app(asgi_module, debug=False), ASGIStaticFilesHandler)
