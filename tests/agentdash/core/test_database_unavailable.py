"""While the database cannot be reached, pages answer 503 with ``Retry-After`` and a short
page — with DEBUG on or off, whether a view or another middleware met the failure — and work
again once it is back.

Here the connection's settings point at nothing (a closed port on PostgreSQL, a file in a
directory that does not exist on SQLite): the connection attempt fails for real, as it does
while a server is down. tests/agentdash/test_postgres_outage.py stops a real server.
"""

from __future__ import annotations

import contextlib
import copy
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connections
from django.test import Client

from agentdash.core.middleware import RETRY_AFTER_SECONDS

pytestmark = pytest.mark.django_db(transaction=True)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # free, and nobody listens once it is closed


@contextlib.contextmanager
def database_away() -> Iterator[None]:
    connection = connections["default"]
    saved = copy.deepcopy(connection.settings_dict)
    connection.close()
    _pool_close(connection)  # a pool keeps the settings it was made with: a new one, then
    if connection.vendor == "postgresql":
        connection.settings_dict.update(HOST="127.0.0.1", PORT=str(_closed_port()))
    else:
        connection.settings_dict["NAME"] = "/nonexistent-agentdash-dir/db.sqlite3"
    try:
        yield
    finally:
        connection.close()
        _pool_close(connection)
        connection.settings_dict.clear()
        connection.settings_dict.update(saved)


def _pool_close(connection: Any) -> None:
    if getattr(connection, "pool", None) is not None:
        connection.close_pool()


def assert_unavailable(response: Any) -> None:
    assert response.status_code == 503, response.status_code
    assert response["Retry-After"] == str(RETRY_AFTER_SECONDS)
    assert response["Cache-Control"] == "no-store"
    assert "Content-Security-Policy" in response
    page = response.content.decode()
    assert "Briefly unavailable" in page and "cannot reach its database" in page
    assert "<script" not in page and "Traceback" not in page


@pytest.fixture
def signed_in(alice: User) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(alice)
    return client


@pytest.mark.parametrize("debug", [False, True], ids=["DEBUG off", "DEBUG on"])
def test_pages_answer_503_while_the_database_is_away(
    signed_in: Client, superuser: User, settings: Any, debug: bool
) -> None:
    settings.DEBUG = debug
    admin = Client(raise_request_exception=False)
    admin.force_login(superuser)
    with database_away():
        assert_unavailable(signed_in.get("/"))
        assert_unavailable(signed_in.get("/sessions/s1/"))
        assert_unavailable(signed_in.post("/sessions/", {"agent": "capital_agent"}))
        assert_unavailable(admin.get("/admin/"))
        assert_unavailable(admin.get("/admin/controls/policy/"))
        assert_unavailable(Client().post("/login/", {"username": "alice", "password": "x"}))
        # The login form itself needs no database: it still shows.
        assert Client().get("/login/").status_code == 200
    assert signed_in.get("/").status_code == 200
    assert admin.get("/admin/controls/policy/").status_code == 200


@pytest.mark.parametrize("debug", [False, True], ids=["DEBUG off", "DEBUG on"])
def test_a_failure_outside_the_view_is_a_503_too(
    signed_in: Client, settings: Any, debug: bool
) -> None:
    # The view (a 404 for an unknown page) never reads the session; saving it on the way out
    # (SessionMiddleware, after the view) is what meets the unreachable database.
    settings.DEBUG = debug
    settings.SESSION_SAVE_EVERY_REQUEST = True
    with database_away():
        assert_unavailable(signed_in.get("/no-such-page/"))
    assert signed_in.get("/no-such-page/").status_code == 404
