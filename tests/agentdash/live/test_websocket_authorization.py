"""Who may open which websocket: every websocket route × every role, against a declared table
(the websocket twin of tests/agentdash/test_authorization.py).

Routes are read from ``agentdash.routing``, so a new one FAILS
``test_every_websocket_route_declares_its_access`` until its access is declared in ``ACCESS``.
A refused socket is accepted and then closed with 4403, so a browser sees why.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User

from agentdash.routing import websocket_urlpatterns
from tests.agentdash.conftest import PASSWORD, ROLES
from tests.agentdash.live.conftest import (
    Connect,
    closed_with,
    hello,
    receive,
)
from tests.agentdash.stored import session_of

Users = Mapping[str, User | None]
OPEN = "open"
CLOSED = 4403
NOT_FOUND = 4404


@dataclass(frozen=True)
class Case:
    expect: Mapping[str, str | int]
    kwargs: Callable[[Users], dict[str, Any]]


def roles(*, anonymous: str | int, alice: str | int, operator: str | int) -> dict[str, Any]:
    return {
        "anonymous": anonymous,
        "alice": alice,
        "operator": operator,
        "staff_operator": operator,
        "superuser": operator,
    }


def _carol_session(users: Users) -> dict[str, Any]:
    carol = User.objects.create_user("carol", "carol@example.com", PASSWORD)
    return {"session_id": session_of(carol, "s-carol").id}


def _alice_session(users: Users) -> dict[str, Any]:
    return {"session_id": session_of(users["alice"], "s-alice").id}


ACCESS: dict[str, list[Case]] = {
    "ws/sessions/<session_id:session_id>/": [
        Case(roles(anonymous=CLOSED, alice=CLOSED, operator=OPEN), _carol_session),
        Case(roles(anonymous=CLOSED, alice=OPEN, operator=OPEN), _alice_session),
        Case(
            roles(anonymous=CLOSED, alice=CLOSED, operator=CLOSED),
            lambda users: {"session_id": "no-such-session"},
        ),
    ],
    # The sessions list's: anyone signed in (each hears of the sessions they may see).
    "ws/sessions/": [
        Case(
            roles(anonymous=CLOSED, alice=OPEN, operator=OPEN),
            lambda users: {"session_id": "", "path": "/ws/sessions/"},
        ),
    ],
    # What matches no socket — here an id that cannot be one — is closed as not found.
    "": [
        Case(
            roles(anonymous=NOT_FOUND, alice=NOT_FOUND, operator=NOT_FOUND),
            lambda users: {"session_id": "not\x00an-id"},
        ),
    ],
}


def _params() -> list[Any]:
    return [
        pytest.param(route, n, role, id=f"{route} case {n} as {role}")
        for route, cases in ACCESS.items()
        for n in range(len(cases))
        for role in ROLES
    ]


def test_every_websocket_route_declares_its_access() -> None:
    routes = {str(pattern.pattern) for pattern in websocket_urlpatterns}
    assert routes == set(ACCESS), (
        "Declare every websocket route's access, role by role, in ACCESS in "
        "tests/agentdash/live/test_websocket_authorization.py"
    )
    for cases in ACCESS.values():
        for case in cases:
            assert set(case.expect) == set(ROLES)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("route", "n", "role"), _params())
async def test_websocket_access(
    connect: Connect, role_users: Users, route: str, n: int, role: str
) -> None:
    case = ACCESS[route][n]
    kwargs = await sync_to_async(case.kwargs)(role_users)
    socket = await connect(role_users[role], kwargs["session_id"], path=kwargs.get("path"))
    assert socket.accepted  # accepted first, so that a refusal can carry its code
    if case.expect[role] == OPEN and "path" in kwargs:  # a socket that only listens
        assert await receive(socket) == {"type": "listening"}
    elif case.expect[role] == OPEN:
        assert await hello(socket) == ([], 0)
    else:
        assert await closed_with(socket) == case.expect[role]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("origin", ["https://evil.example.com", "null", "http://localhost.evil"])
async def test_foreign_origins_are_refused_whoever_asks(
    connect: Connect, role_users: Users, origin: str
) -> None:
    kwargs = await sync_to_async(_alice_session)(role_users)
    for role in ROLES:
        socket = await connect(role_users[role], kwargs["session_id"], origin=origin)
        assert not socket.accepted, role
