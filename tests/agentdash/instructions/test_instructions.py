"""Stored instructions (docs/INSTRUCTIONS.md): versions saved by operators only, checked,
audited, refused without loss when someone saved first; rollback as a new version; the
agent reads the newest version at its next model call (the analyst, on the offline model);
the editor's preview, save, conflict and rollback over HTTP, hostile text included."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import DatabaseError
from django.test import Client

from agentdash.core.models import AuditEntry
from agentdash.demo import analyst
from agentdash.instructions import stored_instructions
from agentdash.instructions.models import InstructionVersion
from agentdash.instructions.services import (
    InstructionConflict,
    instruction_rollback,
    instruction_save,
)
from agentdash.instructions.versions import InstructionUnavailableError
from tests.agentdash.demo.conftest import Chat
from tests.agentdash.hostile import NUL, SURROGATE

pytestmark = [pytest.mark.django_db, pytest.mark.database]

CODE_TEXT = analyst.root_agent.instruction.default  # type: ignore[union-attr]
EDITED = "You answer in riddles. Numbers go through run_python first."
URL = "/instructions/analyst/"


def save(actor: User, text: str, expected: int, **extra: Any) -> InstructionVersion:
    return instruction_save(agent_name="analyst", text=text, actor=actor,
                            expected_version=expected, **extra)  # fmt: skip


def test_versions_grow_are_audited_and_a_stale_save_stores_nothing(operator_user: User) -> None:
    first = save(operator_user, EDITED, 0, reason="shorter")
    assert (first.version, first.author_name, first.reason) == (1, "operator", "shorter")
    second = save(operator_user, "You are brief.", 1)
    assert second.version == 2
    with pytest.raises(
        InstructionConflict, match="you started from version 1; it is now version 2"
    ):
        save(operator_user, "Someone else's edit.", 1)
    with pytest.raises(ValidationError, match="current instruction already"):
        save(operator_user, "You are brief.", 2)
    assert list(InstructionVersion.objects.values_list("version", flat=True)) == [2, 1]
    entries = AuditEntry.objects.filter(action="instruction.save").order_by("pk")
    assert [(e.before and e.before["version"], e.after["version"]) for e in entries] == [
        (None, 1), (1, 2)]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "reason", "field"),
    [("", "", "text"), ("   \n", "", "text"), (f"bad{NUL}", "", "text"),
     (f"bad{SURROGATE}", "", "text"), ("x" * 50_001, "", "text"), ("ok", "r" * 501, "reason"),
     ("ok", f"why{NUL}", "reason")],
)  # fmt: skip
def test_text_that_cannot_be_stored_is_refused(
    operator_user: User, text: str, reason: str, field: str
) -> None:
    with pytest.raises(ValidationError) as refused:
        save(operator_user, text, 0, reason=reason)
    assert field in refused.value.message_dict
    assert not InstructionVersion.objects.exists()


def test_only_operators_change_instructions(alice: User) -> None:
    with pytest.raises(PermissionDenied):
        save(alice, EDITED, 0)
    assert not InstructionVersion.objects.exists()


def test_rollback_is_a_new_version_with_the_older_text(operator_user: User) -> None:
    save(operator_user, EDITED, 0)
    save(operator_user, "You are brief.", 1)
    back = instruction_rollback(agent_name="analyst", to_version=1, code_text=CODE_TEXT,
                                actor=operator_user, expected_version=2)  # fmt: skip
    assert (back.version, back.text, back.rollback_of) == (3, EDITED, 1)
    assert back.reason == "rolled back to v1"
    code = instruction_rollback(agent_name="analyst", to_version=0, code_text=CODE_TEXT,
                                actor=operator_user, expected_version=3)  # fmt: skip
    assert (code.version, code.text, code.rollback_of) == (4, CODE_TEXT, 0)
    with pytest.raises(ValidationError, match="no version 9"):
        instruction_rollback(agent_name="analyst", to_version=9, code_text=CODE_TEXT,
                             actor=operator_user, expected_version=4)  # fmt: skip
    assert AuditEntry.objects.filter(action="instruction.rollback").count() == 2


@pytest.mark.django_db(transaction=True)
def test_the_agent_reads_the_newest_version_at_its_next_model_call(operator_user: User) -> None:
    chat = Chat(analyst.root_agent)
    assert "My instructions: You are a careful data analyst." in chat.send("hello").answer
    save(operator_user, EDITED, 0)
    assert "My instructions: You answer in riddles." in chat.send("hello again").answer
    instruction_rollback(agent_name="analyst", to_version=0, code_text=CODE_TEXT,
                         actor=operator_user, expected_version=1)  # fmt: skip
    assert "My instructions: You are a careful data analyst." in chat.send("and now").answer
    view = asyncio.run(stored_instructions.instruction_view(agent_name="analyst", default="x"))
    assert (view.template, view.version) == (CODE_TEXT, "v2")
    fresh = asyncio.run(stored_instructions.instruction_view(agent_name="nobody", default="x"))
    assert (fresh.template, fresh.version) == ("x", "code")


def test_an_unreadable_instruction_fails_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    def down(**_: Any) -> None:
        raise DatabaseError("the database is not answering")

    monkeypatch.setattr(stored_instructions, "instruction_current", down)
    with pytest.raises(InstructionUnavailableError, match="analyst could not be read"):
        asyncio.run(stored_instructions.instruction_view(agent_name="analyst", default="x"))


def test_the_editor_previews_saves_refuses_a_stale_save_and_rolls_back(
    operator_user: User, alice: User
) -> None:
    client = Client()
    client.force_login(operator_user)
    page = client.get(URL).content.decode()
    assert "The code" in page and "You are a careful data analyst." in page
    preview = client.post(URL, {"action": "preview", "text": EDITED, "loaded_version": 0})
    html = preview.content.decode()
    assert '<span class="w-ins">' in html and '<span class="w-del">' in html
    assert not InstructionVersion.objects.exists()  # a preview stores nothing
    saved = client.post(URL, {"action": "save", "text": EDITED, "reason": "<b>r</b>",
                              "loaded_version": 0})  # fmt: skip
    assert saved.status_code == 302 and saved["Location"] == URL
    page = client.get(URL).content.decode()
    assert "Version 1" in page and "&lt;b&gt;r&lt;/b&gt;" in page and "<b>r</b>" not in page
    # Someone who loaded version 0 saves later: refused, their text kept on the page.
    stale = client.post(URL, {"action": "save", "text": "Mine, typed meanwhile.",
                              "loaded_version": 0})  # fmt: skip
    assert stale.status_code == 200
    assert "changed by someone else" in stale.content.decode()
    assert "Mine, typed meanwhile." in stale.content.decode()
    assert InstructionVersion.objects.count() == 1
    refused = client.post(URL, {"action": "save", "text": f"x{NUL}", "loaded_version": 1})
    assert refused.status_code == 400 and InstructionVersion.objects.count() == 1
    empty = client.post(URL, {"action": "save", "text": "   ", "loaded_version": 1})
    assert "an instruction cannot be empty" in empty.content.decode()
    assert InstructionVersion.objects.count() == 1
    back = client.post(URL, {"action": "rollback", "to_version": 0, "loaded_version": 1})
    assert back.status_code == 302
    assert InstructionVersion.objects.order_by("-version").first().text == CODE_TEXT  # type: ignore[union-attr]
    listing = client.get("/instructions/").content.decode()
    assert "analyst" in listing and "support_desk" in listing and "v2" in listing
    client.force_login(alice)
    assert client.get(URL).status_code == 403
    assert client.post(URL, {"action": "save", "text": "x", "loaded_version": 2}).status_code == 403


def test_compare_says_which_instruction_versions_each_side_was_given(
    operator_user: User, alice: User
) -> None:
    from agentdash.spans.services import span_upsert
    from tests.agentdash.stored import session_of

    for n, (session_id, version) in enumerate((("cmp-v1", "v1"), ("cmp-v2", "v2"))):
        session = session_of(alice, session_id, "analyst")
        for m, agent in enumerate(("analyst", "analyst")):
            span_upsert(trace_id=f"{n}" * 32, span_id=f"{n}{m}" * 8, name="call_llm",
                        start_time=10 + m, end_time=20 + m, session_id=session.pk,
                        attributes={"agentdash.span.kind": "model", "gen_ai.agent.name": agent,
                                    "agentdash.instruction.version": version})  # fmt: skip
    client = Client()
    client.force_login(operator_user)
    page = client.get("/compare/", {"a": "cmp-v1", "b": "cmp-v2"}).content.decode()
    assert page.count("instruction analyst v1") == 1 and page.count("instruction analyst v2") == 1
