"""What a hostile client sends, and a client that turns any 500 into a test failure.

Used by tests/agentdash/test_hostile_http.py and test_hostile_admin.py. Strings go on the
wire as a client could send them: UTF-8 with lone surrogates passed through
(``%ED%A0%80``), which Django's own test client refuses to encode.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.http import HttpResponse
from django.test import Client
from django.utils import timezone
from google.genai import types

NUL = "a\x00b"
SURROGATE = "a\ud800b"  # on the wire: a%ED%A0%80b; Django decodes it to U+FFFD
DEEP_JSON = "[" * 1000 + "]" * 1000
HOSTILE_JSON = {
    "1,000 levels deep": DEEP_JSON,
    "an escaped NUL": '{"k": "\\u0000"}',
    "an escaped lone surrogate": '["\\ud800"]',
    "an escaped NUL in a key": '{"\\u0000": 1}',
    "an infinite number": "1e999",
    "NaN": "NaN",
    "an integer of 5,000 digits": "1" * 5000,
}
# Ids and values that cannot be what a URL or a filter wants.
JUNK_IDS = ("_00", "%00", "x" * 300, "..", "a%2Fb", "%ED%A0%80", "9" * 30, "-1", "abc", "_5F")
JUNK_VALUES = (NUL, SURROGATE, "x" * 300, "abc", "9" * 30, "9999", "-1", "2024-13-45")

FormData = Sequence[tuple[str, str]]


def encode(fields: Iterable[tuple[str, Any]]) -> str:
    """``fields`` urlencoded as UTF-8, lone surrogates included."""
    return urlencode(list(fields), doseq=True, encoding="utf-8", errors="surrogatepass")


class Prober:
    """A test client whose requests fail the test on any 5xx or exception, naming the request."""

    def __init__(self, client: Client | None = None) -> None:
        self.client = client or Client()

    def get(self, path: str, query: FormData = ()) -> HttpResponse:
        url = f"{path}?{encode(query)}" if query else path
        return self._send("GET", url, lambda: self.client.get(url))

    def post(self, path: str, fields: FormData = ()) -> HttpResponse:
        body = encode(fields)
        return self._send(
            "POST",
            f"{path} {body[:200]}",
            lambda: self.client.post(
                path, data=body, content_type="application/x-www-form-urlencoded"
            ),
        )

    @staticmethod
    def _send(method: str, what: str, send: Any) -> HttpResponse:
        try:
            response: HttpResponse = send()
        except Exception as exc:  # the view raised: it would have been a 500
            raise AssertionError(f"{method} {what[:300]!r} raised {exc!r}") from exc
        assert response.status_code < 500, f"{method} {what[:300]!r}: {response.status_code}"
        return response


def assert_refused_naming(response: HttpResponse, name: str) -> None:
    """A 400 from the input-hygiene middleware that names ``name``."""
    assert response.status_code == 400, response.status_code
    assert f"'{name}'" in response.content.decode(), response.content


def form_fields_of(form: forms.BaseForm) -> FormData:
    """What submitting ``form`` as shown sends (its current values; disabled fields left
    out), as a browser would encode it."""
    data: list[tuple[str, str]] = []
    for bound in form:
        field, widget = bound.field, bound.field.widget
        if field.disabled or isinstance(field, forms.FileField):
            continue
        value = bound.value()
        if isinstance(widget, forms.MultiWidget):
            parts = widget.decompress(value) if not isinstance(value, list) else value
            for suffix, part in zip(widget.widgets_names, parts, strict=False):
                data.append((bound.html_name + suffix, "" if part is None else str(part)))
        elif isinstance(widget, forms.CheckboxInput):
            if value:
                data.append((bound.html_name, "on"))
        elif isinstance(value, (list, tuple)):
            data.extend((bound.html_name, str(v)) for v in value)
        elif value is not None:
            data.append((bound.html_name, str(value)))
    return data


def replaced(data: FormData, name: str, value: str) -> list[tuple[str, str]]:
    """``data`` with every value of ``name`` replaced by one ``value``."""
    return [(k, v) for k, v in data if k != name] + [(name, value)]


def world_make(owner: Any) -> None:
    """At least one row of every model the admin shows, written through the services (the
    executor must be the test's recorder: the run is queued, never executed)."""
    from agentdash.agent_sessions.external import external_session_ensure
    from agentdash.agent_sessions.services import session_create
    from agentdash.controls.breakpoints import breakpoint_add
    from agentdash.controls.services import callback_setting_set, policy_create
    from agentdash.ingest.keys import ingest_key_create
    from agentdash.ingest.services import session_id_for
    from agentdash.instructions.services import instruction_save
    from agentdash.monitor.alerts import rule_check
    from agentdash.monitor.models import AlertRule
    from agentdash.monitor.services import rule_save
    from agentdash.registry.services import agents_mirror
    from agentdash.remote.pauses import pauses_record
    from agentdash.remote.services import remote_process_register
    from agentdash.runs.services import run_enqueue
    from agentdash.scores.models import Evaluation, EvaluatorRule, ScoreDefinition
    from agentdash.scores.rules import evaluator_rule_save
    from agentdash.scores.services import ScoreGiven, definition_save, score_record
    from agentdash.spans.prices import model_price_set
    from agentdash.spans.services import span_upsert
    from agentdash.spans.sources import Source, sources_ensure
    from tests.agentdash.stored import store_event

    agents_mirror()
    session = session_create(
        app_name="capital_agent",
        user_id=str(owner.pk),
        owner=owner,
        state={"k": 1, "user:tier": "gold", "app:region": "eu"},
        actor=owner,
    )
    store_event(session.id)
    span_upsert(
        trace_id="a" * 32, span_id="1" * 16, name="invoke_agent", start_time=1,
        session_id=session.id,
    )  # fmt: skip
    message = types.Content(role="user", parts=[types.Part(text="hi")])
    run = run_enqueue(session=session, agent_name="capital_agent", message=message,
                      requested_by=owner)  # fmt: skip
    policy_create(
        name="orders only", kind="query", config={"tables": ["orders"]}, agents=["data_agent"],
        actor=owner, reason="hostile tests",
    )  # fmt: skip
    breakpoint_add(
        agent_name="capital_agent", kind="before_tool", tool_name="get_capital",
        session_id=session.id, actor=owner,
    )  # fmt: skip
    key, _ = ingest_key_create(name="hostile tests", project="elsewhere", owner=owner, actor=owner)
    process = remote_process_register(
        key=key, host="elsewhere", pid=42, versions={"google-adk": "2.13.0"},
        agents=[{"name": "capitals", "callbacks": [{"slot": "before_model", "name": "f"}]}],
        root_agent="capitals",
    )  # fmt: skip
    external_session_ensure(
        session_id=session_id_for(key, "paused"), app_name="elsewhere", owner_id=owner.pk,
        title="paused elsewhere", first_message="",
    )  # fmt: skip
    pauses_record(process=process, pauses=[
        {"id": "breakpoint:c1", "session": "paused", "kind": "breakpoint", "tool": "t"},
    ])  # fmt: skip
    sources_ensure(sources=[Source(resource={"service.name": "elsewhere"}, scope_name="tests")])
    # A price of its own: the migrations' rows are gone after any transactional test's flush.
    model_price_set(
        model="hostile-tests-model", input_per_mtok=Decimal("1.5"), output_per_mtok=Decimal("3"),
        as_of=date(2026, 1, 1), source="hostile tests", actor=owner,
    )  # fmt: skip
    rule = AlertRule(name="hostile tests", metric="runs", comparison="below", threshold=1000)
    rule_save(rule=rule, actor=owner)
    rule_check(rule, now=timezone.now())  # fewer runs than that: it fires (an event)
    definition_save(definition=ScoreDefinition(name="helpful-hostile", kind="boolean"),
                    actor=owner)  # fmt: skip
    judged = ScoreDefinition(name="hostile-failure", kind="category",
                             categories=["wrong tool", "<b>bold</b>"])  # fmt: skip
    definition_save(definition=judged, actor=owner)
    score_record(session=session, given=ScoreGiven("hostile-failure", "<b>bold</b>",
                 comment="<script>alert(1)</script>"), source="person", actor=owner)  # fmt: skip
    rule = evaluator_rule_save(rule=EvaluatorRule(name="hostile-judge", evaluator="regex",
                     config={"pattern": "<script>"}, definition=ScoreDefinition.objects.get(
                         name="helpful-hostile")), actor=owner)  # fmt: skip
    # What an evaluation says is a model's or a check's text: made as the worker makes it.
    Evaluation.objects.create(
        rule=rule, run=run, session=session, status="failed",
        error="<img src=x onerror=alert(1)>", judge_model="offline",
    )  # fmt: skip
    instruction_save(agent_name="analyst", text="<img src=x onerror=alert(1)> {user:name?}",
                     reason="<b>why</b>", actor=owner, expected_version=0)  # fmt: skip
    for scope in (None, session.id):
        callback_setting_set(
            agent_name="capital_agent", callback_name="add_disclaimer", enabled=False,
            session_id=scope, actor=owner,
        )  # fmt: skip
