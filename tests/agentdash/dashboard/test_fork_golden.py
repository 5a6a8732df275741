"""The golden exchanges of forks and replays (``golden/fork.*.json``, docs/PROTOCOL.md "Forks
and replays"): each request sent to the real views, in order, answers its golden response
(``"<int>"``, ``"<str>"`` stand for any value of that type). ``{parent}`` in a path is the
fixture session, ``{fork}`` the fork the exchange before made."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agentdash.controls.services import callback_setting_set
from tests.agentdash.dashboard.test_session_page import capital_session
from tests.agentdash.live.test_golden import matches
from tests.agentdash.recording_executor import RecordingExecutor
from tests.agentdash.stored import store_event

pytestmark = pytest.mark.django_db

GOLDEN = Path(__file__).parent / "golden"
ORDER = ("fork.form", "fork.refused", "fork.create", "fork.replay")


def test_every_exchange_is_checked() -> None:
    assert {p.stem for p in GOLDEN.glob("fork.*.json")} == set(ORDER)


def test_the_golden_exchanges_are_what_the_views_answer(
    client: Client, operator_user: User, recorder: RecordingExecutor
) -> None:
    parent = capital_session(operator_user, state={"topic": "capitals"}, title="Capitals")
    store_event(parent.pk, "What is the capital of France?", id="e-golden-1")
    store_event(parent.pk, "Paris.", id="e-golden-2", author="capital_agent")
    store_event(parent.pk, "And of Peru?", id="e-golden-3")
    callback_setting_set(
        agent_name="capital_agent",
        callback_name="add_disclaimer",
        enabled=False,
        session_id=parent.pk,
        actor=operator_user,
    )
    client.force_login(operator_user)
    names = {"parent": parent.pk, "fork": ""}
    for name in ORDER:
        exchange: Any = json.loads((GOLDEN / f"{name}.json").read_text())
        request = exchange["request"]
        path = request["path"].format(**names)
        send = client.get if request["method"] == "GET" else client.post
        response = send(path, request["form"], HTTP_ACCEPT="application/json")
        assert response.status_code == exchange["response"]["status"], (name, response.content)
        answer = response.json()
        matches(exchange["response"]["body"], answer)
        if name == "fork.create":
            names["fork"] = answer["session"]
            assert answer["url"] == f"/sessions/{answer['session']}/"
