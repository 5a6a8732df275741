"""Who may reach what: every URL of the project × every role, against a declared table.

The routes are found by walking the URL resolver, so a new endpoint is covered the moment it
is added — and ``test_every_route_declares_its_access`` FAILS until its access is declared
in ``ACCESS`` below. Declaring it is the point: whoever adds a URL states, role by role, what
should happen.

Django admin's own URLs are not walked (there are hundreds, all behind ``admin_view``); its
index, login and logout are declared in ``ADMIN``, what operators may and may not do there
(pages of objects made per test through ``kwargs``) in ``ADMIN_OPERATORS``, and one model
changelist per app is checked against the model admin's permissions.

A route with parameters makes them in ``kwargs``, from the role users; for example a page of
one session, which its owner and operators see and other users get 404 for::

    "sessions/<session_id:session_id>/": [
        Case(
            roles(anonymous=LOGIN, alice=NOT_FOUND, operator=OK),
            kwargs=lambda users: {"session_id": session_factory(owner=make_user("carol")).id},
        ),
    ],
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth.models import User
from django.http import HttpResponse
from django.test import Client, RequestFactory
from django.urls import URLPattern, URLResolver, get_resolver, resolve, reverse

from tests.agentdash.conftest import PASSWORD, ROLES, made_once, role_users_make

Users = Mapping[str, User | None]


# The role users, made once for the module's ~800 tests (each test's rows are undone after it).
@pytest.fixture(scope="module")
def _users(django_db_setup: None, django_db_blocker: Any) -> Iterator[Users]:
    yield from made_once(django_db_blocker, role_users_make)


@pytest.fixture
def role_users(db: None, _users: Users) -> Users:
    return _users


@pytest.fixture
def alice(db: None, _users: Users) -> User | None:
    return _users["alice"]


@dataclass(frozen=True)
class Outcome:
    status: int
    location: str | None = None  # for redirects: where to (a prefix)

    def __str__(self) -> str:
        return f"{self.status} → {self.location}" if self.location else str(self.status)


OK = Outcome(200)
FORBIDDEN = Outcome(403)
NOT_FOUND = Outcome(404)
NOT_ALLOWED = Outcome(405)
BAD_REQUEST = Outcome(400)
UNAUTHENTICATED = Outcome(401)


def redirect(to: str) -> Outcome:
    return Outcome(302, to)


LOGIN = redirect("/login/?next=")  # login_required
ADMIN_LOGIN = redirect("/admin/login/?next=")  # admin_view for anyone but active staff


@dataclass(frozen=True)
class Case:
    """One request (``method`` on the route, URL parameters from ``kwargs``) and what each
    role gets back."""

    expect: Mapping[str, Outcome]
    method: str = "get"
    # URL parameters, made per test from the role users (it may create rows, e.g. a session
    # owned by alice, to check that bob gets 404 on it).
    kwargs: Callable[[Users], dict[str, Any]] | None = None
    data: Mapping[str, Any] = field(default_factory=dict)


def roles(
    *,
    anonymous: Outcome,
    alice: Outcome,
    operator: Outcome,
    staff_operator: Outcome | None = None,
    superuser: Outcome | None = None,
) -> dict[str, Outcome]:
    """Outcomes per role; staff operators default to operators, superusers to staff ones."""
    staff_operator = staff_operator or operator
    return {
        "anonymous": anonymous,
        "alice": alice,
        "operator": operator,
        "staff_operator": staff_operator,
        "superuser": superuser or staff_operator,
    }


def everyone(outcome: Outcome) -> dict[str, Outcome]:
    return roles(anonymous=outcome, alice=outcome, operator=outcome)


def signed_in(outcome: Outcome, *, anonymous: Outcome = LOGIN) -> dict[str, Outcome]:
    """Any signed-in user gets ``outcome``; anonymous visitors are sent to log in."""
    return roles(anonymous=anonymous, alice=outcome, operator=outcome)


def operators_only(*, alice: Outcome = FORBIDDEN) -> dict[str, Outcome]:
    return roles(anonymous=LOGIN, alice=alice, operator=OK)


def _user(username: str) -> User:
    return User.objects.create_user(username, f"{username}@example.com", PASSWORD)


def _operators_redirected(to: str) -> dict[str, Outcome]:
    return roles(anonymous=LOGIN, alice=FORBIDDEN, operator=redirect(to))


def _alert_rule() -> int:
    from agentdash.monitor.models import AlertRule

    return AlertRule.objects.create(name="errors", metric="error_rate", threshold=10).pk


def _failed_alert_event() -> int:
    from django.utils import timezone

    from agentdash.monitor.models import AlertEvent, AlertRule

    rule = AlertRule.objects.create(name="errors", metric="error_rate", threshold=10)
    event = AlertEvent.objects.create(
        rule=rule, rule_name=rule.name, kind="firing", at=timezone.now(), body={},
        webhook_url="http://127.0.0.1:9/", delivery="failed", attempts=8,
    )  # fmt: skip
    return event.pk


def _session_of(owner: User | None) -> str:
    """A new session of the capital agent owned by ``owner``; its id."""
    from agentdash.agent_sessions.services import session_create

    assert owner is not None
    return session_create(app_name="capital_agent", user_id=str(owner.pk), owner=owner).id


TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
FORK_EVENT = "evt-fork-here"


def _session_with_event(owner: User | None) -> str:
    """:func:`_session_of`, with one user message, event :data:`FORK_EVENT`."""
    from tests.agentdash.stored import store_event

    session_id = _session_of(owner)
    store_event(session_id, "hello", id=FORK_EVENT)
    return session_id


def _session_with_trace(owner: User | None) -> str:
    """:func:`_session_of`, with one span of trace :data:`TRACE`."""
    from agentdash.spans.services import span_upsert

    session_id = _session_of(owner)
    span_upsert(trace_id=TRACE, span_id="00f067aa0ba902b7", name="s", start_time=1,
                session_id=session_id)  # fmt: skip
    return session_id


def _session_with_model_call(owner: User | None) -> dict[str, Any]:
    """:func:`_session_of`, with one model call of trace :data:`TRACE`; the playground's URL
    parameters for it."""
    from agentdash.spans.services import span_upsert

    session_id = _session_of(owner)
    span_upsert(trace_id=TRACE, span_id="00f067aa0ba902b8", name="call_llm", start_time=1,
                end_time=2, session_id=session_id,
                attributes={"agentdash.span.kind": "model",
                            "gen_ai.request.model": "offline"})  # fmt: skip
    return {"session_id": session_id, "trace_id": TRACE, "span_id": "00f067aa0ba902b8"}


def _queue() -> str:
    """An empty annotation queue asking for one score; its name."""
    from agentdash.scores.models import AnnotationQueue, ScoreDefinition

    queue = AnnotationQueue.objects.create(name="review-me")
    queue.definitions.add(ScoreDefinition.objects.create(name="q-helpful", kind="boolean"))
    return queue.name


def _compare_sessions(users: Users) -> dict[str, Any]:
    """Sessions ``cmp-a`` and ``cmp-b`` of alice's and ``cmp-carol`` of carol's, for the
    Compare page (whose ids travel in the query string); no URL parameters."""
    from agentdash.agent_sessions.services import session_create

    for session_id, owner in (("cmp-a", users["alice"]), ("cmp-b", users["alice"]),
                              ("cmp-carol", _user("carol"))):  # fmt: skip
        assert owner is not None
        session_create(
            app_name="capital_agent", user_id=str(owner.pk), owner=owner, session_id=session_id
        )
    return {}


# ── The table. Keys are full routes as Django spells them (``str(pattern)`` joined). ──────────
ACCESS: dict[str, list[Case]] = {
    "login/": [
        Case(roles(anonymous=OK, alice=redirect("/"), operator=redirect("/"))),
    ],
    "logout/": [
        Case(everyone(NOT_ALLOWED)),  # logging out takes a POST (with the CSRF token)
        Case(everyone(redirect("/login/")), method="post"),
    ],
    # The theme toggle without a script: a cookie anyone may set (the login page has the
    # toggle too); it only ever goes back to a path on this site.
    "theme/": [
        Case(everyone(NOT_ALLOWED)),
        Case(everyone(redirect("/")), method="post", data={"theme": "dark"}),
        Case(
            everyone(redirect("/sessions/")),
            method="post",
            data={"theme": "dark", "next": "/sessions/"},
        ),
        Case(
            everyone(redirect("/")),
            method="post",
            data={"theme": "dark", "next": "https://evil.example/"},
        ),
    ],
    "": [Case(signed_in(OK))],  # dashboard:home
    # Load balancers have no login: everyone gets the status; only staff and operators get
    # the processes' details (tests/agentdash/runs/test_supervisor.py).
    "health/": [
        Case(everyone(OK)),
        Case(everyone(OK), method="head"),
        Case(everyone(NOT_ALLOWED), method="post"),
    ],
    # OTLP ingest: an ingest key, not a login, lets a sender in (a browser's session cookie
    # counts for nothing); keys themselves: tests/agentdash/ingest/test_otlp_ingest.py.
    "v1/traces": [
        Case(everyone(UNAUTHENTICATED), method="post"),
        Case(everyone(NOT_ALLOWED)),
    ],
    "api/public/otel/v1/traces": [
        Case(everyone(UNAUTHENTICATED), method="post"),
        Case(everyone(NOT_ALLOWED)),
    ],
    # Prometheus: no login; loopback (the test client's address) or the metrics token
    # (tests/agentdash/monitor/test_metrics.py: other addresses, the token).
    # The Monitor's numbers: anyone signed in (each their own sessions'; tests in
    # tests/agentdash/monitor/test_stats.py).
    "monitor/": [
        Case(signed_in(OK)),
        Case(signed_in(NOT_ALLOWED), method="post"),
    ],
    "monitor/stats.json": [
        Case(signed_in(OK)),
        Case(signed_in(NOT_ALLOWED), method="post"),
    ],
    # Alert rules: operators see them and, with the change permission they hold, change
    # them (tests/agentdash/monitor/test_alerts.py).
    "monitor/alerts/": [
        Case(operators_only()),
        Case(
            operators_only()
            | {"operator": BAD_REQUEST, "staff_operator": BAD_REQUEST, "superuser": BAD_REQUEST},
            method="post",
        ),
    ],
    "monitor/alerts.json": [
        Case(operators_only()),
        Case(signed_in(NOT_ALLOWED), method="post"),
    ],
    "monitor/alerts/<str:rule_id>/": [
        Case(
            operators_only()
            | {"operator": BAD_REQUEST, "staff_operator": BAD_REQUEST, "superuser": BAD_REQUEST},
            method="post",
            kwargs=lambda users: {"rule_id": _alert_rule()},
        ),
        Case(signed_in(NOT_ALLOWED), kwargs=lambda users: {"rule_id": _alert_rule()}),
    ],
    "monitor/alerts/<str:rule_id>/delete": [
        Case(
            _operators_redirected("/monitor/alerts/"),
            method="post",
            kwargs=lambda users: {"rule_id": _alert_rule()},
        ),
        Case(signed_in(NOT_ALLOWED), kwargs=lambda users: {"rule_id": _alert_rule()}),
    ],
    "monitor/alerts/<str:rule_id>/check": [
        Case(
            _operators_redirected("/monitor/alerts/"),
            method="post",
            kwargs=lambda users: {"rule_id": _alert_rule()},
        ),
        Case(signed_in(NOT_ALLOWED), kwargs=lambda users: {"rule_id": _alert_rule()}),
    ],
    "monitor/alert-events/<str:event_id>/retry": [
        Case(
            _operators_redirected("/monitor/alerts/"),
            method="post",
            kwargs=lambda users: {"event_id": _failed_alert_event()},
        ),
        Case(signed_in(NOT_ALLOWED), kwargs=lambda users: {"event_id": _failed_alert_event()}),
    ],
    "metrics": [
        Case(everyone(OK)),
        Case(everyone(NOT_ALLOWED), method="post"),
    ],
    "v1/logs": [  # log records of ingested spans (tests/agentdash/ingest/test_logs_ingest.py)
        Case(everyone(UNAUTHENTICATED), method="post"),
        Case(everyone(NOT_ALLOWED)),
    ],
    # Remote processes' controls: the app's ingest key, not a login (the rest:
    # tests/agentdash/remote/test_remote_api.py).
    "v1/agentdash/processes": [
        Case(everyone(UNAUTHENTICATED), method="post"),
        Case(everyone(NOT_ALLOWED)),
    ],
    "v1/agentdash/processes/<str:token>/controls": [
        Case(everyone(UNAUTHENTICATED), method="post", kwargs=lambda users: {"token": "0" * 32}),
        Case(everyone(NOT_ALLOWED), kwargs=lambda users: {"token": "0" * 32}),
    ],
    "session-rows/": [  # dashboard:session_rows (the list kept live: each reader's own rows)
        Case(signed_in(OK)),
        Case(signed_in(OK), data={"id": "s-alice"}),
        Case(signed_in(NOT_ALLOWED), method="post"),
    ],
    "chat/": [  # dashboard:chat_new ("New chat": stores nothing until the first message)
        Case(signed_in(OK), data={"agent": "capital_agent"}),
        Case(signed_in(NOT_FOUND), data={"agent": "no_such_agent"}),
        Case(signed_in(NOT_ALLOWED), method="post", data={"agent": "capital_agent"}),
    ],
    "sessions/": [  # dashboard:session_new (a chat's first message starts its session)
        Case(roles(anonymous=LOGIN, alice=NOT_ALLOWED, operator=NOT_ALLOWED)),
        Case(
            roles(anonymous=LOGIN, alice=redirect("/sessions/"), operator=redirect("/sessions/")),
            method="post",
            data={"agent": "capital_agent", "text": "What is the capital of France?"},
        ),
        Case(signed_in(BAD_REQUEST), method="post", data={"agent": "capital_agent"}),
    ],
    # Renaming: the owner only (operators see the session: 403; other users: 404).
    "sessions/<session_id:session_id>/rename/": [
        Case(
            roles(anonymous=LOGIN, alice=OK, operator=FORBIDDEN),
            kwargs=lambda users: {"session_id": _session_of(users["alice"])},
        ),
        Case(
            roles(anonymous=LOGIN, alice=redirect("/"), operator=FORBIDDEN),
            method="post",
            data={"title": "Renamed"},
            kwargs=lambda users: {"session_id": _session_of(users["alice"])},
        ),
        Case(
            roles(anonymous=LOGIN, alice=NOT_FOUND, operator=FORBIDDEN),
            method="post",
            data={"title": "Renamed"},
            kwargs=lambda users: {"session_id": _session_of(_user("carol"))},
        ),
        Case(
            roles(anonymous=LOGIN, alice=NOT_ALLOWED, operator=NOT_ALLOWED),
            method="put",
            kwargs=lambda users: {"session_id": _session_of(users["alice"])},
        ),
    ],
    # Deleting: the owner or an operator (GET asks to confirm; POST deletes).
    "sessions/<session_id:session_id>/delete/": [
        Case(
            roles(anonymous=LOGIN, alice=OK, operator=OK),
            kwargs=lambda users: {"session_id": _session_of(users["alice"])},
        ),
        Case(
            roles(anonymous=LOGIN, alice=NOT_FOUND, operator=OK),
            kwargs=lambda users: {"session_id": _session_of(_user("carol"))},
        ),
        Case(
            roles(anonymous=LOGIN, alice=NOT_FOUND, operator=redirect("/")),
            method="post",
            kwargs=lambda users: {"session_id": _session_of(_user("carol"))},
        ),
        Case(
            signed_in(redirect("/")),
            method="post",
            kwargs=lambda users: {"session_id": _session_of(users["alice"])},
        ),
        Case(
            roles(anonymous=LOGIN, alice=NOT_FOUND, operator=NOT_FOUND),
            method="post",
            kwargs=lambda users: {"session_id": "no-such-session"},
        ),
    ],
    "sessions/<session_id:session_id>/": [  # dashboard:session
        Case(
            roles(anonymous=LOGIN, alice=NOT_FOUND, operator=OK),
            kwargs=lambda users: {"session_id": _session_of(_user("carol"))},
        ),
        Case(
            signed_in(OK),
            kwargs=lambda users: {"session_id": _session_of(users["alice"])},
        ),
        Case(
            roles(anonymous=LOGIN, alice=NOT_FOUND, operator=NOT_FOUND),
            kwargs=lambda users: {"session_id": "no-such-session"},
        ),
    ],
    # The session page's data (docs/PROTOCOL.md, "Pages over HTTP"): as the page itself.
    **{
        route: [
            Case(
                roles(anonymous=LOGIN, alice=NOT_FOUND, operator=OK),
                kwargs=lambda users, extra=extra: {
                    "session_id": _session_of(_user("carol")),
                    **extra,
                },
                data=query,
            ),
            Case(
                signed_in(OK),
                kwargs=lambda users, extra=extra: {
                    "session_id": _session_of(users["alice"]),
                    **extra,
                },
                data=query,
            ),
            Case(
                roles(anonymous=LOGIN, alice=NOT_FOUND, operator=NOT_FOUND),
                kwargs=lambda users, extra=extra: {"session_id": "no-such-session", **extra},
                data=query,
            ),
            Case(
                roles(anonymous=LOGIN, alice=NOT_ALLOWED, operator=NOT_ALLOWED),
                method="post",
                kwargs=lambda users, extra=extra: {
                    "session_id": _session_of(users["alice"]),
                    **extra,
                },
            ),
        ]
        for route, extra, query in (
            ("sessions/<session_id:session_id>/snapshot/", {}, {}),
            ("sessions/<session_id:session_id>/spans/", {}, {}),
            ("sessions/<session_id:session_id>/spans/search/", {}, {"q": "tool"}),
            ("sessions/<session_id:session_id>/spans/plan/", {}, {"after": "0.0"}),
            ("sessions/<session_id:session_id>/events/", {}, {}),
            # Downloads (docs/EXPORT.md): as the page itself.
            ("sessions/<session_id:session_id>/export/session/", {}, {}),
            ("sessions/<session_id:session_id>/export/otlp/", {}, {}),
            # What the guardrails decided in it (docs/SAFETY.md): as the page itself.
            ("sessions/<session_id:session_id>/guardrails/", {}, {}),
            # The tool confirmations it waits on (docs/RUNTIME.md): as the page itself.
            ("sessions/<session_id:session_id>/confirmations/", {}, {}),
        )
    },
    # Answering a tool confirmation: the session's owner or an operator, by POST only; a
    # request the runtime did not store is a 400 (nothing queued), another's session a 404.
    "sessions/<session_id:session_id>/confirmations/<str:request_id>/": [
        Case(
            roles(anonymous=LOGIN, alice=BAD_REQUEST, operator=BAD_REQUEST),
            method="post",
            data={"decision": "approve"},
            kwargs=lambda users: {
                "session_id": _session_of(users["alice"]),
                "request_id": "adk-none",
            },
        ),
        Case(
            roles(anonymous=LOGIN, alice=NOT_FOUND, operator=BAD_REQUEST),
            method="post",
            data={"decision": "approve"},
            kwargs=lambda users: {
                "session_id": _session_of(_user("carol")),
                "request_id": "adk-none",
            },
        ),
        Case(
            roles(anonymous=LOGIN, alice=NOT_ALLOWED, operator=NOT_ALLOWED),
            kwargs=lambda users: {
                "session_id": _session_of(users["alice"]),
                "request_id": "adk-none",
            },
        ),
    ],
    # Scores (docs/SCORES.md): read as the page itself; given by the owner or an operator
    # (a body that is no JSON object: 400, nothing stored); another's session a 404.
    "sessions/<session_id:session_id>/scores/": [
        Case(signed_in(OK), kwargs=lambda users: {"session_id": _session_of(users["alice"])}),
        Case(  # someone else's session: 403, as for one that does not exist
            roles(anonymous=LOGIN, alice=FORBIDDEN, operator=OK),
            kwargs=lambda users: {"session_id": _session_of(_user("carol"))},
        ),
        Case(
            roles(anonymous=LOGIN, alice=BAD_REQUEST, operator=BAD_REQUEST),
            method="post",
            data={"name": "correct"},
            kwargs=lambda users: {"session_id": _session_of(users["alice"])},
        ),
        Case(
            roles(anonymous=LOGIN, alice=FORBIDDEN, operator=BAD_REQUEST),
            method="post",
            data={"name": "correct"},
            kwargs=lambda users: {"session_id": _session_of(_user("carol"))},
        ),
        Case(
            roles(anonymous=LOGIN, alice=FORBIDDEN, operator=FORBIDDEN),
            kwargs=lambda users: {"session_id": "0" * 32},  # none: the same 403
        ),
    ],
    # Taking a score back: by POST only; a score not of the session is a 404.
    "sessions/<session_id:session_id>/scores/<int:score_id>/delete/": [
        Case(
            roles(anonymous=LOGIN, alice=NOT_FOUND, operator=NOT_FOUND),
            method="post",
            kwargs=lambda users: {"session_id": _session_of(users["alice"]), "score_id": 999},
        ),
        Case(
            roles(anonymous=LOGIN, alice=NOT_ALLOWED, operator=NOT_ALLOWED),
            kwargs=lambda users: {"session_id": _session_of(users["alice"]), "score_id": 999},
        ),
    ],
    # Compare (?a=&b=[&a_run=&b_run=]): both sessions visible to the user, else 404; no
    # session to start from is a 400; a (a lone) is the picker.
    "compare/": [
        Case(signed_in(BAD_REQUEST)),
        Case(signed_in(OK), kwargs=_compare_sessions, data={"a": "cmp-a", "b": "cmp-b"}),
        Case(signed_in(OK), kwargs=_compare_sessions, data={"a": "cmp-a"}),
        Case(
            roles(anonymous=LOGIN, alice=NOT_FOUND, operator=OK),
            kwargs=_compare_sessions,
            data={"a": "cmp-a", "b": "cmp-carol"},
        ),
        Case(
            roles(anonymous=LOGIN, alice=NOT_FOUND, operator=OK),
            kwargs=_compare_sessions,
            data={"a": "cmp-carol"},
        ),
        Case(
            signed_in(NOT_FOUND),
            kwargs=_compare_sessions,
            data={"a": "cmp-a", "a_run": 1, "b_run": 2},
        ),
        Case(
            roles(anonymous=LOGIN, alice=NOT_ALLOWED, operator=NOT_ALLOWED),
            method="post",
            data={"a": "cmp-a", "b": "cmp-b"},
        ),
    ],
    # Forking at an event (docs/PROTOCOL.md, "Forks and replays"): the session's owner or an
    # operator, the fork theirs (a redirect to it); GET is what the fork form starts from;
    # an event the session lacks is a 400, another's session a 404.
    "sessions/<session_id:session_id>/fork/": [
        Case(
            roles(anonymous=LOGIN, alice=redirect("/sessions/"), operator=redirect("/sessions/")),
            method="post",
            data={"event_id": FORK_EVENT},
            kwargs=lambda users: {"session_id": _session_with_event(users["alice"])},
        ),
        Case(
            roles(anonymous=LOGIN, alice=NOT_FOUND, operator=redirect("/sessions/")),
            method="post",
            data={"event_id": FORK_EVENT},
            kwargs=lambda users: {"session_id": _session_with_event(_user("carol"))},
        ),
        Case(
            roles(anonymous=LOGIN, alice=BAD_REQUEST, operator=BAD_REQUEST),
            method="post",
            data={"event_id": "no-such-event"},
            kwargs=lambda users: {"session_id": _session_with_event(users["alice"])},
        ),
        Case(
            signed_in(OK),
            kwargs=lambda users: {"session_id": _session_with_event(users["alice"])},
            data={"event_id": FORK_EVENT},
        ),
        Case(
            roles(anonymous=LOGIN, alice=NOT_FOUND, operator=OK),
            kwargs=lambda users: {"session_id": _session_with_event(_user("carol"))},
            data={"event_id": FORK_EVENT},
        ),
        Case(
            roles(anonymous=LOGIN, alice=NOT_ALLOWED, operator=NOT_ALLOWED),
            method="put",
            kwargs=lambda users: {"session_id": _session_with_event(users["alice"])},
        ),
    ],
    # Replaying a fork: its owner or an operator, by POST; a session that is no fork is a 400.
    "sessions/<session_id:session_id>/replay/": [
        Case(
            roles(anonymous=LOGIN, alice=BAD_REQUEST, operator=BAD_REQUEST),
            method="post",
            kwargs=lambda users: {"session_id": _session_of(users["alice"])},
        ),
        Case(
            roles(anonymous=LOGIN, alice=NOT_FOUND, operator=BAD_REQUEST),
            method="post",
            kwargs=lambda users: {"session_id": _session_of(_user("carol"))},
        ),
        Case(
            roles(anonymous=LOGIN, alice=NOT_ALLOWED, operator=NOT_ALLOWED),
            kwargs=lambda users: {"session_id": _session_of(users["alice"])},
        ),
    ],
    # Breakpoints of a session's agent: operators (who see every session); an owner who is
    # not an operator is refused, another user's session is a 404.
    "sessions/<session_id:session_id>/breakpoints/": [
        Case(
            roles(anonymous=LOGIN, alice=FORBIDDEN, operator=OK),
            kwargs=lambda users: {"session_id": _session_of(users["alice"])},
        ),
        Case(
            roles(anonymous=LOGIN, alice=NOT_FOUND, operator=OK),
            kwargs=lambda users: {"session_id": _session_of(_user("carol"))},
        ),
        Case(
            roles(anonymous=LOGIN, alice=FORBIDDEN, operator=BAD_REQUEST),
            method="post",
            kwargs=lambda users: {"session_id": _session_of(users["alice"])},
            data={"kind": "nonsense"},
        ),
    ],
    # Every run that waits on a person, across sessions: operators only.
    "waiting/": [
        Case(roles(anonymous=LOGIN, alice=FORBIDDEN, operator=OK)),
        Case(roles(anonymous=LOGIN, alice=NOT_ALLOWED, operator=NOT_ALLOWED), method="post"),
    ],
    # An agent's guardrails and policies: operators only.
    "agents/<str:agent_name>/guardrails/": [
        Case(
            roles(anonymous=LOGIN, alice=FORBIDDEN, operator=OK),
            kwargs=lambda users: {"agent_name": "capital_agent"},
        ),
        Case(
            roles(anonymous=LOGIN, alice=NOT_FOUND, operator=NOT_FOUND),
            kwargs=lambda users: {"agent_name": "no_such_agent"},
        ),
        Case(
            roles(anonymous=LOGIN, alice=NOT_ALLOWED, operator=NOT_ALLOWED),
            method="post",
            kwargs=lambda users: {"agent_name": "capital_agent"},
        ),
    ],
    # A policy edited outside the admin: operators (with change_policy) only.
    "evaluations/": [
        Case(operators_only()),
        Case(roles(anonymous=LOGIN, alice=NOT_ALLOWED, operator=NOT_ALLOWED), method="post"),
    ],
    "tokens/": [
        Case(signed_in(OK)),
        Case(signed_in(OK), method="post", data={"name": "a script"}),
    ],
    "queues/": [
        Case(operators_only()),
        Case(
            roles(anonymous=LOGIN, alice=FORBIDDEN, operator=OK),
            method="post",
            data={"name": "nothing-asked"},
        ),  # no score asked: said, nothing made
    ],
    "queues/<slug:name>/": [
        Case(operators_only(), kwargs=lambda users: {"name": _queue()}),
        Case(
            roles(anonymous=LOGIN, alice=NOT_FOUND, operator=NOT_FOUND),
            kwargs=lambda users: {"name": "no-such-queue"},
        ),
        Case(
            _operators_redirected("/queues/"),
            method="post",
            kwargs=lambda users: {"name": _queue()},
            data={"action": "fill"},
        ),
    ],
    "queues/<slug:name>/review/": [
        Case(operators_only(), kwargs=lambda users: {"name": _queue()}),
        Case(
            roles(anonymous=LOGIN, alice=FORBIDDEN, operator=NOT_FOUND),
            method="post",
            kwargs=lambda users: {"name": _queue()},
            data={"item": "999999", "action": "done"},
        ),
    ],
    "instructions/": [
        Case(operators_only()),
        Case(roles(anonymous=LOGIN, alice=NOT_ALLOWED, operator=NOT_ALLOWED), method="post"),
    ],
    "instructions/<str:agent_name>/": [
        Case(operators_only(), kwargs=lambda users: {"agent_name": "analyst"}),
        Case(
            roles(anonymous=LOGIN, alice=NOT_FOUND, operator=NOT_FOUND),
            kwargs=lambda users: {"agent_name": "capital_agent"},  # it does not opt in
        ),
        Case(
            roles(anonymous=LOGIN, alice=FORBIDDEN, operator=redirect("/instructions/analyst/")),
            method="post",
            kwargs=lambda users: {"agent_name": "analyst"},
            data={"action": "save", "text": "You are terse.", "loaded_version": 0},
        ),
        Case(
            roles(anonymous=LOGIN, alice=FORBIDDEN, operator=redirect("/instructions/analyst/")),
            method="post",
            kwargs=lambda users: {"agent_name": "analyst"},
            data={"action": "rollback", "to_version": 0, "loaded_version": 0},
        ),
    ],
    "policies/<int:policy_id>/": [
        Case(
            roles(anonymous=LOGIN, alice=FORBIDDEN, operator=OK),
            kwargs=lambda users: {"policy_id": _policy()},
        ),
        Case(
            roles(anonymous=LOGIN, alice=FORBIDDEN, operator=redirect("/policies/")),
            method="post",
            data={
                "config": '{"tables": ["orders", "items"]}',
                "agents_text": "data_agent",
                "enabled": "on",
                "loaded_version": 1,
                "action": "save",
            },
            kwargs=lambda users: {"policy_id": _policy()},
        ),
        Case(
            roles(anonymous=LOGIN, alice=FORBIDDEN, operator=NOT_FOUND),
            kwargs=lambda users: {"policy_id": 999_999},
        ),
        Case(
            roles(anonymous=LOGIN, alice=NOT_ALLOWED, operator=NOT_ALLOWED),
            method="put",
            kwargs=lambda users: {"policy_id": _policy()},
        ),
    ],
    # One trace's download: found only in its session; a trace of another session is a 404
    # like a missing one.
    "sessions/<session_id:session_id>/export/otlp/<str:trace_id>/": [
        Case(
            roles(anonymous=LOGIN, alice=NOT_FOUND, operator=OK),
            kwargs=lambda users: {
                "session_id": _session_with_trace(_user("carol")),
                "trace_id": TRACE,
            },
        ),
        Case(
            signed_in(OK),
            kwargs=lambda users: {
                "session_id": _session_with_trace(users["alice"]),
                "trace_id": TRACE,
            },
        ),
        Case(
            roles(anonymous=LOGIN, alice=NOT_FOUND, operator=NOT_FOUND),
            kwargs=lambda users: {"session_id": _session_of(users["alice"]), "trace_id": TRACE},
        ),
        Case(
            roles(anonymous=LOGIN, alice=NOT_ALLOWED, operator=NOT_ALLOWED),
            method="post",
            kwargs=lambda users: {
                "session_id": _session_with_trace(users["alice"]),
                "trace_id": TRACE,
            },
        ),
    ],
    # Eval sets (docs/EVAL.md): operators only. Keeping a session as a case: who sees the
    # session and is an operator (a session with no message yet has nothing to keep: 400).
    "sessions/<session_id:session_id>/evalcase/": [
        Case(
            roles(anonymous=LOGIN, alice=FORBIDDEN, operator=BAD_REQUEST),
            method="post",
            data={"eval_set_id": "kept"},
            kwargs=lambda users: {"session_id": _session_of(users["alice"])},
        ),
        Case(
            roles(anonymous=LOGIN, alice=NOT_FOUND, operator=BAD_REQUEST),
            method="post",
            data={"eval_set_id": "kept"},
            kwargs=lambda users: {"session_id": _session_of(_user("carol"))},
        ),
        Case(
            roles(anonymous=LOGIN, alice=NOT_ALLOWED, operator=NOT_ALLOWED),
            kwargs=lambda users: {"session_id": _session_of(users["alice"])},
        ),
    ],
    "evals/": [
        Case(operators_only()),
        Case(roles(anonymous=LOGIN, alice=FORBIDDEN, operator=BAD_REQUEST), method="post"),
        Case(roles(anonymous=LOGIN, alice=NOT_ALLOWED, operator=NOT_ALLOWED), method="put"),
    ],
    **{
        route: [
            Case(operators_only(), kwargs=lambda users: {"pk": _eval_set()}),
            Case(
                roles(anonymous=LOGIN, alice=FORBIDDEN, operator=NOT_FOUND),
                kwargs=lambda users: {"pk": 999_999},
            ),
            Case(
                roles(anonymous=LOGIN, alice=NOT_ALLOWED, operator=NOT_ALLOWED),
                method="post",
                kwargs=lambda users: {"pk": _eval_set()},
            ),
        ]
        for route in ("evals/<int:pk>/", "evals/<int:pk>/download/")
    },
    # Starting a run (executed once the transaction commits: never here).
    "evals/<int:pk>/run/": [
        Case(
            roles(anonymous=LOGIN, alice=FORBIDDEN, operator=redirect("/evals/runs/")),
            method="post",
            data={
                "agent_name": "capital_agent",
                "tool_trajectory_avg_score": "1",
                "response_match_score": "0.8",
            },
            kwargs=lambda users: {"pk": _eval_set()},
        ),
        Case(
            roles(anonymous=LOGIN, alice=FORBIDDEN, operator=BAD_REQUEST),
            method="post",
            data={"agent_name": "no_such_agent"},
            kwargs=lambda users: {"pk": _eval_set()},
        ),
        Case(
            roles(anonymous=LOGIN, alice=NOT_ALLOWED, operator=NOT_ALLOWED),
            kwargs=lambda users: {"pk": _eval_set()},
        ),
    ],
    "evals/runs/<int:pk>/": [
        Case(operators_only(), kwargs=lambda users: {"pk": _eval_run()}),
        Case(
            roles(anonymous=LOGIN, alice=FORBIDDEN, operator=NOT_FOUND),
            kwargs=lambda users: {"pk": 999_999},
        ),
        Case(
            roles(anonymous=LOGIN, alice=NOT_ALLOWED, operator=NOT_ALLOWED),
            method="post",
            kwargs=lambda users: {"pk": _eval_run()},
        ),
    ],
    # One span: found only in its session (none exists here, so 404 for everyone signed in).
    "sessions/<session_id:session_id>/playground/<str:trace_id>/<str:span_id>/": [
        Case(
            roles(anonymous=LOGIN, alice=FORBIDDEN, operator=OK),
            kwargs=lambda users: _session_with_model_call(users["alice"]),
        ),
        Case(  # someone else's session: not confirmed
            roles(anonymous=LOGIN, alice=NOT_FOUND, operator=OK),
            kwargs=lambda users: _session_with_model_call(_user("carol")),
        ),
        Case(  # no such model call
            roles(anonymous=LOGIN, alice=FORBIDDEN, operator=NOT_FOUND),
            kwargs=lambda users: {
                "session_id": _session_of(users["alice"]),
                "trace_id": TRACE,
                "span_id": "0" * 16,
            },
        ),
        Case(
            roles(anonymous=LOGIN, alice=FORBIDDEN, operator=redirect("/sessions/")),
            method="post",
            kwargs=lambda users: _session_with_model_call(users["alice"]),
            data={
                "action": "run",
                "model": "offline",
                "system": "Be brief.",
                "tools": "[]",
                "skeleton": '[{"role": "user", "parts": ["text"]}]',
                "text-0-0": "hi",
            },
        ),
    ],
    "sessions/<session_id:session_id>/spans/<str:trace_id>/<str:span_id>/": [
        Case(
            roles(anonymous=LOGIN, alice=NOT_FOUND, operator=NOT_FOUND),
            kwargs=lambda users: {
                "session_id": _session_of(users["alice"]),
                "trace_id": "0" * 32,
                "span_id": "0" * 16,
            },
        ),
    ],
}

ADMIN: dict[str, list[Case]] = {
    "admin/": [
        Case(
            roles(
                anonymous=ADMIN_LOGIN, alice=ADMIN_LOGIN, operator=ADMIN_LOGIN, staff_operator=OK
            )
        ),
    ],
    "admin/login/": [
        Case(roles(anonymous=OK, alice=OK, operator=OK, staff_operator=redirect("/admin/"))),
    ],
    "admin/logout/": [
        Case(roles(anonymous=redirect("/admin/"), alice=redirect("/admin/"),
                   operator=redirect("/admin/"), staff_operator=NOT_ALLOWED)),
        Case(roles(anonymous=redirect("/admin/"), alice=redirect("/admin/"),
                   operator=redirect("/admin/"), staff_operator=redirect("/login/")),
             method="post"),
    ],
}  # fmt: skip


def staff_only(staff_operator: Outcome, superuser: Outcome | None = None) -> dict[str, Outcome]:
    """Anyone but active staff goes to the admin's login; staff operators get
    ``staff_operator`` (their group's permissions decide), superusers ``superuser``."""
    return roles(anonymous=ADMIN_LOGIN, alice=ADMIN_LOGIN, operator=ADMIN_LOGIN,
                 staff_operator=staff_operator, superuser=superuser)  # fmt: skip


def _eval_set() -> int:
    """A stored eval set of one case (ADK's docs' example, run against the capital agent)."""
    import uuid

    from agentdash.evals.models import EvalSetRecord

    case = {
        "eval_id": "c",
        "conversation": [{"user_content": {"parts": [{"text": "Capital of France?"}]}}],
    }
    return EvalSetRecord.objects.create(
        eval_set_id=uuid.uuid4().hex,
        agent_name="capital_agent",
        case_count=1,
        data={"eval_set_id": "s", "eval_cases": [case]},
    ).pk


def _eval_run() -> int:
    from agentdash.evals.models import EvalRun, EvalSetRecord

    record = EvalSetRecord.objects.get(pk=_eval_set())
    return EvalRun.objects.create(eval_set=record, agent_name="capital_agent", criteria={}).pk


def _policy() -> int:
    from agentdash.controls.services import policy_create

    config = {"tables": ["orders"]}
    return policy_create(name="orders only", kind="query", config=config, actor=None).pk


def _audit_entry() -> int:
    from agentdash.core.models import AuditEntry

    _policy()  # its creation is audited
    return AuditEntry.objects.get().pk


STATE_EDIT = {
    "key": "tier",
    "value": '"gold"',
    "reason": "matrix",
    "expected_version": 0,
    "expected_app_version": 0,
    "expected_user_version": 0,
}
POLICY_ADD = {
    "name": "calls",
    "kind": "rate_limit",
    "agents_text": "capital_agent",
    "config": '{"max_calls": 5, "window_seconds": 60}',
    "enabled": "on",
    "reason": "matrix",
    "_save": "Save",
}
POLICY_EDIT = {
    "config": '{"tables": ["orders", "items"]}',
    "agents_text": "data_agent",
    "enabled": "on",
    "reason": "matrix",
    "loaded_version": 1,
    "_save": "Save",
}
SWITCH_ADD = {
    "agent_name": "capital_agent",
    "callback_name": "add_disclaimer",
    "session": "",
    "enabled": "on",
    "reason": "matrix",
    "_save": "Save",
}

# What operators do in the admin (README, "Roles"): with the staff flag they get in, and
# their group's permissions decide — policies and callback switches (add, change), session
# state (edit), sessions, runs, spans, changes and the audit trail (view). Never users or
# groups, never deleting, and nobody changes the audit trail.
ADMIN_OPERATORS: dict[str, list[Case]] = {
    "admin/controls/policy/add/": [
        Case(staff_only(OK)),
        Case(staff_only(redirect("/admin/controls/policy/")), method="post", data=POLICY_ADD),
    ],
    "admin/controls/policy/<policy>/change/": [
        Case(staff_only(OK), kwargs=lambda users: {"policy": _policy()}),
        Case(staff_only(redirect("/admin/controls/policy/")), method="post", data=POLICY_EDIT,
             kwargs=lambda users: {"policy": _policy()}),
    ],
    "admin/controls/policy/<policy>/delete/": [
        Case(staff_only(FORBIDDEN, superuser=OK), kwargs=lambda users: {"policy": _policy()}),
    ],
    "admin/controls/callbacksetting/add/": [
        Case(staff_only(redirect("/admin/controls/callbacksetting/")), method="post",
             data=SWITCH_ADD),
    ],
    "admin/agent_sessions/agentsession/<session>/change/": [
        Case(staff_only(OK), kwargs=lambda users: {"session": _session_of(users["alice"])}),
    ],
    "admin/agent_sessions/agentsession/<session>/state/": [
        Case(staff_only(OK), kwargs=lambda users: {"session": _session_of(users["alice"])}),
        Case(staff_only(redirect("/admin/agent_sessions/agentsession/")), method="post",
             data=STATE_EDIT, kwargs=lambda users: {"session": _session_of(users["alice"])}),
    ],
    "admin/agent_sessions/agentsession/<session>/delete/": [
        Case(staff_only(FORBIDDEN, superuser=OK),
             kwargs=lambda users: {"session": _session_of(users["alice"])}),
    ],
    "admin/runs/run/": [Case(staff_only(OK))],
    "admin/core/auditentry/<entry>/change/": [
        Case(staff_only(OK), kwargs=lambda users: {"entry": _audit_entry()}),  # read-only view
        Case(staff_only(FORBIDDEN), method="post", data={"reason": "rewritten"},
             kwargs=lambda users: {"entry": _audit_entry()}),
    ],
    "admin/core/auditentry/<entry>/delete/": [
        Case(staff_only(FORBIDDEN), kwargs=lambda users: {"entry": _audit_entry()}),
    ],
    "admin/core/auditentry/add/": [Case(staff_only(FORBIDDEN))],
    "admin/auth/user/": [Case(staff_only(FORBIDDEN, superuser=OK))],
    "admin/auth/user/add/": [Case(staff_only(FORBIDDEN, superuser=OK))],
    "admin/auth/user/<user>/change/": [
        Case(staff_only(FORBIDDEN, superuser=OK), kwargs=lambda users: {"user": _user("carol").pk}),
    ],
    "admin/auth/user/<user>/password/": [
        Case(staff_only(FORBIDDEN, superuser=OK), kwargs=lambda users: {"user": _user("carol").pk}),
    ],
    "admin/auth/group/": [Case(staff_only(FORBIDDEN, superuser=OK))],
}  # fmt: skip


# ── Discovery ──────────────────────────────────────────────────────────────────────────────
def _walk(patterns: list[Any], prefix: str) -> Iterator[tuple[str, URLPattern | URLResolver]]:
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            if pattern.namespace == "admin" or pattern.app_name == "admin":
                yield route, pattern  # the admin site: checked through ADMIN, not walked
                continue
            yield from _walk(pattern.url_patterns, route)
        else:
            yield route, pattern


def project_routes() -> dict[str, URLPattern]:
    """Every route of the project except the admin site's, by full route string."""
    return {
        route: p for route, p in _walk(get_resolver().url_patterns, "") if isinstance(p, URLPattern)
    }


def admin_prefixes() -> list[str]:
    return [
        route for route, p in _walk(get_resolver().url_patterns, "") if isinstance(p, URLResolver)
    ]


_PARAM = re.compile(r"<(?:[^>:]+:)?([^>]+)>")


def url_for(route: str, kwargs: Mapping[str, Any]) -> str:
    return "/" + _PARAM.sub(lambda m: str(kwargs[m.group(1)]), route)


def assert_outcome(response: HttpResponse, expected: Outcome, what: str) -> None:
    got = Outcome(response.status_code, response.headers.get("Location"))
    assert response.status_code == expected.status, f"{what}: expected {expected}, got {got}"
    if expected.location is not None:
        location = response.headers.get("Location", "")
        assert location.startswith(expected.location), f"{what}: expected {expected}, got {got}"


def sign_in(client: Client, user: User | None) -> None:
    if user is not None:
        client.force_login(user)


def _params(table: dict[str, list[Case]]) -> list[Any]:
    return [
        pytest.param(route, case, role, id=f"{case.method.upper()} /{route} as {role}")
        for route, cases in table.items()
        for case in cases
        for role in ROLES
    ]


# ── The tests ──────────────────────────────────────────────────────────────────────────────
def test_every_route_declares_its_access() -> None:
    routes = set(project_routes())
    undeclared = sorted(routes - set(ACCESS))
    assert not undeclared, (
        f"New URL(s) {undeclared} have no declared access: add them to ACCESS in "
        "tests/agentdash/test_authorization.py, with the outcome for every role."
    )
    stale = sorted(set(ACCESS) - routes)
    assert not stale, f"ACCESS lists route(s) that no longer exist: {stale}"


def test_every_case_names_every_role() -> None:
    for route, cases in {**ACCESS, **ADMIN, **ADMIN_OPERATORS}.items():
        for case in cases:
            assert set(case.expect) == set(ROLES), route


def test_the_admin_site_is_where_the_table_says() -> None:
    assert admin_prefixes() == ["admin/"]
    assert reverse("admin:index") == "/admin/"


@pytest.mark.django_db
@pytest.mark.parametrize(("route", "case", "role"), _params(ACCESS))
def test_access(client: Client, role_users: Users, route: str, case: Case, role: str) -> None:
    kwargs = case.kwargs(role_users) if case.kwargs else {}
    url = url_for(route, kwargs)
    assert resolve(url).route == route, f"{url} does not resolve to {route!r}"
    sign_in(client, role_users[role])
    response = getattr(client, case.method)(url, data=dict(case.data))
    assert_outcome(response, case.expect[role], f"{case.method.upper()} {url} as {role}")


@pytest.mark.django_db
@pytest.mark.parametrize(("route", "case", "role"), _params({**ADMIN, **ADMIN_OPERATORS}))
def test_admin_access(client: Client, role_users: Users, route: str, case: Case, role: str) -> None:
    url = url_for(route, case.kwargs(role_users) if case.kwargs else {})
    sign_in(client, role_users[role])
    response = getattr(client, case.method)(url, data=dict(case.data))
    assert_outcome(response, case.expect[role], f"{case.method.upper()} {url} as {role}")


def _one_model_per_app() -> list[Any]:
    by_app: dict[str, Any] = {}
    for model in sorted(admin.site._registry, key=lambda m: m._meta.label):
        by_app.setdefault(model._meta.app_label, model)
    return [pytest.param(model, id=model._meta.label) for model in by_app.values()]


@pytest.mark.django_db
@pytest.mark.parametrize("model", _one_model_per_app())
@pytest.mark.parametrize("role", ROLES)
def test_admin_changelist(client: Client, role_users: Users, model: Any, role: str) -> None:
    """Only active staff get past the admin login; among them, the model's permissions
    decide (403 without view/change permission)."""
    user = role_users[role]
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
    if user is None or not user.is_staff:
        expected = ADMIN_LOGIN
    else:
        request = RequestFactory().get(url)
        request.user = user
        model_admin = admin.site._registry[model]
        expected = OK if model_admin.has_view_or_change_permission(request) else FORBIDDEN
    if role == "superuser":
        assert expected == OK
    if role == "staff_operator" and model._meta.app_label == "auth":
        assert expected == FORBIDDEN, "operators must not manage users or groups"
    sign_in(client, user)
    assert_outcome(client.get(url), expected, f"GET {url} as {role}")


# ── Around the table ───────────────────────────────────────────────────────────────────────
@pytest.mark.django_db
def test_logging_in_with_the_form(client: Client, alice: User) -> None:
    response = client.post("/login/", {"username": "alice", "password": PASSWORD})
    assert_outcome(response, redirect("/"), "POST /login/")
    assert client.get("/").status_code == 200


@pytest.mark.django_db
def test_a_wrong_password_does_not_log_in(client: Client, alice: User) -> None:
    response = client.post("/login/", {"username": "alice", "password": "wrong"})
    assert response.status_code == 200
    assert_outcome(client.get("/"), LOGIN, "GET / after a failed login")


@pytest.mark.django_db
def test_logout_needs_the_csrf_token(alice: User) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert client.post("/logout/").status_code == 403
    assert client.get("/").status_code == 200  # still signed in


@pytest.mark.django_db
def test_login_redirect_keeps_the_page_asked_for(client: Client) -> None:
    response = client.get("/")
    assert response.headers["Location"] == "/login/?next=/"


@pytest.mark.django_db
def test_the_login_page_ignores_an_offsite_next(client: Client, alice: User) -> None:
    response = client.post(
        "/login/?next=https://evil.example.com/", {"username": "alice", "password": PASSWORD}
    )
    assert_outcome(response, redirect("/"), "POST /login/?next=offsite")
