"""``manage.py export_session``: the downloads' documents from the command line, and a clear
error — with nothing written — for a session or a trace that is not there."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from agentdash.agent_sessions.models import AgentSession
from agentdash.dashboard.exports.session_export import FORMAT
from agentdash.spans.services import spans_store
from agentdash.spans.span_version import SpanVersion
from tests.agentdash.otlp_receiver import otlp_parse, strict_json
from tests.agentdash.stored import session_make, store_event

pytestmark = pytest.mark.django_db

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
OTHER_TRACE = "5b8efff798038103d269b633813fc60c"


@pytest.fixture
def session() -> AgentSession:
    found = session_make("cli-1")
    store_event(found.id, "Capital of France?")
    spans_store(
        versions=[
            SpanVersion(trace_id=trace, span_id=f"{i + 1:016x}", name=f"{trace[:4]} {i}",
                        start_time=1_000 + i, end_time=2_000 + i, session_id=found.id)
            for trace in (TRACE, OTHER_TRACE)
            for i in range(3)
        ]
    )  # fmt: skip
    return found


def export(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("export_session", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_the_session_document_to_standard_output(session: AgentSession) -> None:
    out, _ = export("cli-1")
    document = strict_json(out)
    assert document["format"] == FORMAT
    assert document["session"]["id"] == "cli-1"
    assert [e["data"]["content"]["parts"][0]["text"] for e in document["events"]] == [
        "Capital of France?"
    ]
    assert len(document["spans"]) == 6


def test_every_trace_or_one_as_otlp(session: AgentSession) -> None:
    out, _ = export("cli-1", "--format", "otlp")
    spans = otlp_parse(out).resource_spans[0].scope_spans[0].spans
    assert len(spans) == 6
    out, _ = export("cli-1", "--trace", TRACE)  # --trace: OTLP without asking
    spans = otlp_parse(out).resource_spans[0].scope_spans[0].spans
    assert {s.trace_id.hex() for s in spans} == {TRACE} and len(spans) == 3


def test_to_a_file(session: AgentSession, tmp_path: Path) -> None:
    target = tmp_path / "trace.json"
    _, err = export("cli-1", "--trace", OTHER_TRACE, "-o", str(target))
    spans = otlp_parse(target.read_bytes()).resource_spans[0].scope_spans[0].spans
    assert [s.name for s in spans] == ["5b8e 0", "5b8e 1", "5b8e 2"]
    assert f"bytes to {target}" in err
    assert list(tmp_path.iterdir()) == [target]  # no temporary file left behind


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no-such-session"], "there is no session 'no-such-session'"),
        (["cli-1", "--trace", "0" * 32], f"session 'cli-1' has no span of trace '{'0' * 32}'"),
        (["cli-1", "--trace", TRACE, "--format", "session"], "--trace exports OTLP:"),
    ],
)
def test_what_is_not_there_is_a_clear_error_and_no_file(
    session: AgentSession, tmp_path: Path, args: list[str], message: str
) -> None:
    target = tmp_path / "out.json"
    with pytest.raises(CommandError, match=message):
        export(*args, "-o", str(target))
    assert list(tmp_path.iterdir()) == []


def test_a_failed_export_leaves_an_existing_file_as_it_was(
    session: AgentSession, tmp_path: Path
) -> None:
    target = tmp_path / "out.json"
    target.write_text("earlier export")
    with pytest.raises(CommandError):
        export("cli-1", "--trace", "0" * 32, "-o", str(target))
    assert target.read_text() == "earlier export"
    with pytest.raises(CommandError, match="is not a directory"):
        export("cli-1", "-o", str(tmp_path / "missing" / "out.json"))
