"""An annotation queue of 20 runs reviewed end to end in a real browser (docs/SCORES.md): an
operator makes a queue, fills it from a filter (the data agent's runs of the week), and goes
through it by keys — `1`/`2` give the score, `n` moves on, `x` skips one —; the queue's page
then says who reviewed what and the scores given."""

from __future__ import annotations

import pytest

from tests.agentdash.dashboard.browser.harness import Browser, LiveServer, screenshot
from tests.agentdash.live_harness import manage

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RUNS = 20
MAKE = """
import uuid
from django.contrib.auth.models import User
from agentdash.agent_sessions.services import session_create, session_first_message_record
from agentdash.runs.models import Run
from agentdash.scores.models import ScoreDefinition
from tests.agentdash.stored import store_event

ScoreDefinition.objects.get_or_create(name="correct", defaults={"kind": "boolean"})
owner, _ = User.objects.get_or_create(username="queue-owner")
for n in range({runs}):
    session = session_create(app_name="data_agent", user_id=str(owner.pk), owner=owner)
    session_first_message_record(session_id=session.id, text=f"How many orders in week {n}?")
    run = Run.objects.create(session=session, agent_name="data_agent", status="succeeded",
                             message={}, invocation_id=f"e-{uuid.uuid4().hex}")
    store_event(session.id, f"How many orders in week {n}?", invocation_id=run.invocation_id)
    store_event(session.id, f"<b>{n * 7}</b> orders", author="data_agent",
                invocation_id=run.invocation_id)
""".replace("{runs}", str(RUNS))


def test_a_queue_of_twenty_runs_is_reviewed_end_to_end_by_keys(
    browser: Browser, phone: Browser, agentdash_server: LiveServer
) -> None:
    manage(agentdash_server.env, "shell", "-c", MAKE)
    browser.log_in("operator")
    page = browser.page
    browser.goto("/queues/")
    page.fill("#q-name", "orders-week")
    page.fill("#q-description", "Are the order counts right?")
    page.check("input[name=definitions][value=correct]")
    with page.expect_navigation():
        page.click("button:has-text('Make the queue')")
    page.select_option("select[name=agent]", "data_agent")
    page.fill("input[name=limit]", str(RUNS))
    with page.expect_navigation():
        page.click("button:has-text('Add these runs')")
    assert page.locator(".notice").inner_text() == f"Added {RUNS} runs."
    assert page.locator("tr.queue-item").count() == RUNS

    with page.expect_navigation():
        page.click("a.pill:has-text('Review')")
    for n in range(RUNS):
        row = page.locator(".score-row[data-score-name=correct]")
        row.locator("button.score-choice").first.wait_for()
        assert page.locator(".review-turns li[data-author=data_agent]").count() == 1
        assert "<b>" in page.locator(".review-turns").inner_text()  # model text, as text
        if n == 5:
            with page.expect_navigation():
                page.keyboard.press("x")  # skipped: no score
            continue
        page.wait_for_function(
            "document.activeElement && document.activeElement.dataset.choice === 'yes'"
        )
        page.keyboard.press("1" if n % 4 else "2")
        wanted = "yes" if n % 4 else "no"
        row.locator(f"button[data-choice={wanted}][aria-pressed=true]").wait_for()
        if n == 3:
            screenshot(browser, "queue-review.png")
        with page.expect_navigation():
            page.keyboard.press("n")
    assert page.locator("h2", has_text="All reviewed").is_visible()

    browser.goto("/queues/orders-week/")
    assert page.locator("#queue-progress").inner_text() == f"{RUNS - 1} of {RUNS} done, 1 skipped"
    statuses = page.locator("tr.queue-item").evaluate_all(
        "rows => rows.map((r) => r.dataset.status)"
    )
    assert statuses.count("done") == RUNS - 1 and statuses.count("skipped") == 1
    given = page.locator("tr.queue-item[data-status=done] td[data-label=Scores]").all_inner_texts()
    assert len(given) == RUNS - 1 and all("(operator)" in g for g in given)
    assert sum("no" in g for g in given) == 5  # n = 0, 4, 8, 12, 16
    screenshot(browser, "queue.png")
    phone.log_in("operator")
    phone.goto("/queues/orders-week/")
    screenshot(phone, "queue-phone.png")
    browser.console.assert_clean()
    phone.console.assert_clean()
