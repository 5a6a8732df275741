"""The README's guardrails walk-through, in Chromium on the offline model: a message the input
screen blocks, the decision on the session's Guardrails page, the policy edited (preview,
diff, save), the same message passing at the next step; and an answer's e-mail masked.

``AGENTDASH_SCREENSHOTS=<dir>`` saves the guardrails pages there (desktop and phone).
"""

from __future__ import annotations

import json
import re

import pytest

from tests.agentdash.dashboard.browser.harness import Browser, screenshot
from tests.agentdash.dashboard.browser.test_demos_offline import ANSWERS, LIVE_TIMEOUT, ask

pytestmark = [pytest.mark.browser, pytest.mark.slow]

MESSAGE = "My lawyer says the invoice INV-1002 is wrong"
REPLY = "I can't help with legal matters"


def answer(browser: Browser, text: str, containing: str) -> str:
    page = browser.page
    ask(browser, text)
    found = page.locator(ANSWERS, has_text=containing).last
    found.wait_for(timeout=LIVE_TIMEOUT)
    page.locator("#span-tree .span[data-state='running']").first.wait_for(
        state="detached", timeout=LIVE_TIMEOUT
    )
    return found.inner_text()


def test_block_edit_the_policy_and_the_next_step_passes(browser: Browser) -> None:
    page = browser.page
    browser.log_in("operator")
    browser.new_chat("support_desk")
    assert REPLY in answer(browser, MESSAGE, REPLY)
    session_url = page.url
    # The timeline marks the step; the row's badge says what the guardrail decided.
    blocked_row = page.locator("#span-tree .span-row", has_text="input-screen").last
    assert blocked_row.locator(".decision-blocked").inner_text() == "blocked"

    page.click("a.guardrails-link")
    page.wait_for_selector("table.decision-list")
    first = page.locator("table.decision-list tbody tr").first
    assert first.locator(".decision").inner_text() == "blocked"
    assert "the message matched blocked term 'lawyer'" in first.inner_text()
    assert "demo input screen@1" in first.inner_text()
    screenshot(browser, "guardrails-session.png")
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    screenshot(browser, "guardrails-session-phone.png")
    page.set_viewport_size({"width": 1440, "height": 900})

    page.click("text=All of support_desk's guardrails and policies")
    page.click("table.policy-list a:text-is('demo input screen')")
    config = json.loads(page.input_value("#id_config"))
    config["blocked_terms"].remove("lawyer")
    page.fill("#id_config", json.dumps(config, indent=2))
    page.fill("#id_reason", "lawyers may ask about their invoices")
    page.click("button[value=preview]")
    diff = page.locator(".preview table.policy-diff").inner_text()
    assert "blocked_terms" in diff and '"lawyer"' in diff
    screenshot(browser, "guardrails-policy-preview.png")
    page.click("button[value=save]")
    assert "Saved demo input screen as version 2." in page.locator(".notices").inner_text()
    history = page.locator(".policy-history li").first.inner_text()
    assert "Version 2" in history and "lawyers may ask about their invoices" in history

    page.goto(session_url)
    assert "75.50 EUR" in answer(browser, MESSAGE, "75.50 EUR")
    page.click("a.guardrails-link")
    page.select_option("select[name=decision]", "allowed")
    page.fill("input[name=guardrail]", "input-screen")
    page.click("form.session-filters button[type=submit]")
    latest = page.locator("table.decision-list tbody tr").first.inner_text()
    assert "demo input screen@2" in latest and "no blocked term or pattern matched" in latest
    browser.console.assert_clean()


def test_the_answers_e_mail_is_masked(browser: Browser) -> None:
    browser.log_in("alice")
    browser.new_chat("data_agent")
    shown = answer(browser, "List customer names and emails", "Alice Martin")
    assert "[e-mail redacted]" in shown and "alice@example.com" not in shown
    # run_query acts as the chatting user: its span says whom.
    page = browser.page
    page.locator("#span-tree .span[data-kind='tool']").last.locator(":scope > .span-row").click()
    facts = page.locator("#span-detail:not([hidden]) dl.facts[aria-label='tool']")
    facts.wait_for(timeout=LIVE_TIMEOUT)
    assert re.search(r"acts as\s*user \d+", facts.inner_text())
    browser.page.click("a.guardrails-link")
    row = browser.page.locator("table.decision-list tbody tr", has_text="output-redaction").first
    assert "masked 1 e-mail" in row.inner_text()
    browser.console.assert_clean()
