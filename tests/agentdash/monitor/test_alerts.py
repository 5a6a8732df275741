"""Alert rules against a real local webhook receiver: a rule fires while an agent fails and
resolves once it recovers, each posted once, signed with the shared secret; a receiver that is
down gets retries with backoff and the page shows the failure; pending before firing, one
event per change whoever checks, the waiting and cost metrics; the rule form's bad input,
who may see and change rules, the audit trail and the header's alert."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.db.models import F
from django.test import Client
from django.utils import timezone
from google.genai import types

from agentdash.agent_sessions.models import AgentSession
from agentdash.client.webhooks import EVENT_HEADER, SIGNATURE_HEADER, sign, verify
from agentdash.core.models import AuditEntry
from agentdash.monitor.alerts import alerts_check, alerts_forever, rule_check
from agentdash.monitor.models import AlertEvent, AlertRule
from agentdash.monitor.webhooks import deliveries_send, retry_delay_s
from agentdash.registry.loader import agents_cache_clear
from agentdash.runs.models import Run
from agentdash.runs.services import run_enqueue
from agentdash.runs.worker import run_execute
from agentdash.spans.models import ModelPrice
from agentdash.spans.services import span_upsert
from tests.agentdash.monitor import agents
from tests.agentdash.monitor.receiver import Post, receiver_serving
from tests.agentdash.stored import session_of

SECRET = "s3cret-for-the-receiver"


@pytest.fixture
def alerting(settings: Any) -> None:
    settings.AGENTDASH = {
        **settings.AGENTDASH,
        "ALERT_WEBHOOK_SECRET": SECRET,
        "ALERT_CHECK_S": 0.1,
        "ALERT_RETRY_BASE_S": 0.05,
        "ALERT_DELIVERY_ATTEMPTS": 3,
        "ALERT_WEBHOOK_TIMEOUT_S": 5.0,
    }


def rule_make(**fields: Any) -> AlertRule:
    values: dict[str, Any] = {
        "name": "errors", "metric": "error_rate", "threshold": 10.0, "window_s": 300,
        **fields,
    }  # fmt: skip
    return AlertRule.objects.create(**values)


def body_of(post: Post) -> dict[str, Any]:
    assert verify(SECRET, post.body, post.headers[SIGNATURE_HEADER.lower()])
    found: dict[str, Any] = json.loads(post.body)
    assert post.headers[EVENT_HEADER.lower()] == found["event_id"]
    assert post.headers["content-type"] == "application/json"
    assert post.headers["agentdash-event"] == found["type"]
    return found


def run_at(session: AgentSession, status: str, *, ago_s: float = 0) -> Run:
    at = timezone.now() - timedelta(seconds=ago_s)
    run = Run.objects.create(
        session=session, agent_name=session.app_name, invocation_id=f"e-{uuid.uuid4().hex}",
        status=status, message={}, started_at=at, finished_at=at + timedelta(seconds=1),
    )  # fmt: skip
    Run.objects.filter(pk=run.pk).update(created_at=at)
    return run


# -- fires while an agent fails, resolves once it recovers -----------------------------------


@pytest.mark.django_db(transaction=True)
async def test_a_rule_fires_while_an_agent_fails_and_resolves_once_it_recovers(
    settings: Any, alerting: None, recorder: Any, operator_user: User
) -> None:
    settings.AGENTDASH = {
        **settings.AGENTDASH,
        "AGENTS": [*settings.AGENTDASH["AGENTS"], f"{agents.__name__}:flaky_agent"],
    }
    agents_cache_clear()
    agents.FLAKY.failing = True
    session = await sync_to_async(session_of)(None, "s-flaky", "flaky_agent")
    message = types.Content(role="user", parts=[types.Part(text="hi")])

    async def turn() -> Run:
        run: Run = await sync_to_async(run_enqueue)(
            session=session, agent_name="flaky_agent", message=message, requested_by=None
        )
        await run_execute(run.pk, worker="w1")
        return await Run.objects.aget(pk=run.pk)

    with receiver_serving() as receiver:
        rule = await sync_to_async(rule_make)(
            name="flaky errors", agent="flaky_agent", webhook_url=receiver.url
        )
        checking = asyncio.create_task(alerts_forever())
        try:
            assert [(await turn()).status for _ in range(3)] == ["failed"] * 3
            [fired] = await asyncio.to_thread(receiver.wait_for, 1)
            body = body_of(fired)
            assert body["type"] == "alert.firing"
            assert body["value"] == 100.0
            assert body["rule"]["name"] == "flaky errors"
            assert body["rule"]["filters"] == {"agent": "flaky_agent"}
            assert body["links"]["monitor"].endswith("/monitor/?range=1h&agent=flaky_agent")

            client = Client()
            await sync_to_async(client.force_login)(operator_user)
            page = await sync_to_async(client.get)("/monitor/")
            assert b'aria-label="1 alert firing"' in page.content

            # It recovers (half the window's runs failed: still firing); then the failures
            # are older than the window.
            agents.FLAKY.failing = False
            assert [(await turn()).status for _ in range(3)] == ["succeeded"] * 3
            await Run.objects.filter(session=session, status="failed").aupdate(
                created_at=F("created_at") - timedelta(minutes=10)
            )
            posts = await asyncio.to_thread(receiver.wait_for, 2)
        finally:
            checking.cancel()
            await asyncio.gather(checking, return_exceptions=True)
    resolved = body_of(posts[1])
    assert resolved["type"] == "alert.resolved"
    assert resolved["value"] == 0.0
    assert resolved["event_id"] != body["event_id"]
    assert len(posts) == 2  # one post each: checked every 0.1 s, fired and resolved once
    stored = await AlertRule.objects.aget(pk=rule.pk)
    assert stored.state == AlertRule.State.OK
    kinds = [e.kind async for e in AlertEvent.objects.order_by("at")]
    assert kinds == ["firing", "resolved"]
    assert {e.delivery async for e in AlertEvent.objects.all()} == {"delivered"}
    page = await sync_to_async(client.get)("/monitor/")
    assert b'class="alert-badge"' not in page.content


# -- deliveries: retries, backoff, failure shown, sent again -----------------------------------


@pytest.mark.django_db
def test_a_receiver_that_is_down_gets_retries_and_the_rule_shows_the_failure(
    alerting: None, bob: User, operator_user: User
) -> None:
    with receiver_serving() as gone:
        port, url = gone.port, gone.url
    rule = rule_make(name="bob's errors", owner="bob", webhook_url=url)
    run_at(session_of(bob, "s-bob", "support_agent"), "failed")
    [event] = alerts_check()
    assert event.kind == "firing" and event.delivery == "pending"

    schedule = []
    for attempt in range(1, 4):
        before = timezone.now()
        assert deliveries_send(now=before + timedelta(hours=1)) == 0
        event.refresh_from_db()
        assert event.attempts == attempt
        assert "could not reach the receiver" in event.last_error
        if attempt < 3:
            schedule.append(event.next_attempt_at - before)
    assert schedule[0] >= timedelta(seconds=retry_delay_s(1))
    assert schedule[1] >= timedelta(seconds=retry_delay_s(2)) > timedelta(seconds=retry_delay_s(1))
    assert event.delivery == "failed" and event.next_attempt_at is None
    assert event.last_error.endswith("(after 3 attempts)")
    assert deliveries_send(now=timezone.now() + timedelta(hours=1)) == 0  # given up

    client = Client()
    client.force_login(operator_user)
    page = client.get("/monitor/alerts/").content.decode()
    assert f'id="rule-{rule.pk}" data-rule="bob&#x27;s errors" data-state="firing"' in page
    assert "failed: no more attempts" in page and "(after 3 attempts)" in page
    listed = client.get("/monitor/alerts.json").json()
    assert listed["rules"][0]["last_event"]["delivery"] == "failed"

    # The receiver comes back; an operator sends it again: the same event, delivered.
    with receiver_serving(port) as back:
        assert client.post(f"/monitor/alert-events/{event.pk}/retry").status_code == 302
        assert deliveries_send() == 1
        [post] = back.posts
    assert body_of(post)["event_id"] == str(event.event_id)
    event.refresh_from_db()
    assert event.delivery == "delivered" and event.last_error == ""
    assert client.post(f"/monitor/alert-events/{event.pk}/retry").status_code == 409
    assert AuditEntry.objects.filter(action="alert_delivery.retry", actor=operator_user).exists()


@pytest.mark.django_db
def test_every_attempt_sends_the_same_signed_event_until_a_2xx(alerting: None, bob: User) -> None:
    with receiver_serving() as receiver:
        receiver.answers = [500, 302]  # a redirect is not followed: it is no 2xx
        rule_make(webhook_url=receiver.url)
        run_at(session_of(bob, "s-bob", "support_agent"), "failed")
        [event] = alerts_check()
        for _ in range(3):
            deliveries_send(now=timezone.now() + timedelta(hours=1))
        posts = receiver.posts
    assert [body_of(p)["event_id"] for p in posts] == [str(event.event_id)] * 3
    assert len({p.body for p in posts}) == 1
    event.refresh_from_db()
    assert (event.delivery, event.attempts) == ("delivered", 3)


def test_the_signature_verifies_only_the_body_and_time_signed_with_the_secret() -> None:
    body = b'{"type":"alert.firing"}'
    now = time.time()
    header = sign(SECRET, body, timestamp=int(now))
    assert verify(SECRET, body, header, now=now)
    assert not verify(SECRET, body + b" ", header, now=now)
    assert not verify("another secret", body, header, now=now)
    assert not verify(SECRET, body, header, now=now + 301)  # replayed later
    assert not verify("", body, header, now=now)
    for broken in ("", "t=,v1=", "v1=abc", "t=x,v1=" + "0" * 64, "t=1\x00,v1=", ","):
        assert not verify(SECRET, body, broken, now=now)


# -- states: pending, once per change, metrics ------------------------------------------------


@pytest.mark.django_db
def test_a_rule_with_a_for_duration_is_pending_first_and_fires_once_it_held(bob: User) -> None:
    rule = rule_make(for_s=120)
    run_at(session_of(bob, "s-bob", "support_agent"), "failed")
    now = timezone.now()
    assert alerts_check(now=now, force=True) == []
    rule.refresh_from_db()
    assert rule.state == "pending" and rule.value == 100.0
    assert alerts_check(now=now + timedelta(seconds=60), force=True) == []
    [event] = alerts_check(now=now + timedelta(seconds=121), force=True)
    assert event.kind == "firing" and event.body["since"] == now.isoformat()
    assert event.delivery == "none"  # no webhook: listed, audited, in the header


@pytest.mark.django_db
def test_one_event_per_change_however_many_check(bob: User) -> None:
    rule = rule_make()
    run_at(session_of(bob, "s-bob", "support_agent"), "failed")
    stale = AlertRule.objects.get(pk=rule.pk)  # read by a second process before the first moved
    assert rule_check(rule, now=timezone.now()) is not None
    assert rule_check(stale, now=timezone.now()) is None
    assert alerts_check(force=True) == []  # still firing: nothing new
    assert AlertEvent.objects.count() == 1
    assert AuditEntry.objects.filter(action="alert.firing", target_id=str(rule.pk)).count() == 1
    # Checked by this process this period: another that looks now leaves it.
    assert alerts_check() == [] and alerts_check() == []


@pytest.mark.django_db
def test_a_run_waiting_for_approval_too_long_fires(bob: User) -> None:
    rule = rule_make(name="waits", metric="waiting_minutes", threshold=15, agent="support_agent")
    session = session_of(bob, "s-bob", "support_agent")
    waiting = run_at(session, "waiting", ago_s=10 * 60)
    assert alerts_check(force=True) == []
    rule.refresh_from_db()
    assert 9.9 < (rule.value or 0) < 11
    Run.objects.filter(pk=waiting.pk).update(finished_at=F("finished_at") - timedelta(minutes=6))
    [event] = alerts_check(force=True)
    assert event.kind == "firing" and event.value is not None and event.value > 15
    Run.objects.filter(pk=waiting.pk).update(status="succeeded")  # answered, ran on
    [event] = alerts_check(force=True)
    assert event.kind == "resolved" and event.value is None


@pytest.mark.django_db
def test_cost_over_the_window_fires_priced_by_the_price_table(bob: User) -> None:
    ModelPrice.objects.create(
        model="gemini-x",
        input_per_mtok=Decimal("2"),
        output_per_mtok=Decimal("10"),
        as_of=date(2026, 1, 1),
    )
    rule_make(name="spend", metric="cost_usd", threshold=1.5, window_s=3600)
    session = session_of(bob, "s-bob", "support_agent")
    start = time.time_ns() - 60 * 10**9
    for n, tokens_in in enumerate((500_000, 300_000)):
        span_upsert(
            trace_id=f"{n + 1:032x}", span_id=f"{n + 1:016x}", name="model", start_time=start,
            end_time=start + 10**9, session_id=session.pk, status="ok",
            attributes={"agentdash.span.kind": "model", "gen_ai.request.model": "gemini-x",
                        "gen_ai.usage.input_tokens": tokens_in,
                        "gen_ai.usage.output_tokens": 10_000},
        )  # fmt: skip
    [event] = alerts_check(force=True)
    assert event.value == pytest.approx(0.8 * 2 + 0.02 * 10)  # $1.80


# -- rules: the form, who may, the audit trail, the header ---------------------------------------


@pytest.mark.django_db
def test_operators_define_change_and_delete_rules_audited(
    settings: Any, operator_user: User, bob: User
) -> None:
    settings.AGENTDASH = {**settings.AGENTDASH, "ALERT_WEBHOOK_SECRET": SECRET}
    client = Client()
    client.force_login(operator_user)
    form = {"name": "slow tools", "metric": "tool_p95_s", "comparison": "above",
            "threshold": "2.5", "window_s": "600", "for_s": "0", "tool": "lookup_order",
            "webhook_url": "https://hooks.example.com/a", "enabled": "on"}  # fmt: skip
    assert client.post("/monitor/alerts/", form).status_code == 302
    rule = AlertRule.objects.get(name="slow tools")
    assert (rule.threshold, rule.window_s, rule.tool) == (2.5, 600, "lookup_order")
    page = client.get("/monitor/alerts/").content.decode()
    assert "tool-call latency, p95 above 2.5 s over the last 10 min" in page
    assert client.get(f"/monitor/alerts/?edit={rule.pk}").status_code == 200

    # Firing, then turned off: it resolves at once, saying why.
    run_at(session_of(bob, "s-bob", "support_agent"), "failed")
    AlertRule.objects.filter(pk=rule.pk).update(state="firing", state_since=timezone.now())
    changed = {**form, "enabled": ""}
    assert client.post(f"/monitor/alerts/{rule.pk}/", changed).status_code == 302
    rule.refresh_from_db()
    assert (rule.enabled, rule.state) == (False, "ok")
    [event] = AlertEvent.objects.all()
    assert (event.kind, event.body["reason"]) == ("resolved", "the rule was turned off")

    assert client.post(f"/monitor/alerts/{rule.pk}/delete").status_code == 302
    assert not AlertRule.objects.exists()
    assert AlertEvent.objects.get().rule_name == "slow tools"  # events outlive their rule
    actions = list(
        AuditEntry.objects.filter(target_type="monitor.alertrule")
        .order_by("id")
        .values_list("action", "actor__username")
    )
    assert actions == [
        ("alert_rule.create", operator_user.username),
        ("alert.resolved", None),
        ("alert_rule.change", operator_user.username),
        ("alert_rule.delete", operator_user.username),
    ]


BAD_FORMS = [
    ({"window_s": "10"}, "window_s", "A window of 60 s"),
    ({"window_s": str(10**12)}, "window_s", ""),
    ({"threshold": "nan"}, "threshold", ""),
    ({"threshold": "1e999"}, "threshold", ""),
    ({"threshold": "150"}, "threshold", "A percentage: 0 to 100."),
    ({"metric": "vibes"}, "metric", "Select a valid choice."),
    ({"source": "mars"}, "source", "Select a valid choice."),
    ({"for_s": "-5"}, "for_s", ""),
    ({"name": "   "}, "name", ""),
    ({"name": "x" * 500}, "name", ""),
    ({"webhook_url": "ftp://example.com/x"}, "webhook_url", "http or https"),
    ({"webhook_url": "javascript:alert(1)"}, "webhook_url", ""),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("change", "field", "says"), BAD_FORMS)
def test_a_bad_rule_gets_a_400_naming_the_field_and_saves_nothing(
    settings: Any, operator_user: User, change: dict[str, str], field: str, says: str
) -> None:
    settings.AGENTDASH = {**settings.AGENTDASH, "ALERT_WEBHOOK_SECRET": SECRET}
    client = Client()
    client.force_login(operator_user)
    form = {"name": "r", "metric": "error_rate", "comparison": "above", "threshold": "10",
            "window_s": "300", "for_s": "0", **change}  # fmt: skip
    answer = client.post("/monitor/alerts/", form)
    assert answer.status_code == 400
    page = answer.content.decode()
    assert f'name="{field}"' in page and 'class="has-error"' in page and says in page
    assert not AlertRule.objects.exists()


@pytest.mark.django_db
def test_a_webhook_needs_the_shared_secret_first(operator_user: User) -> None:
    client = Client()
    client.force_login(operator_user)
    form = {"name": "r", "metric": "runs", "comparison": "below", "threshold": "1",
            "window_s": "3600", "for_s": "0", "webhook_url": "http://127.0.0.1:9/x"}  # fmt: skip
    answer = client.post("/monitor/alerts/", form)
    assert answer.status_code == 400
    assert b"Set AGENTDASH_ALERT_WEBHOOK_SECRET first" in answer.content


@pytest.mark.django_db
def test_only_operators_see_or_change_rules_and_only_they_see_the_header_alert(
    alice: User, operator_user: User
) -> None:
    rule = rule_make(state="firing", state_since=timezone.now())
    anonymous = Client()
    for path in ("/monitor/alerts/", "/monitor/alerts.json"):
        assert anonymous.get(path).status_code == 302
    assert anonymous.post(f"/monitor/alerts/{rule.pk}/delete").status_code == 302
    user = Client()
    user.force_login(alice)
    for path in ("/monitor/alerts/", "/monitor/alerts.json"):
        assert user.get(path).status_code == 403
    for path in (f"/monitor/alerts/{rule.pk}/delete", f"/monitor/alerts/{rule.pk}/check",
                 "/monitor/alerts/", f"/monitor/alerts/{rule.pk}/"):  # fmt: skip
        assert user.post(path, {"name": "mine"}).status_code == 403
    assert b'class="alert-badge"' not in user.get("/monitor/").content
    assert AlertRule.objects.filter(pk=rule.pk).exists()
    operator = Client()
    operator.force_login(operator_user)
    assert b'aria-label="1 alert firing"' in operator.get("/monitor/").content
    for bad in ("999999", "x" * 300, "1e9", "-1"):
        assert operator.post(f"/monitor/alerts/{bad}/delete").status_code == 404
        assert operator.post(f"/monitor/alert-events/{bad}/retry").status_code == 404
    assert operator.get("/monitor/alerts/?edit=nope").status_code == 200
