"""The eval pages: import an ADK file, keep a session as a case, download, run; whatever a
client sends, a 400 that says why, never a 500."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from agentdash.core.models import AuditEntry
from agentdash.dashboard.evals import views as eval_views
from agentdash.evals.models import EvalCaseResult, EvalRun, EvalSetRecord
from runtime.evaluation import eval_set_load, eval_set_loads
from tests.agentdash.hostile import HOSTILE_JSON, NUL, Prober
from tests.agentdash.stored import session_of, store_event

pytestmark = pytest.mark.django_db

DOCS_EXAMPLE = (
    Path(__file__).parents[2] / "runtime" / "evaluation" / "data" / "home_automation.evalset.json"
)


@pytest.fixture
def op(client: Client, operator_user: User) -> Client:
    client.force_login(operator_user)
    return client


def upload(client: Client, content: bytes, name: str = "x.evalset.json", **fields: Any) -> Any:
    return client.post(
        "/evals/", {"file": SimpleUploadedFile(name, content), **fields}, follow=False
    )


def test_an_adk_file_imports_shows_and_downloads_as_it_was(op: Client) -> None:
    response = upload(op, DOCS_EXAMPLE.read_bytes(), agent_name="capital_agent")
    record = EvalSetRecord.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/evals/{record.pk}/"
    assert (record.eval_set_id, record.case_count, record.agent_name) == (
        "home_automation_agent_light_on_off_set",
        1,
        "capital_agent",
    )

    page = op.get(f"/evals/{record.pk}/").content.decode()
    assert "eval_case_id" in page and "Turn off device_2 in the Bedroom." in page
    assert "Imported eval set home_automation_agent_light_on_off_set." in page
    listing = op.get("/evals/").content.decode()
    assert f'href="/evals/{record.pk}/"' in listing

    download = op.get(f"/evals/{record.pk}/download/")
    assert download["Content-Disposition"] == (
        'attachment; filename="home_automation_agent_light_on_off_set.evalset.json"'
    )
    assert eval_set_loads(download.content) == eval_set_loads(DOCS_EXAMPLE.read_bytes())


def test_other_content_under_the_same_id_is_refused_unless_replaced(op: Client) -> None:
    assert upload(op, DOCS_EXAMPLE.read_bytes()).status_code == 302
    other = json.loads(DOCS_EXAMPLE.read_text())
    other["description"] = "changed"
    again = upload(op, json.dumps(other).encode())
    assert again.status_code == 400
    assert (
        "an eval set &#x27;home_automation_agent_light_on_off_set&#x27; is stored already with "
        "other content: replace it, or change the file&#x27;s eval_set_id"
    ) in again.content.decode()
    assert upload(op, json.dumps(other).encode(), replace="on").status_code == 302
    assert EvalSetRecord.objects.get().description == "changed"


def test_a_downloaded_set_imports_again_while_it_is_stored(op: Client, alice: User) -> None:
    session = session_of(alice, "s-capitals", app_name="capital_agent")
    store_event(session.id, "Capital of France?", invocation_id="e-1")
    store_event(session.id, "Paris.", author="capital_agent", invocation_id="e-1")
    op.post(f"/sessions/{session.id}/evalcase/", {"eval_set_id": "capitals"})
    record = EvalSetRecord.objects.get()
    downloaded = op.get(f"/evals/{record.pk}/download/")
    name = downloaded["Content-Disposition"].split('filename="')[1].rstrip('"')
    audited = AuditEntry.objects.count()

    # As it was downloaded, under the name the browser saved, or another (a second copy).
    for saved_as in (name, "capitals (1).evalset.json"):
        again = upload(op, downloaded.content, name=saved_as)
        assert again.status_code == 302 and again["Location"] == f"/evals/{record.pk}/"
        page = op.get(again["Location"]).content.decode()
        assert "Eval set capitals is stored already with the same content: nothing changed." in (
            page
        )
    assert EvalSetRecord.objects.get().data == record.data
    assert AuditEntry.objects.count() == audited  # nothing written

    # With an agent named: the set's default agent becomes it, and that is all.
    assert upload(op, downloaded.content, name=name, agent_name="analyst").status_code == 302
    assert EvalSetRecord.objects.get().agent_name == "analyst"
    assert "Imported eval set capitals." in op.get(f"/evals/{record.pk}/").content.decode()


@pytest.mark.parametrize(
    ("cut", "says"),
    [
        (lambda text: text[: len(text) // 2], "the file is not valid JSON"),
        (lambda text: text.replace('"eval_cases"', '"cases"'), "eval_cases"),
    ],
)
def test_a_spoilt_download_is_refused_saying_why(
    op: Client, alice: User, cut: Any, says: str
) -> None:
    upload(op, DOCS_EXAMPLE.read_bytes())
    record = EvalSetRecord.objects.get()
    text = op.get(f"/evals/{record.pk}/download/").content.decode()
    response = upload(op, cut(text).encode(), name="x.evalset.json")
    assert response.status_code == 400
    (error,) = [line for line in response.content.decode().splitlines() if 'class="error"' in line]
    assert says in error
    assert EvalSetRecord.objects.get().data == record.data


def test_adks_older_test_format_imports_named_after_the_file(op: Client) -> None:
    old = [{"query": "hi", "expected_tool_use": [], "reference": "hello"}]
    response = upload(op, json.dumps(old).encode(), name="greeting.test.json")
    assert response.status_code == 302
    assert EvalSetRecord.objects.get().eval_set_id == "greeting"


def test_save_download_import_round_trip(op: Client, alice: User) -> None:
    session = session_of(alice, "s-weather", app_name="capital_agent")
    store_event(session.id, "Capital of France?", invocation_id="e-1")
    store_event(session.id, "Paris.", author="capital_agent", invocation_id="e-1")
    store_event(session.id, "And Spain?", invocation_id="e-2")
    store_event(session.id, "Madrid.", author="capital_agent", invocation_id="e-2")

    saved = op.post(f"/sessions/{session.id}/evalcase/", {"eval_set_id": "capitals"})
    record = EvalSetRecord.objects.get()
    assert saved.status_code == 302 and saved["Location"] == f"/evals/{record.pk}/"
    downloaded = op.get(f"/evals/{record.pk}/download/").content
    (case,) = eval_set_loads(downloaded).eval_cases
    assert case.eval_id == "s-weather"  # no title: the session's id
    assert [t.final_response.parts[0].text for t in case.conversation or []] == [  # type: ignore[union-attr, index]
        "Paris.",
        "Madrid.",
    ]
    assert case.session_input is not None and case.session_input.app_name == "capital_agent"

    # Saved again under the same name: replaced, not doubled.
    op.post(f"/sessions/{session.id}/evalcase/", {"eval_set_id": "capitals"})
    assert EvalSetRecord.objects.get().case_count == 1

    EvalSetRecord.objects.all().delete()
    assert upload(op, downloaded, name="capitals.evalset.json").status_code == 302
    again = EvalSetRecord.objects.get()
    assert eval_set_load(again.data) == eval_set_loads(downloaded)


def test_a_run_starts_in_the_background_and_its_page_shows_the_scores(
    op: Client, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    started: list[int] = []
    monkeypatch.setattr(eval_views, "eval_run_spawn", started.append)
    upload(op, DOCS_EXAMPLE.read_bytes(), agent_name="capital_agent")
    record = EvalSetRecord.objects.get()

    too_high = {"agent_name": "capital_agent", "tool_trajectory_avg_score": "1.5"}
    refused = op.post(f"/evals/{record.pk}/run/", {**too_high, "response_match_score": "0.8"})
    assert refused.status_code == 400 and EvalRun.objects.count() == 0
    with django_capture_on_commit_callbacks(execute=True):
        thresholds = {"tool_trajectory_avg_score": "1", "response_match_score": "0.5"}
        response = op.post(
            f"/evals/{record.pk}/run/", {"agent_name": "capital_agent", **thresholds}
        )
    eval_run = EvalRun.objects.get()
    assert response["Location"] == f"/evals/runs/{eval_run.pk}/"
    assert started == [eval_run.pk]  # once committed
    assert eval_run.criteria == {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.5}

    page = op.get(f"/evals/runs/{eval_run.pk}/").content.decode()
    assert '<meta http-equiv="refresh" content="2">' in page and "pending" in page

    EvalCaseResult.objects.filter(eval_run=eval_run).update(
        status="failed",
        tool_trajectory_score=0.0,
        response_match_score=0.25,
        details=[
            {
                "user": "Turn off device_2 in the Bedroom.",
                "expected_tools": [{"name": "set_device_info", "args": {"status": "OFF"}}],
                "actual_tools": [],
                "expected_response": "I have set the device_2 status to off.",
                "actual_response": "<b>no</b>",
                "scores": {"tool_trajectory_avg_score": 0.0, "response_match_score": 0.25},
                "exact_match": False,
            }
        ],
    )
    EvalRun.objects.filter(pk=eval_run.pk).update(status="failed")
    page = op.get(f"/evals/runs/{eval_run.pk}/").content.decode()
    assert "http-equiv" not in page and "0 of 1 passed" in page
    assert "set_device_info(status=OFF)" in page and "0.25" in page
    assert "&lt;b&gt;no&lt;/b&gt;" in page  # an agent's answer is text, never markup


@pytest.mark.parametrize("name", sorted(HOSTILE_JSON))
def test_hostile_files_are_a_400_that_says_why(op: Client, name: str) -> None:
    response = upload(op, HOSTILE_JSON[name].encode())
    assert response.status_code == 400, response.status_code
    assert '<p class="error" role="alert">' in response.content.decode()
    assert EvalSetRecord.objects.count() == 0


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"\xff\xfe{}", "not UTF-8"),
        (b"{" + b" " * (2 * 1024 * 1024) + b"}", "larger than 2 MB"),
        (b'{"eval_set_id": "x", "eval_cases": [{"eval_id": "\\u0000"}]}', "NUL"),
        (b'{"eval_set_id": "\\ud800", "eval_cases": []}', "surrogate"),
        (b'{"eval_set_id": "' + b"x" * 300 + b'", "eval_cases": []}', "1 to 128"),
        (b'{"eval_set_id": "x", "eval_cases": "no"}', "eval_cases: Input should be a valid list"),
        (b"", "empty"),
    ],
)
def test_files_that_are_not_eval_sets_say_what_is_wrong(
    op: Client, content: bytes, says: str
) -> None:
    response = upload(op, content)
    assert response.status_code == 400
    assert says in response.content.decode()


def test_hostile_names_for_a_kept_case_are_refused(op: Client, alice: User) -> None:
    session = session_of(alice, "s-1", app_name="capital_agent")
    store_event(session.id, "hi")
    prober = Prober(op)
    url = f"/sessions/{session.id}/evalcase/"
    for fields in (
        [("eval_set_id", NUL)],
        [("eval_set_id", "x" * 300)],
        [("eval_set_id", "")],
        [("eval_set_id", "ok"), ("eval_id", "y" * 300)],
    ):
        assert prober.post(url, fields).status_code == 400, fields
    assert EvalSetRecord.objects.count() == 0


def test_hostile_form_values_never_fail_the_pages(op: Client) -> None:
    upload(op, DOCS_EXAMPLE.read_bytes())
    record = EvalSetRecord.objects.get()
    prober = Prober(op)
    for value in (NUL, "a\ud800b", "x" * 300, "-1", "NaN", "1e999"):
        fields = [("agent_name", value), ("tool_trajectory_avg_score", value),
                  ("response_match_score", value)]  # fmt: skip
        assert prober.post(f"/evals/{record.pk}/run/", fields).status_code == 400
        assert prober.post("/evals/", [("agent_name", value)]).status_code == 400
    assert EvalRun.objects.count() == 0
