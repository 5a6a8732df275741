"""An online LLM judge in a real browser (docs/SCORES.md): with a rule on every analyst run
(the offline judge), a chat's answer is judged in the worker — the evaluations page lists
it with the judge's tokens, apart from the agent's, and a link to the judge's own session;
the score is the run's, shown in its session's span details."""

from __future__ import annotations

import pytest

from tests.agentdash.dashboard.browser.harness import Browser, LiveServer, screenshot
from tests.agentdash.live_harness import manage

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LIVE_TIMEOUT = 15_000
RULE = """
from django.contrib.auth.models import User
from agentdash.scores.models import EvaluatorRule, ScoreDefinition
from agentdash.scores.rules import evaluator_rule_save
judged, _ = ScoreDefinition.objects.get_or_create(name="analyst-helpful",
                                                  defaults={"kind": "boolean"})
if not EvaluatorRule.objects.filter(name="analyst-judge").exists():
    evaluator_rule_save(rule=EvaluatorRule(name="analyst-judge", evaluator="llm_judge",
        agent_name="analyst", config={"model": "offline"}, definition=judged),
        actor=User.objects.get(username="operator"))
"""


def test_an_online_judge_scores_a_run_and_its_cost_shows_apart(
    browser: Browser, phone: Browser, agentdash_server: LiveServer
) -> None:
    manage(agentdash_server.env, "shell", "-c", RULE)
    browser.log_in("operator")
    session = browser.new_chat("analyst", first="hello judge")
    page = browser.page
    page.locator(".msg-agent", has_text="My instructions:").last.wait_for(timeout=LIVE_TIMEOUT)

    # The worker judges after the run: wait until the page (read over HTTP) says so — in this
    # rule's own row (the server is shared: other modules' rules, on any agent, score this
    # run too and are listed beside it).
    page.wait_for_function(
        """async () => {
          const page = await (await fetch("/evaluations/")).text();
          const row = /data-rule="analyst-judge"[\\s\\S]*?<\\/tr>/.exec(page);
          return row !== null && /rule-scored">1</.test(row[0]);
        }""",
        timeout=LIVE_TIMEOUT * 2,
    )
    browser.goto("/evaluations/")
    row = page.locator("tr[data-rule=analyst-judge]")
    assert row.locator(".rule-scored").inner_text() == "1"
    assert "→" in row.locator(".rule-cost").inner_text()  # the judge's own tokens
    evaluation = page.locator("tr.evaluation[data-status=scored]", has_text="analyst-judge").first
    assert "analyst-helpful yes" in evaluation.inner_text()
    assert "Offline judge" in evaluation.inner_text()
    screenshot(browser, "evaluations.png")
    phone.log_in("operator")
    phone.goto("/evaluations/")
    screenshot(phone, "evaluations-phone.png")

    with page.expect_navigation():
        evaluation.locator("a", has_text="its session").click()
    page.locator(".msg-agent", has_text='"value": true').last.wait_for(timeout=LIVE_TIMEOUT)

    browser.goto(session)  # the run's own session: the score, by the evaluator
    page.wait_for_selector("#span-tree[data-complete='true']", timeout=LIVE_TIMEOUT)
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("s")
    given = page.locator("#span-detail .score-item[data-score-name=analyst-helpful]")
    given.wait_for(timeout=LIVE_TIMEOUT)
    assert "evaluator:analyst-judge (evaluator)" in given.inner_text()
    browser.console.assert_clean()
    phone.console.assert_clean()
